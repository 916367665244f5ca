"""Writing each sequence to several tables with priorities from a function, and learner
batches drawn as a fixed mix of tables, on a real Reverb server."""
import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import adders
from agents.core import builders
from agents.core import datasets
from agents.core import steps
from agents.impala import config as impala_config
from launch import experiments
from reverb_tables import tables

SPEC = {'n': tf.TensorSpec([], tf.int32), 'x': tf.TensorSpec([2], tf.float32)}
LENGTH = 3
SIGNATURE = steps.trajectory_signature(SPEC, LENGTH)


@pytest.fixture(name='server')
def fixture_server():
    server = reverb.Server([
        tables.queue_table(SIGNATURE, max_size=1000),
        tables.uniform_replay_table(SIGNATURE, max_size=1000, min_size_to_sample=1),
        reverb.Table('prioritized', reverb.selectors.Prioritized(1.0), reverb.selectors.Fifo(),
                     max_size=1000, rate_limiter=reverb.rate_limiters.MinSize(1),
                     signature=SIGNATURE)])
    yield server
    server.stop()


def _write(client, priorities, count):
    adder = adders.SequenceAdder(client, priorities, length=LENGTH, period=LENGTH - 1)
    for n in range(count):
        adder.add({'n': np.int32(n), 'x': np.full(2, n, np.float32)})
    adder.close()


def test_each_sequence_goes_to_every_table_with_its_priority(server):
    client = reverb.Client(f'localhost:{server.port}')
    # Priority: the sum of the sequence's `n`, a function of its steps.
    _write(client, {tables.QUEUE: adders.constant_priority(),
                    'prioritized': lambda seq: float(sum(step['n'] for step in seq))}, 9)
    info = client.server_info()
    assert info[tables.QUEUE].current_size == info['prioritized'].current_size == 4
    samples = list(client.sample('prioritized', 200, emit_timesteps=False,
                                 unpack_as_table_signature=True))
    for sample in samples:
        assert sample.info.priority == pytest.approx(sample.data['n'].sum())
    # Sampled in proportion to priority: the sequence 6-8 (priority 21) most, 0-2 (3) least.
    counts = np.bincount([s.data['n'][0] for s in samples], minlength=7)
    assert counts[6] > counts[0]


def test_batches_mix_a_fixed_number_of_items_from_each_table(server):
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    # Queue items count up from 0; replay items from 1000.
    _write(client, {tables.QUEUE: adders.constant_priority()}, 2 * 12 + 1)
    adder = adders.SequenceAdder(client, {tables.REPLAY: adders.constant_priority()},
                                 length=LENGTH, period=LENGTH - 1)
    for n in range(1000, 1011):
        adder.add({'n': np.int32(n), 'x': np.zeros(2, np.float32)})
    adder.close()
    dataset = datasets.batches(address, [(tables.QUEUE, 3), (tables.REPLAY, 5)])
    queue_starts = []
    for sample in dataset.take(4):
        n = sample.data['n'].numpy()
        np.testing.assert_array_equal(sample.data[datasets.ORIGIN], [0] * 3 + [1] * 5)
        assert (n[:3] < 1000).all() and (n[3:] >= 1000).all()
        queue_starts += list(n[:3, 0])
    # The queue part is read in order, each item once.
    assert queue_starts == list(range(0, 24, 2))


def test_a_mixture_needs_positive_parts():
    with pytest.raises(ValueError, match='count >= 1'):
        datasets.batches('localhost:1', [(tables.QUEUE, 4), (tables.REPLAY, 0)])


def test_private_tables_per_learner_and_shared_replay():
    c = impala_config.tiny(impala_config.ImpalaAtari())
    c = c.replace(game='pong', replay_proportion=0.5, num_learners=3)
    builder = experiments.get('impala_atari').builder(c)
    names = sorted(t.name for t in builders.replay_tables(builder, 3))
    assert names == sorted(['queue', 'queue_1', 'queue_2', 'replay', 'variables',
                            'variables_1', 'variables_2', 'episode_stats', 'episode_stats_1',
                            'episode_stats_2'])
    assert builder.table(tables.QUEUE, 2) == 'queue_2'
    assert builder.table(tables.REPLAY, 2) == 'replay'
    c = c.replace(replay_shared=False)
    assert experiments.get('impala_atari').builder(c).table(tables.REPLAY, 2) == 'replay_2'
