"""What actors write into Reverb: overlapping sequences of steps (IMPALA) or N-step
transitions with initial priorities (Ape-X)."""
import collections
import itertools
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import reverb
import tree

from agents.core import steps
from agents.ops import replay
from agents.ops import value_learning


PriorityFn = Callable[[Sequence[Mapping[str, Any]]], float]


def constant_priority(value: float = 1.0) -> PriorityFn:
    """Every sequence gets `value` (queues and uniform tables ignore priorities)."""
    return lambda sequence: value


class SequenceAdder:
    """Writes the last `length` steps as one item every `period` steps, into every table of
    `priorities` (table name -> function of the sequence's steps giving its priority).

    IMPALA (sec. 3) uses length T+1 and period T: consecutive unrolls share one step, so the
    learner bootstraps from the last step's value and learns from every transition exactly once.
    Sequences run across episode boundaries; the per-step discount marks where episodes end
    (and, in recurrent steps, `first` where they start). A recurrent policy's `core_state` is
    stored once per item, from the sequence's first step (agents/core/steps.py). A table
    named in `columns` gets items of those step fields only (e.g. a rate-limiting table).
    """

    def __init__(self, client: reverb.Client, priorities: Mapping[str, PriorityFn],
                 length: int, period: int, max_in_flight_items: int = 2,
                 columns: Mapping[str, Sequence[str]] | None = None):
        if not 1 <= period <= length:
            raise ValueError(f'need 1 <= period <= length, got period={period}, length={length}')
        if not priorities:
            raise ValueError('a SequenceAdder needs at least one table')
        self._writer = client.trajectory_writer(num_keep_alive_refs=length)
        self._priorities = dict(priorities)
        self._columns = dict(columns or {})
        self._length = length
        self._period = period
        self._max_in_flight = max_in_flight_items
        self._steps = collections.deque(maxlen=length)
        self._num_steps = 0

    def add(self, step: Mapping[str, Any]) -> None:
        self._writer.append(step)
        self._steps.append(step)
        self._num_steps += 1
        if (self._num_steps >= self._length
                and (self._num_steps - self._length) % self._period == 0):
            history = dict(self._writer.history)
            state = history.pop(steps.CORE_STATE, None)
            trajectory = tree.map_structure(lambda column: column[-self._length:], history)
            if state is not None:
                trajectory[steps.CORE_STATE] = tree.map_structure(
                    lambda column: column[-self._length], state)
            for table, priority in self._priorities.items():
                fields = self._columns.get(table)
                self._writer.create_item(
                    table, priority=float(priority(self._steps)),
                    trajectory=(trajectory if fields is None
                                else {name: trajectory[name] for name in fields}))
            # Blocks while a table is full: the learner's pace throttles the actors.
            self._writer.flush(block_until_num_items=self._max_in_flight)

    def close(self) -> None:
        """Sends every pending item, then closes the stream."""
        self._writer.flush()
        self._writer.close()


class NStepTransitionAdder:
    """Turns the actor's step stream into N-step transitions with initial priorities (Ape-X).

    Each written item holds o_t, a_t, the N rewards R_{t+1..t+N} (clipped to [-reward_clip,
    reward_clip] if set), the N per-step discounts with gamma included, and o_{t+N}. Where the
    episode ends inside the N steps the transition is shorter, padded with reward 0 and:
      * termination (discount 0 from the environment): discount 0 at the last step, so the
        target does not bootstrap;
      * time-limit cut (the actor's extra mask-0 step, agents/core/actor.py): padding discount
        1, and o_{t+N} is the final observation, so the target bootstraps from it with gamma^m
        for the m steps that were left (docs/fidelity.md, "time limits").

    Initial priorities are |G_t - q_t| from the actor's own values (Ape-X sec. 3, appendix F):
    each step must carry the extras `q_value` (q(o_t, a_t)) and `bootstrap_value` (the value of
    o_t the target uses: max_a q(o_t, a) for DQN, q(o_t, pi(o_t)) for DPG). The mask-0 step
    after a time-limit cut carries zeros there (the actor does not evaluate the final
    observation), so those few transitions start with a priority that bootstraps from 0 until
    the learner first samples them. Transitions wait in a local buffer and are sent, priorities
    computed in one batch, `batch_size` at a time (sec. 4.1: B = 50).
    """

    def __init__(self, client: reverb.Client, table: str, n_step: int, discount: float,
                 batch_size: int, reward_clip: float | None = None):
        if n_step < 1 or batch_size < 1:
            raise ValueError(f'need n_step >= 1 and batch_size >= 1, got {n_step}, '
                             f'{batch_size}')
        self._writer = client.trajectory_writer(num_keep_alive_refs=batch_size)
        self._table = table
        self._n = n_step
        self._discount = np.float32(discount)
        self._batch_size = batch_size
        self._reward_clip = reward_clip
        self._episode = collections.deque()   # steps of the current episode not yet written
        self._pending = []                     # finished transitions waiting to be sent

    def add(self, step: Mapping[str, np.ndarray]) -> None:
        if steps.CORE_STATE in step:
            raise ValueError('N-step transitions cannot hold a recurrent core state: a '
                             'recurrent policy needs a SequenceAdder')
        if step['mask'] == 0:                  # the final observation of a time-limit cut
            while self._episode:
                self._finish(bootstrap=step)
            return
        self._episode.append(step)
        if step['discount'] == 0:
            # Termination: the transitions that reach this step end there (discount 0); the
            # one that is N steps older still bootstraps from this step's observation.
            while self._episode:
                self._finish(bootstrap=step)
        elif len(self._episode) == self._n + 1:
            self._finish(bootstrap=step)

    def _finish(self, bootstrap: Mapping[str, np.ndarray]) -> None:
        """Writes the transition of the oldest buffered step over at most N buffered steps."""
        steps = list(itertools.islice(self._episode, self._n))
        first = self._episode.popleft()
        rewards = np.zeros(self._n, np.float32)
        discounts = np.ones(self._n, np.float32)
        for k, s in enumerate(steps):
            rewards[k] = s['reward']
            discounts[k] = self._discount * s['discount']
        if self._reward_clip:
            rewards = np.clip(rewards, -self._reward_clip, self._reward_clip)
        self._pending.append((
            {'observation': first['observation'], 'action': first['action'],
             'reward': rewards, 'discount': discounts,
             'next_observation': bootstrap['observation']},
            first['q_value'], bootstrap['bootstrap_value']))
        if len(self._pending) >= self._batch_size:
            self.flush()

    def flush(self) -> None:
        """Computes the buffered transitions' priorities in one batch and sends them."""
        if not self._pending:
            return
        transitions, q_values, bootstrap_values = zip(*self._pending)
        targets = value_learning.n_step_return(
            np.stack([t['reward'] for t in transitions]),
            np.stack([t['discount'] for t in transitions]),
            np.asarray(bootstrap_values, np.float32))
        priorities = replay.priorities_from_td_errors(
            targets - np.asarray(q_values, np.float32)).numpy()
        for transition, priority in zip(transitions, priorities):
            self._writer.append(transition)
            self._writer.create_item(
                self._table, priority=float(priority),
                trajectory={name: column[-1] for name, column in self._writer.history.items()})
        self._writer.flush()
        self._pending = []

    def close(self) -> None:
        self.flush()
        self._writer.close()
