"""Reverb plumbing on a real loopback server: queue unrolls, parameter broadcast, game stats."""
import time

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import adders
from agents.core import draws
from agents.core import episode_log
from agents.core import steps
from agents.core import variables
from reverb_tables import tables

STEP_SPEC = {'x': tf.TensorSpec([2], tf.float32), 'n': tf.TensorSpec([], tf.int32)}


@pytest.fixture
def server():
    unrolls = steps.trajectory_signature(STEP_SPEC, 4)   # unrolls of T = 3 (T + 1 steps)
    server = reverb.Server([tables.queue_table(unrolls, max_size=100),
                            tables.variables_table(), tables.episode_stats_table()])
    yield server
    server.stop()


def test_queue_unrolls_overlap_by_one_step(server):
    client = reverb.Client(f'localhost:{server.port}')
    adder = adders.SequenceAdder(client, {tables.QUEUE: adders.constant_priority()}, length=4,
                                 period=3)
    for n in range(10):
        adder.add({'x': np.full(2, n, np.float32), 'n': np.int32(n)})
    adder.close()
    items = [next(client.sample(tables.QUEUE, 1, emit_timesteps=False,
                                unpack_as_table_signature=True)) for _ in range(3)]
    # Unrolls of T+1 = 4 steps every T = 3 steps: 0-3, 3-6, 6-9, in arrival order.
    assert [list(item.data['n']) for item in items] == [[0, 1, 2, 3], [3, 4, 5, 6],
                                                        [6, 7, 8, 9]]
    np.testing.assert_array_equal(items[1].data['x'][:, 0], [3, 4, 5, 6])
    assert client.server_info()[tables.QUEUE].current_size == 0  # each unroll read once


def test_queue_rejects_steps_that_do_not_match_the_signature(server):
    client = reverb.Client(f'localhost:{server.port}')
    adder = adders.SequenceAdder(client, {tables.QUEUE: adders.constant_priority()}, length=4,
                                 period=3)
    with pytest.raises(ValueError, match='inconsistent with the table signature'):
        for n in range(4):
            adder.add({'x': np.zeros(3, np.float32), 'n': np.int32(n)})


def test_variables_go_from_learner_to_actor(server):
    client = reverb.Client(f'localhost:{server.port}')
    learner_vars = [tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3)),
                    tf.Variable([1.5])]
    actor_vars = [tf.Variable(tf.zeros([2, 3])), tf.Variable([0.0])]
    pusher = variables.VariablePusher(client, learner_vars)
    puller = variables.VariableClient(client, actor_vars)
    pusher.push(step=7)
    puller.update()
    assert puller.learner_step == 7
    for a, b in zip(learner_vars, actor_vars):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    learner_vars[1].assign([2.5])
    pusher.push(step=8)  # the size-1 table keeps only the newest
    puller.update()
    assert actor_vars[1].numpy()[0] == 2.5 and puller.learner_step == 8
    assert client.server_info()[tables.VARIABLES].current_size == 1


def test_an_actor_draws_the_parameters_only_after_a_new_push(server):
    client = reverb.Client(f'localhost:{server.port}')
    learner_vars, actor_vars = [tf.Variable([1.0])], [tf.Variable([0.0])]
    pusher = variables.VariablePusher(client, learner_vars)
    puller = variables.VariableClient(client, actor_vars)

    def draws():
        return client.server_info()[tables.VARIABLES].rate_limiter_info.sample_stats.completed

    pusher.push(step=1)
    puller.update()
    assert draws() == 1 and puller.learner_step == 1
    for _ in range(3):           # nothing new published: nothing drawn
        puller.update()
    assert draws() == 1
    learner_vars[0].assign([2.0])
    pusher.push(step=2)
    puller.update()
    assert draws() == 2 and puller.learner_step == 2 and actor_vars[0].numpy()[0] == 2.0
    pusher.push(step=2)          # a push of the same step is drawn, and changes nothing
    puller.update()
    assert draws() == 3 and puller.learner_step == 2


@pytest.mark.timeout(60)     # without the bound, the draws below wait forever
def test_a_draw_on_a_restarted_empty_server_is_kept_pending_and_collected_later():
    """The race CI hit: a draw sent just as the replay server is restarted waits on its empty
    table. It must come back empty-handed within its timeout, and a later call must return
    what the table serves once something is inserted."""
    server = reverb.Server([tables.variables_table()])
    client = reverb.Client(f'localhost:{server.port}')
    client.insert([np.int64(1)], priorities={tables.VARIABLES: 1.0})
    draw = draws.BoundedDraw(client, tables.VARIABLES, timeout_s=0.5)
    assert int(draw(1)[0].data[0][0]) == 1
    server.stop()
    server = reverb.Server([tables.variables_table()], port=server.port)
    try:
        assert draw(1) is None and draw.pending
        assert draw(1) is None            # a pending draw is only looked at
        client.insert([np.int64(2)], priorities={tables.VARIABLES: 1.0})
        for _ in range(100):
            samples = draw(1)
            if samples is not None:
                break
            time.sleep(0.05)
        assert int(samples[0].data[0][0]) == 2 and not draw.pending
    finally:
        server.stop()


