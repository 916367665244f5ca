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

_FRAME = 'frame'   # the column of single frames that N-step transitions reference
# Frames are chunked (and compressed) this many at a time; a sample decompresses the chunks its
# frames lie in (benchmarks/README.md, "Ape-X replay").
_FRAMES_PER_CHUNK = 4

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

    Items go to the server at a flush, every `flush_period` steps (default: each item). A
    flush closes the chunks the items reference, so it also sets how many steps Reverb
    compresses together and how many chunk references each item holds: with a sequence at
    every step (Reactor), flushing each item would store each step as a chunk of its own and
    cost 10 times the memory per stored step (benchmarks/README.md, "Reactor").
    """

    def __init__(self, client: reverb.Client, priorities: Mapping[str, PriorityFn],
                 length: int, period: int, max_in_flight_items: int = 2,
                 columns: Mapping[str, Sequence[str]] | None = None,
                 flush_period: int | None = None):
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
        self._flush_period = flush_period or period
        self._steps = collections.deque(maxlen=length)
        self._num_steps = 0
        self._flushed_at = 0

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
            if self._num_steps - self._flushed_at >= self._flush_period:
                # Blocks while a table is full: the learner's pace throttles the actors.
                self._writer.flush(block_until_num_items=self._max_in_flight)
                self._flushed_at = self._num_steps

    def close(self) -> None:
        """Sends every pending item, then closes the stream."""
        self._writer.flush()
        self._writer.close()


class NStepTransitionAdder:
    """Turns the actor's step stream into N-step transitions with initial priorities (Ape-X).

    Each transition is o_t, a_t, the N rewards R_{t+1..t+N} (clipped to [-reward_clip,
    reward_clip] if set), the N per-step discounts with gamma included, and o_{t+N}. Where the
    episode ends inside the N steps the transition is shorter, padded with reward 0 and:
      * termination (discount 0 from the environment): discount 0 at the last step, so the
        target does not bootstrap;
      * time-limit cut (the actor's extra mask-0 step, agents/core/actor.py): padding discount
        1, and o_{t+N} is the final observation, so the target bootstraps from it with gamma^m
        for the m steps that were left (docs/fidelity.md, "time limits").

    Each frame is stored once (Ape-X sec. 4.1 compresses observations in replay; Acme's adders
    share steps between items). An observation stacks its last `stack` frames on its last axis,
    oldest first (environments/atari.py; `stack` 1: the observation is one frame). The adder
    appends each step's newest frame to one Reverb column, every frame of an episode's first
    observation (a real reset's zeros, or the frames a life-loss episode carries over), and N
    zero frames after an episode's end. An item references the `stack` + N frames from o_t's
    oldest on, with `horizon` m (N unless the episode ended: o_{t+N} is o_{t+m}) beside its
    action, rewards and discounts; `tables.stacked_transitions` rebuilds o_t and o_{t+N}.

    Initial priorities are |G_t - q_t| from the actor's own values (Ape-X sec. 3, appendix F):
    each step must carry the extras `q_value` (q(o_t, a_t)) and `bootstrap_value` (the value of
    o_t the target uses: max_a q(o_t, a) for DQN, q(o_t, pi(o_t)) for DPG). The mask-0 step
    after a time-limit cut carries zeros there (the actor does not evaluate the final
    observation), so those few transitions start with a priority that bootstraps from 0 until
    the learner first samples them. Transitions wait in a local buffer and are sent, priorities
    computed in one batch, `batch_size` at a time (sec. 4.1: B = 50).
    """

    def __init__(self, client: reverb.Client, table: str, n_step: int, discount: float,
                 batch_size: int, reward_clip: float | None = None, stack: int = 1):
        if min(n_step, batch_size, stack) < 1:
            raise ValueError(f'need n_step, batch_size and stack >= 1, got {n_step}, '
                             f'{batch_size}, {stack}')
        # A frame must stay referable until its batch is sent: the batch's B + N steps from
        # the oldest transition's first frame on, with `stack` frames at each episode's start
        # and N + 1 at its end.
        keep_alive = (batch_size + n_step + 1) * (stack + n_step + 1)
        self._writer = client.trajectory_writer(num_keep_alive_refs=keep_alive)
        self._writer.configure((_FRAME,), num_keep_alive_refs=keep_alive,
                               max_chunk_length=_FRAMES_PER_CHUNK)
        # A batch's actions, rewards, discounts and horizons are one chunk each.
        for name in ('action', 'reward', 'discount', 'horizon'):
            self._writer.configure((name,), num_keep_alive_refs=keep_alive,
                                   max_chunk_length=batch_size)
        self._table = table
        self._n = n_step
        self._discount = np.float32(discount)
        self._batch_size = batch_size
        self._reward_clip = reward_clip
        self._stack = stack
        self._frames = collections.deque()    # frame references from the oldest buffered o_t
        self._episode = collections.deque()   # steps of the current episode not yet written
        self._pending = []                     # finished transitions waiting to be sent

    def add(self, step: Mapping[str, np.ndarray]) -> None:
        if steps.CORE_STATE in step:
            raise ValueError('N-step transitions cannot hold a recurrent core state: a '
                             'recurrent policy needs a SequenceAdder')
        observation = step['observation']
        width = observation.shape[-1] // self._stack
        if self._frames:
            self._append_frame(observation[..., -width:])
        else:                                  # an episode's first observation
            for k in range(self._stack):
                self._append_frame(observation[..., k * width:(k + 1) * width])
        if step['mask'] == 0:                  # the final observation of a time-limit cut
            self._end_episode(bootstrap=step)
            return
        self._episode.append(step)
        if step['discount'] == 0:
            # Termination: the transitions that reach this step end there (discount 0); the
            # one that is N steps older still bootstraps from this step's observation.
            self._end_episode(bootstrap=step)
        elif len(self._episode) == self._n + 1:
            self._finish(bootstrap=step, horizon=self._n)

    def _append_frame(self, frame: np.ndarray) -> None:
        self._writer.append({_FRAME: frame})
        ref, = self._writer.history[_FRAME][-1]
        self._frames.append(ref)

    def _end_episode(self, bootstrap: Mapping[str, np.ndarray]) -> None:
        """Writes every buffered transition, bootstrapping from `bootstrap`'s observation, the
        newest; N zero frames complete the items' frames past it."""
        observation = bootstrap['observation']
        zeros = np.zeros_like(observation[..., :observation.shape[-1] // self._stack])
        for _ in range(self._n):
            self._append_frame(zeros)
        while self._episode:
            self._finish(bootstrap, horizon=len(self._episode) - (bootstrap['mask'] != 0))
        self._frames.clear()

    def _finish(self, bootstrap: Mapping[str, np.ndarray], horizon: int) -> None:
        """Makes the transition of the oldest buffered step over at most N buffered steps,
        bootstrapping from the observation `horizon` steps after it."""
        window = list(itertools.islice(self._episode, self._n))
        first = self._episode.popleft()
        rewards = np.zeros(self._n, np.float32)
        discounts = np.ones(self._n, np.float32)
        for k, s in enumerate(window):
            rewards[k] = s['reward']
            discounts[k] = self._discount * s['discount']
        if self._reward_clip:
            rewards = np.clip(rewards, -self._reward_clip, self._reward_clip)
        frames = tuple(itertools.islice(self._frames, self._stack + self._n))
        self._frames.popleft()
        self._pending.append((
            {'action': first['action'], 'reward': rewards, 'discount': discounts,
             'horizon': np.int32(horizon)},
            frames, first['q_value'], bootstrap['bootstrap_value']))
        if len(self._pending) >= self._batch_size:
            self.flush()

    def flush(self) -> None:
        """Computes the buffered transitions' priorities in one batch and sends them."""
        if not self._pending:
            return
        transitions, frames, q_values, bootstrap_values = zip(*self._pending)
        targets = value_learning.n_step_return(
            np.stack([t['reward'] for t in transitions]),
            np.stack([t['discount'] for t in transitions]),
            np.asarray(bootstrap_values, np.float32))
        priorities = replay.priorities_from_td_errors(
            targets - np.asarray(q_values, np.float32)).numpy()
        for transition, refs, priority in zip(transitions, frames, priorities):
            self._writer.append(transition)
            history = self._writer.history
            self._writer.create_item(self._table, priority=float(priority), trajectory={
                'frames': reverb.TrajectoryColumn(refs),
                **{name: history[name][-1] for name in transition}})
        self._writer.flush()
        self._pending = []

    def close(self) -> None:
        self.flush()
        self._writer.close()
