"""Generic N-step transitions with initial priorities, each frame stored once (what Acme keeps
in its N-step transition adder; Ape-X replays them, sec. 3). The actors' adder writes them
(`NStepTransitionAdder`), the table's signature describes them (`transition_signature`), and
the learner's update rebuilds the observations from their frames (`stacked_transitions`)."""
import collections
import itertools
from typing import Mapping

import numpy as np
import reverb
import tensorflow as tf

from agents.core import steps
from agents.ops import replay
from agents.ops import value_learning

_FRAME = 'frame'   # the column of single frames that N-step transitions reference
# Frames are chunked (and compressed) this many at a time; a sample decompresses the chunks its
# frames lie in (benchmarks/README.md, "Ape-X replay").
_FRAMES_PER_CHUNK = 4


def transition_signature(step_spec: Mapping[str, tf.TensorSpec], n_step: int,
                         stack: int = 1) -> dict[str, tf.TensorSpec]:
    """Signature of `NStepTransitionAdder`'s items: the `stack` + N frames from o_t's oldest
    on, and the horizon m of o_{t+N} = o_{t+m}."""
    observation = step_spec['observation']
    return {
        'frames': tf.TensorSpec([stack + n_step, *observation.shape[:-1],
                                 observation.shape[-1] // stack], observation.dtype),
        'action': step_spec['action'],
        'reward': tf.TensorSpec([n_step], tf.float32),
        'discount': tf.TensorSpec([n_step], tf.float32),
        'horizon': tf.TensorSpec([], tf.int32),
    }


def stacked_transitions(data: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """A batch of N-step transitions (`transition_signature`) with `observation` o_t and
    `next_observation` o_{t+N} as the environment gave them: their frames stacked on the last
    axis, oldest first (environments/atari.py), from frames [B, stack + N, ..., width]."""
    frames = tf.convert_to_tensor(data['frames'])
    stack = frames.shape[1] - data['reward'].shape[1]
    offsets = tf.range(stack, dtype=tf.int32)
    next_frames = tf.gather(frames, data['horizon'][:, None] + offsets, batch_dims=1)

    def stacked(x):   # [B, stack, ..., width] -> [B, ..., stack * width]
        rank = x.shape.rank
        x = tf.transpose(x, [0, *range(2, rank - 1), 1, rank - 1])
        return tf.reshape(x, [-1, *x.shape[1:-2], x.shape[-2] * x.shape[-1]])

    transitions = {k: v for k, v in data.items() if k not in ('frames', 'horizon')}
    return {**transitions, 'observation': stacked(frames[:, :stack]),
            'next_observation': stacked(next_frames)}


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
    action, rewards and discounts; `stacked_transitions` rebuilds o_t and o_{t+N}.

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
