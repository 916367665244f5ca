"""The learner's input: batches drawn from one table, or a fixed mix of several.

`batches(address, [('queue', 4), ('replay', 28)])` yields batches of 32 items: the first 4
from the online queue and the last 28 from replay, in that order, every batch (LASER sec. 5.1
mixes online and replayed trajectories; IMPALA's replay experiments, table 2, take half of each
batch from replay). `data['origin']` [B] holds each item's part index, so a loss can treat the
parts differently (LASER: entropy on online data only).
"""
from typing import Sequence

import reverb
import tensorflow as tf

from agents.core import steps

ORIGIN = 'origin'


def batches(server_address: str, parts: Sequence[tuple[str, int]],
            prefetch: int = 2, readers: int = 1) -> tf.data.Dataset:
    """A dataset of `reverb.ReplaySample`s: `count` items from each `(table, count)` of
    `parts`, concatenated in that order on the batch axis, with `data['origin']` added.

    Each table is read by `readers` Reverb streams whose items interleave in no fixed order,
    so that unpacking and decompressing samples runs on that many cores (queues need 1)."""
    if not parts or any(count < 1 for _, count in parts) or readers < 1:
        raise ValueError(f'need one or more (table, count >= 1) parts and readers >= 1, got '
                         f'{parts}, {readers}')
    datasets = []
    for table, count in parts:
        def read(_, table=table, count=count):
            return reverb.TrajectoryDataset.from_table_signature(
                server_address=server_address, table=table,
                max_in_flight_samples_per_worker=2 * count)
        dataset = read(None) if readers == 1 else tf.data.Dataset.range(readers).interleave(
            read, cycle_length=readers, num_parallel_calls=readers, deterministic=False)
        datasets.append(dataset.batch(count, drop_remainder=True))
    origin = tf.repeat(tf.range(len(parts), dtype=tf.int32), [count for _, count in parts])

    def concatenate(*samples):
        sample = tf.nest.map_structure(lambda *xs: tf.concat(xs, axis=0), *samples)
        return sample._replace(data={**sample.data, ORIGIN: origin})

    dataset = datasets[0] if len(datasets) == 1 else tf.data.Dataset.zip(tuple(datasets))
    return dataset.map(concatenate).prefetch(prefetch)


def online(data) -> tf.Tensor:
    """[B] 1.0 for the unrolls of the online queue, 0.0 for replayed ones."""
    return tf.cast(tf.equal(data[ORIGIN], 0), tf.float32)


def time_major(batch):
    """[B, T, ...] -> [T, B, ...] for every step field; the core state ([B, ...]: one per
    unroll) stays as it is, and `origin` [B] is added (all 0) where the batch has none."""
    data = {name: value for name, value in batch.items()
            if name not in (steps.CORE_STATE, ORIGIN)}
    data = tf.nest.map_structure(_time_major, data)
    if steps.CORE_STATE in batch:
        data[steps.CORE_STATE] = batch[steps.CORE_STATE]
    data[ORIGIN] = batch.get(
        ORIGIN, tf.zeros(tf.shape(batch['reward'])[:1], tf.int32))
    return data


def _time_major(x):
    perm = [1, 0] + list(range(2, x.shape.rank))
    return tf.transpose(x, perm)