@pytest.mark.timeout(60)
def test_an_actor_acts_on_its_parameters_while_a_pull_is_not_served():
    """An actor whose pull the table does not serve within its timeout goes on with the
    parameters it has, and takes the pulled ones at a later update once they come. Here a
    rate limiter (one draw per push) holds the pull back, standing in for a restarted server's
    empty table, whose moment of restart a test cannot time."""
    one_draw_per_push = reverb.rate_limiters.RateLimiter(
        samples_per_insert=1.0, min_size_to_sample=1, min_diff=0.0, max_diff=1e9)
    table = reverb.Table(name=tables.VARIABLES, sampler=reverb.selectors.Lifo(),
                         remover=reverb.selectors.Fifo(), max_size=1, max_times_sampled=0,
                         rate_limiter=one_draw_per_push)
    server = reverb.Server([table])
    try:
        client = reverb.Client(f'localhost:{server.port}')
        learner_vars, actor_vars = [tf.Variable([1.0])], [tf.Variable([0.0])]
        pusher = variables.VariablePusher(client, learner_vars)
        puller = variables.VariableClient(client, actor_vars, timeout_s=0.5)
        pusher.push(step=1)
        puller.update()
        assert puller.learner_step == 1 and actor_vars[0].numpy()[0] == 1.0
        learner_vars[0].assign([2.0])
        pusher.push(step=2)
        next(client.sample(tables.VARIABLES, 1))     # another reader takes step 2's draw
        puller.update()                               # its pull waits: it goes on as it was
        assert puller.learner_step == 1 and actor_vars[0].numpy()[0] == 1.0
        learner_vars[0].assign([3.0])
        pusher.push(step=3)
        for _ in range(100):
            puller.update()
            if puller.learner_step == 3:
                break
            time.sleep(0.05)
        assert puller.learner_step == 3 and actor_vars[0].numpy()[0] == 3.0
    finally:
        server.stop()


@pytest.mark.timeout(60)     # without the republish, the actor's first pull waits forever
def test_the_last_parameters_are_published_again_on_a_restarted_server():
    """An actor restarted with the replay server waits for parameters before it acts, and a
    learner fed by that actor alone would not push again: the pusher republishes its last
    push while the table is empty."""
    server = reverb.Server([tables.variables_table()])
    client = reverb.Client(f'localhost:{server.port}')
    pusher = variables.VariablePusher(client, [tf.Variable([4.0])], republish_s=0.2)
    pusher.push(step=3)
    server.stop()
    server = reverb.Server([tables.variables_table()], port=server.port)
    try:
        actor_vars = [tf.Variable([0.0])]
        puller = variables.VariableClient(client, actor_vars)
        puller.update()                   # a new actor's first pull: waits for parameters
        assert puller.learner_step == 3 and actor_vars[0].numpy()[0] == 4.0
        assert client.server_info()[tables.VARIABLES].current_size == 1
    finally:
        server.stop()


def test_variables_of_another_network_are_refused(server):
    client = reverb.Client(f'localhost:{server.port}')
    variables.VariablePusher(client, [tf.Variable([1.0])]).push(step=1)
    puller = variables.VariableClient(client, [tf.Variable([0.0]), tf.Variable([0.0])])
    with pytest.raises(ValueError, match='same network config'):
        puller.update()


def test_episode_stats_are_drained_once(server):
    client = reverb.Client(f'localhost:{server.port}')
    reader = episode_log.EpisodeStatsReader(client)
    assert reader.drain() == []
    for actor, score in [(0, 21.0), (1, -3.0)]:
        assert episode_log.report_game(client, tables.EPISODE_STATS, actor, 0, score, 400)
    games = reader.drain()
    assert sorted((g['actor'], g['episode_return'], g['episode_frames']) for g in games) == [
        (0, 21.0, 400), (1, -3.0, 400)]
    assert reader.drain() == []


def test_a_game_reported_while_the_replay_server_is_down_is_dropped_not_raised(server):
    """An actor reporting a game as its replay server is killed (the launcher restarts it on
    its address) must go on: CI saw an actor die of this insert's RuntimeError."""
    client = reverb.Client(f'localhost:{server.port}')
    assert episode_log.report_game(client, tables.EPISODE_STATS, 0, 0, 21.0, 400)
    server.stop()
    assert not episode_log.report_game(client, tables.EPISODE_STATS, 0, 0, -3.0, 400)


def test_an_episode_longer_than_the_replay_takes_is_dropped_and_the_next_stored_whole():
    """LASER's episode tables (`adders.SequenceAdder`, `episode_tables`): an episode of more
    than `max_episode_steps` is not written, and the writer goes on to store the next episodes
    whole, frame stacks included (it once raised Reverb's ValueError on the expired references
    of the long episode; issue 61)."""
    server = reverb.Server([reverb.Table.queue(tables.QUEUE, 1000),
                            reverb.Table.queue(tables.REPLAY, 1000)])
    client = reverb.Client(f'localhost:{server.port}')
    adder = adders.SequenceAdder(client, {tables.QUEUE: adders.constant_priority()}, length=6,
                                 period=5, chunk_length=5, stack=2, episode_tables=(tables.REPLAY,),
                                 max_episode_steps=10)
    lengths, n = (7, 40, 8, 1), 0      # the 40 steps too long; the last episode unfinished
    for length in lengths:
        for t in range(length):
            older = 0 if t == 0 else n    # the frame stack: the last step's frame, or zeros
            adder.add({'observation': np.array([older, n + 1], np.float32), 'n': np.int32(n),
                       'first': t == 0})
            n += 1
    adder.close()
    stored = []
    while client.server_info()[tables.REPLAY].current_size:
        item = next(client.sample(tables.REPLAY, 1, emit_timesteps=False))
        data = dict(zip(sorted(['first', 'n', 'observation', steps.STACK_DEPTH]), item.data))
        if len(data['n']) > 1:      # an episode, not one of its placeholders
            stored.append(data)
    server.stop()
    assert [list(e['n']) for e in stored] == [list(range(7)), list(range(47, 55))]
    # Each episode's observations: the frame before its first step, then its steps' frames.
    np.testing.assert_array_equal(stored[1]['observation'][:, 0], np.arange(47, 56))
