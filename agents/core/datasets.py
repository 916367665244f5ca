"""The learner's input: batches drawn from one table, or a fixed mix of several.

`batches(address, [('queue', 4), ('replay', 28)])` yields batches of 32 items: the first 4
from the online queue and the last 28 from replay, in that order, every batch (LASER sec. 5.1
mixes online and replayed trajectories; IMPALA's replay experiments, table 2, take half of each
batch from replay). `data['origin']` [B] holds each item's part index, so a loss can treat the
parts differently (LASER: entropy on online data only).
"""
from typing import Any, Callable, Sequence

import reverb
import tensorflow as tf

from agents.core import steps

ORIGIN = 'origin'
# [rows]: each replayed row's count of restarts when its episode was drawn (`episode_rows`).
DRAWN_AT = 'drawn_at'


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


def episode_rows(server_address: str, table: str, rows: int, length: int, period: int,
                 restarts: tf.Variable, stack: int = 1, unpack: Callable[[Any], Any] = dict
                 ) -> tf.data.Dataset:
    """A dataset of `rows` sequences of `length` steps every element, row i walking through
    whole episodes drawn uniformly from `table` (`tables.episode_replay_table`), one after
    another: each episode from its first step, `period` steps further each time (LASER sec. 5.1:
    "replay each episode from the beginning"), so that a learner can carry each row's core
    state from one batch to the next. An episode of L steps gives ceil(L / period) sequences;
    steps past its end repeat its last step with mask, reward and discount 0 (they add nothing
    to a loss) and `first` False. Items and sequences are batch-major dicts; observations hold
    the `stack` - 1 frames before each sequence as `steps.frame_signature` says, once `unpack`
    has made a drawn item's data into its fields (agents/core/packing.py).

    `restarts` (an int64 variable) restarts the rows: each sequence holds in DRAWN_AT its value
    when the sequence's episode was drawn, and a row drops the rest of an episode drawn before
    the value last changed, so that its next sequence is a newly drawn episode's first (a
    learner whose weights were replaced by PBT's copy). Sequences already batched keep their
    old value, for the learner to tell them apart.

    Until the table holds the items it waits for before its first sample, each row gives empty
    sequences (`_while_filling`), so that a learner learns from its online part meanwhile."""
    def drawn(sample):
        """The drawn episode's sequences, gathered one at a time (a row holds the episode, not
        all its sequences at once), each with DRAWN_AT: `restarts`'s value now."""
        episode = unpack(sample.data)
        drawn_at = restarts.read_value()

        def sequence(k):
            first = _sequences(episode, tf.cast(k, tf.int32)[None] * period, length, stack)
            return {**tf.nest.map_structure(lambda x: x[0], first), DRAWN_AT: drawn_at}
        return tf.data.Dataset.range(tf.cast(_sequence_count(episode, period), tf.int64)).map(
            sequence)

    def current(sequence):
        return tf.equal(sequence[DRAWN_AT], restarts)

    def row(_):
        episodes = reverb.TrajectoryDataset.from_table_signature(
            server_address=server_address, table=table, max_in_flight_samples_per_worker=1)
        sequences = episodes.flat_map(drawn).filter(current)
        return _while_filling(server_address, table, sequences.element_spec,
                              restarts).concatenate(sequences)
    streams = tuple(row(i) for i in range(rows))
    return tf.data.Dataset.zip(streams).map(
        lambda *sequences: tf.nest.map_structure(lambda *xs: tf.stack(xs), *sequences))


def _while_filling(server_address: str, table: str, spec, restarts: tf.Variable
                   ) -> tf.data.Dataset:
    """Sequences of zeros (mask 0: nothing is learnt from them; `first` False) for as long as
    `table` holds fewer items than its rate limiter waits for before the first sample. Episodes
    enter the replay only once they end, while an actor's online queue takes an unroll every T
    steps and blocks once full: where the first episodes outlast the queue (Pong's first games,
    about 800 steps, against the quick preset's 64 unrolls of 19 steps over 8 games), a learner
    waiting for replayed rows would never take the queue's unrolls, and nothing would move."""
    client = reverb.Client(server_address)

    def filling():
        while True:
            info = client.server_info()[table]
            if info.current_size >= info.rate_limiter_info.min_size_to_sample:
                return
            yield 0
    return tf.data.Dataset.from_generator(
        filling, output_signature=tf.TensorSpec([], tf.int32)).map(
            lambda _: {**tf.nest.map_structure(lambda s: tf.zeros(s.shape, s.dtype), spec),
                       DRAWN_AT: restarts.read_value()})


