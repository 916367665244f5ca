"""Reverb table factories and signatures: the transport between actors and learners.

No agent logic lives here: a table is declared once, by name, with the signature of what
actors write into it (docs/architecture.md, "Data flow"). With several learners on one server,
a learner's private tables carry its id (`private`); shared tables keep their names.
"""
from typing import Any, Mapping

import reverb
import tensorflow as tf

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


def queue_table(signature: Mapping[str, Any], max_size: int, name: str = QUEUE) -> reverb.Table:
    """IMPALA's actor->learner queue (sec. 3): items of `signature` (its unrolls), each read
    once, in arrival order. A full queue blocks the actors."""
    return reverb.Table.queue(name=name, max_size=max_size, signature=dict(signature))


def uniform_replay_table(signature: Mapping[str, Any], max_size: int, min_size_to_sample: int,
                         name: str = REPLAY) -> reverb.Table:
    """Experience replay of whole sequences (IMPALA table D.3; LASER sec. 5.1, app. A.2):
    uniform sampling with replacement, the oldest removed first once `max_size` is reached;
    learners wait for `min_size_to_sample` items; actors are never throttled by it."""
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        rate_limiter=reverb.rate_limiters.MinSize(min_size_to_sample),
        signature=dict(signature))


def episode_replay_table(signature: Mapping[str, Any], max_size: int, min_size_to_sample: int,
                         name: str = REPLAY) -> reverb.Table:
    """Experience replay of whole episodes (LASER sec. 5.1: "We store the entire episodes in
    the replay buffer"; app. A.2: "uniform replay"), as `adders.SequenceAdder`'s
    `episode_tables` write them: each episode one item of priority 1 and placeholders of
    priority 0, one per sequence its steps would make, so that `max_size` counts sequences.
    A proportional sampler draws the episodes uniformly and never a placeholder; the oldest
    items are removed first; learners wait for `min_size_to_sample` items; actors are never
    throttled by it. `signature`'s leading dimensions are None: episodes of any length."""
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Prioritized(priority_exponent=1.0),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        rate_limiter=reverb.rate_limiters.MinSize(min_size_to_sample),
        signature=dict(signature))


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


def prioritized_table(signature: Mapping[str, tf.TensorSpec], *, max_size: int,
                      priority_exponent: float, min_size_to_sample: int,
                      eviction_exponent: float | None = None, samples_per_insert: float = 0.0,
                      name: str = PRIORITIZED) -> reverb.Table:
    """Ape-X's shared replay (sec. 3, appendix F): proportional prioritization, P(i) =
    p_i^alpha / sum_k p_k^alpha with alpha = `priority_exponent`; sampling starts once
    `min_size_to_sample` items are in (appendix C: 50,000).

    `samples_per_insert` 0: actors are never throttled, as in the paper, where the ratio of
    sampled to inserted transitions is whatever the actors' and the learner's speeds make it.
    Above 0 the table holds that ratio (`sample_to_insert_ratio`): not the paper's, a small
    machine's way to learn from each transition as often as a faster learner would.

    Capacity is kept by removing the oldest item (`eviction_exponent` None: Atari, sec. 4.1) or
    by evicting in proportion to p_i^eviction_exponent (appendix D: -0.4, low priority first).
    Removal happens at every insert beyond `max_size`, not en masse every 100 learner steps as
    in sec. 4.1 (docs/fidelity.md).
    """
    remover = (reverb.selectors.Fifo() if eviction_exponent is None
               else reverb.selectors.Prioritized(eviction_exponent))
    rate_limiter = (sample_to_insert_ratio(samples_per_insert, min_size_to_sample)
                    if samples_per_insert else reverb.rate_limiters.MinSize(min_size_to_sample))
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Prioritized(priority_exponent),
        remover=remover,
        max_size=max_size,
        rate_limiter=rate_limiter,
        signature=dict(signature))


# How far, in inserted items, the inserts may run ahead of or behind `samples_per_insert`
# before one side waits: a tenth of the items learning waits for, as Acme's builders allow,
# and at least two inserts each way (Reverb refuses less than one).
TOLERANCE_OF_MIN_SIZE = 0.1


def sample_to_insert_ratio(samples_per_insert: float, min_size_to_sample: int
                           ) -> reverb.rate_limiters.SampleToInsertRatio:
    """Once `min_size_to_sample` items are in, items are sampled `samples_per_insert` times
    per item inserted: the learner waits for the actors when it runs ahead, and the actors
    (their writers' inserts) wait for the learner when they do."""
    error_buffer = max(TOLERANCE_OF_MIN_SIZE * min_size_to_sample * samples_per_insert,
                       2.0 * max(1.0, samples_per_insert))
    return reverb.rate_limiters.SampleToInsertRatio(
        samples_per_insert=samples_per_insert, min_size_to_sample=min_size_to_sample,
        error_buffer=error_buffer)
