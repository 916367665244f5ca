"""Reverb table factories and signatures: the transport between actors and learners.

No agent logic lives here: a table is declared once, by name, with the signature of what
actors write into it (docs/architecture.md, "Data flow"). With several learners on one server,
a learner's private tables carry its id (`private`); shared tables keep their names.
"""
from typing import Any, Mapping

import reverb
import tensorflow as tf
import tree

from agents.core.steps import CORE_STATE

QUEUE = 'queue'
REPLAY = 'replay'
PRIORITIZED = 'prioritized_replay'
VARIABLES = 'variables'
EPISODE_STATS = 'episode_stats'

# What each actor reports when a whole game ends (raw score, not the clipped training reward).
EPISODE_STATS_SIGNATURE = {
    'actor': tf.TensorSpec([], tf.int32),
    'env': tf.TensorSpec([], tf.int32),          # the environment's index in its actor
    'episode_return': tf.TensorSpec([], tf.float32),
    'episode_frames': tf.TensorSpec([], tf.int64),
}


def private(name: str, learner_id: int) -> str:
    """Learner `learner_id`'s own copy of table `name`. Learner 0's tables keep their plain
    names, so one-learner runs (and their replay checkpoints) are named as they always were."""
    return name if learner_id == 0 else f'{name}_{learner_id}'


def trajectory_signature(step_spec: Mapping[str, Any], length: int) -> dict[str, Any]:
    """Signature of items holding `length` consecutive steps of `step_spec`; a recurrent
    core's state (steps.CORE_STATE) is held once, for the first step. A nested field (DMLab's
    observation: frame and instruction) gets one column per leaf."""
    signature = {name: tree.map_structure_with_path(
                     lambda path, s, n=name: tf.TensorSpec(
                         [length, *s.shape], s.dtype, '/'.join(map(str, (n, *path)))), spec)
                 for name, spec in step_spec.items() if name != CORE_STATE}
    if CORE_STATE in step_spec:
        signature[CORE_STATE] = step_spec[CORE_STATE]
    return signature


def queue_table(step_spec: Mapping[str, Any], unroll_length: int,
                max_size: int, name: str = QUEUE) -> reverb.Table:
    """IMPALA's actor->learner queue (sec. 3): unrolls of T+1 steps, each read once, FIFO.

    Step T of one unroll is step 0 of the next (overlap 1), so the learner can bootstrap from
    V(x_T) and every transition is learnt from exactly once. A full queue blocks the actors.
    """
    return reverb.Table.queue(
        name=name, max_size=max_size,
        signature=trajectory_signature(step_spec, unroll_length + 1))


def uniform_replay_table(step_spec: Mapping[str, Any], length: int, max_size: int,
                         min_size_to_sample: int, name: str = REPLAY) -> reverb.Table:
    """Experience replay of whole sequences (IMPALA table D.3; LASER sec. 5.1, app. A.2):
    uniform sampling with replacement, the oldest removed first once `max_size` is reached;
    learners wait for `min_size_to_sample` items; actors are never throttled by it."""
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        rate_limiter=reverb.rate_limiters.MinSize(min_size_to_sample),
        signature=trajectory_signature(step_spec, length))


def variables_table(name: str = VARIABLES) -> reverb.Table:
    """Size-1 table holding the newest learner parameters; actors read it as often as they like."""
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Lifo(),
        remover=reverb.selectors.Fifo(),
        max_size=1,
        max_times_sampled=0,
        rate_limiter=reverb.rate_limiters.MinSize(1))


def episode_stats_table(max_size: int = 100_000, name: str = EPISODE_STATS) -> reverb.Table:
    """Queue of finished-game statistics that the learner drains into its episode log."""
    return reverb.Table.queue(name=name, max_size=max_size,
                              signature=EPISODE_STATS_SIGNATURE)


def transition_signature(step_spec: Mapping[str, tf.TensorSpec], n_step: int,
                         stack: int = 1) -> dict[str, tf.TensorSpec]:
    """Signature of the N-step transitions of agents/core/adders.NStepTransitionAdder: the
    `stack` + N frames from o_t's oldest on, and the horizon m of o_{t+N} = o_{t+m}."""
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


def prioritized_table(signature: Mapping[str, tf.TensorSpec], *, max_size: int,
                      priority_exponent: float, min_size_to_sample: int,
                      eviction_exponent: float | None = None,
                      name: str = PRIORITIZED) -> reverb.Table:
    """Ape-X's shared replay (sec. 3, appendix F): proportional prioritization, P(i) =
    p_i^alpha / sum_k p_k^alpha with alpha = `priority_exponent`; sampling starts once
    `min_size_to_sample` items are in (appendix C: 50,000); actors are never throttled.

    Capacity is kept by removing the oldest item (`eviction_exponent` None: Atari, sec. 4.1) or
    by evicting in proportion to p_i^eviction_exponent (appendix D: -0.4, low priority first).
    Removal happens at every insert beyond `max_size`, not en masse every 100 learner steps as
    in sec. 4.1 (docs/fidelity.md).
    """
    remover = (reverb.selectors.Fifo() if eviction_exponent is None
               else reverb.selectors.Prioritized(eviction_exponent))
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Prioritized(priority_exponent),
        remover=remover,
        max_size=max_size,
        rate_limiter=reverb.rate_limiters.MinSize(min_size_to_sample),
        signature=dict(signature))