def online_and_episode_rows(server_address: str, queue: tuple[str, int],
                            replay: tuple[str, int], length: int, period: int,
                            restarts: tf.Variable, stack: int = 1, prefetch: int = 2,
                            unpack: Callable[[Any], Any] = dict) -> tf.data.Dataset:
    """Batches of the items' data: `count` items of the `queue` (table, count), then the
    `replay` (table, rows)'s `episode_rows` (restarted by `restarts`), with `data['origin']`
    (0, then 1), both unpacked by `unpack`. Only the queue's items have a core state
    (CORE_STATE, [count, ...]): the rows' states are the learner's; only the rows have DRAWN_AT
    ([rows])."""
    (queue_table, count), (replay_table, rows) = queue, replay
    online = batches(server_address, [(queue_table, count)], prefetch=0)
    replayed = episode_rows(server_address, replay_table, rows, length, period, restarts, stack,
                            unpack)
    origin = tf.repeat(tf.constant([0, 1], tf.int32), [count, rows])

    def concatenate(sample, sequences):
        online_data = unpack(sample.data)
        data = {name: tf.nest.map_structure(lambda x, y: tf.concat([x, y], axis=0),
                                            value, sequences[name])
                for name, value in online_data.items() if name in sequences}
        return {**data, steps.CORE_STATE: online_data[steps.CORE_STATE], ORIGIN: origin,
                DRAWN_AT: sequences[DRAWN_AT]}
    return tf.data.Dataset.zip((online, replayed)).map(concatenate).prefetch(prefetch)


def episode_sequences(episode, length: int, period: int, stack: int = 1):
    """One episode's fields [L, ...] (observation [L + stack - 1, ...]) -> its sequences
    [ceil(L / period), length, ...] (observation [..., length + stack - 1, ...]), as
    `episode_rows` describes them; none for an item of fewer than 2 steps (a placeholder, or an
    episode of one step, which is dropped)."""
    return _sequences(episode, tf.range(_sequence_count(episode, period)) * period, length,
                      stack)


def _sequence_count(episode, period: int) -> tf.Tensor:
    size = tf.shape(episode['reward'])[0]
    return tf.where(size < 2, 0, (size + period - 1) // period)


def _sequences(episode, starts, length: int, stack: int):
    """The sequences of `episode_sequences` that start at `starts` [N]: [N, length, ...]."""
    size = tf.shape(episode['reward'])[0]
    index = starts[:, None] + tf.range(length)[None]
    inside = index < size
    sequences = {name: tf.gather(value, tf.minimum(index, size - 1))
                 for name, value in episode.items() if name != 'observation'}
    frames = starts[:, None] + tf.range(length + stack - 1)[None]
    sequences['observation'] = tf.nest.map_structure(
        lambda x: tf.gather(x, tf.minimum(frames, size + stack - 2)), episode['observation'])
    for name in ('mask', 'reward', 'discount'):
        sequences[name] = sequences[name] * tf.cast(inside, sequences[name].dtype)
    sequences['first'] = tf.logical_and(sequences['first'], inside)
    return sequences


def online(data) -> tf.Tensor:
    """[B] 1.0 for the unrolls of the online queue, 0.0 for replayed ones."""
    return tf.cast(tf.equal(data[ORIGIN], 0), tf.float32)


def time_major(batch):
    """[B, T, ...] -> [T, B, ...] for every step field; the core state ([B, ...]: one per
    unroll) and DRAWN_AT stay as they are, and `origin` [B] is added (all 0) where the batch
    has none."""
    kept = (steps.CORE_STATE, DRAWN_AT)
    data = {name: value for name, value in batch.items() if name not in (*kept, ORIGIN)}
    data = tf.nest.map_structure(_time_major, data)
    data.update({name: batch[name] for name in kept if name in batch})
    data[ORIGIN] = batch.get(
        ORIGIN, tf.zeros(tf.shape(batch['reward'])[:1], tf.int32))
    return data


def _time_major(x):
    perm = [1, 0] + list(range(2, x.shape.rank))
    return tf.transpose(x, perm)
