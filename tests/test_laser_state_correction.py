"""LASER's full state correction (sec. 5.1, app. A.2): the replay holds whole episodes, each
learner replays them from their first step and carries the core state it computes with its own
current parameters; on real Breakout episodes (lives lost and time limits), alone, on a replay
two agents share, and across a population-based-training copy of another learner's weights."""
import threading

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import checkpointer
from agents.core import datasets
from agents.core import pbt
from agents.core import pbt_hook
from agents.core import population
from agents.core import steps
from agents.core import typed_config
from agents.core import variables
from agents.laser import config as laser_config
from recorded_steps import Recording
from recorded_steps import episode_kinds
from launch import experiments
from reverb_tables import tables

T, STACK = 5, 4
UPDATES = 14


def _builder(**overrides):
    c = laser_config.tiny(laser_config.LaserAtari())
    # Episodes cut at 200 frames (at most 50 steps after the no-ops) or at a lost life: about
    # ten unrolls each, of both endings.
    c = c.replace(game='breakout', unroll_length=T, frame_stack=STACK, envs_per_actor=1,
                 queue_size=1000, batch_size=6, replay_proportion=0.5, max_episode_frames=200)
    c = c.replace(**overrides)
    c = laser_config.check(c)
    return experiments.get('laser_atari').builder(c)


def _recorded_actor(builder, address, run_dir, learner_id=0, num_steps=300):
    """Runs a real actor; returns the step stream its adder was given."""
    made, recordings = builder.adder, []

    def adder(client, learner_id_):
        recordings.append(Recording(made(client, learner_id_)))
        return recordings[-1]
    builder.adder = adder
    builders.make_actor(builder, address, run_dir, actor_id=0,
                        learner_id=learner_id).run(num_steps=num_steps)
    builder.adder = made
    for recording in recordings:    # while the server runs: a writer collected after
        recording.adder.close()     # server.stop() can block for good in its close
    return recordings[0].steps


def _episodes(stream):
    """The stream's finished episodes: lists of steps from a `first` step to the next's."""
    starts = [t for t, step in enumerate(stream) if step['first']]
    return [stream[a:b] for a, b in zip(starts, starts[1:])]


def _in_order(builder):
    """The builder's tables with the replay read as a queue: every item once, in order."""
    return [t if t.name != tables.REPLAY else reverb.Table.queue(
        tables.REPLAY, 10_000, signature=t.info.signature)
        for t in builders.replay_tables(builder, 1)]


def test_the_replay_holds_each_whole_episode_and_a_slot_per_unroll(tmp_path):
    """Every finished episode, once, whole and in order, each followed by the placeholders that
    make it count one replay slot per T steps, also after a checkpoint and restore; its unrolls
    rebuilt from single frames are the actor's steps, frame stacks included, and past its end
    add nothing."""
    builder = _builder()
    checkpoints = str(tmp_path / 'replay_checkpoints')
    server = reverb.Server(_in_order(builder),
                           checkpointer=reverb.checkpointers.DefaultCheckpointer(checkpoints))
    client = reverb.Client(f'localhost:{server.port}')
    network = builder.network()
    variables.VariablePusher(client, network.trainable_variables).push(step=1)
    stream = _recorded_actor(builder, f'localhost:{server.port}', str(tmp_path))
    client.checkpoint()
    server.stop()
    restored = reverb.Server(_in_order(builder),
                             checkpointer=reverb.checkpointers.DefaultCheckpointer(checkpoints))
    client = reverb.Client(f'localhost:{restored.port}')
    items = [next(client.sample(tables.REPLAY, 1, emit_timesteps=False,
                                unpack_as_table_signature=True))
             for _ in range(client.server_info()[tables.REPLAY].current_size)]
    items = [item._replace(data=builder.packing().unpack(item.data)) for item in items]
    restored.stop()
    episodes = _episodes(stream)
    assert len(episodes) >= 5
    assert {'time limit', 'termination'} <= episode_kinds(stream)
    written = [item for item in items if item.info.priority == 1.0]
    assert len(written) == len(episodes)
    placeholders = [item for item in items if item.info.priority == 0.0]
    assert len(placeholders) == sum(-(-len(e) // T) - 1 for e in episodes)
    assert all(len(item.data['reward']) == 1 for item in placeholders)
    for item, episode in zip(written, episodes):
        assert steps.CORE_STATE not in item.data
        assert len(item.data['reward']) == len(episode)
        unrolls = steps.stacked_observations(
            datasets.episode_sequences(item.data, T + 1, T, STACK), STACK)
        assert unrolls['reward'].shape[0] == -(-len(episode) // T)
        for k in range(unrolls['reward'].shape[0]):
            for t in range(T + 1):
                position = k * T + t
                if position >= len(episode):
                    assert unrolls['mask'][k, t] == unrolls['reward'][k, t] == 0
                    assert unrolls['discount'][k, t] == 0 and not unrolls['first'][k, t]
                    continue
                expected = episode[position]
                for name in ('observation', 'action', 'reward', 'discount', 'mask', 'first',
                             'prev_action', 'prev_reward', 'behaviour_logits'):
                    np.testing.assert_array_equal(unrolls[name][k, t], expected[name])


def test_an_episode_as_long_as_the_time_limit_is_stored_and_replayed_whole(tmp_path):
    """Sec. 5.1: "We store the entire episodes". The paper config stores every episode up to
    the evaluation cap (30 minutes); here Pong, whose random play outlasts its time limit of
    1,200 frames: each episode of ~300 steps (20 times what the writer's own history holds, a
    sequence and a chunk) is stored whole, and a replayed row walks it in order from its first
    step to its last, each of its steps the actor's."""
    paper = experiments.get('laser_atari').builder(laser_config.LaserAtari())
    assert paper.max_episode_steps() == 27_001
    builder = _builder(game='pong', max_episode_frames=1_200, replay_episode_frames=1_200)
    server = reverb.Server(_in_order(builder))
    address = f'localhost:{server.port}'
    variables.VariablePusher(reverb.Client(address),
                             builder.network().trainable_variables).push(step=1)
    episodes = _episodes(_recorded_actor(builder, address, str(tmp_path), num_steps=650))
    rows = datasets.episode_rows(
        address, tables.REPLAY, 1, T + 1, T, tf.Variable(0, dtype=tf.int64), STACK,
        unpack=builder.packing().unpack_tensors).map(
            lambda data: steps.stacked_observations(data, STACK))
    unrolls = iter(rows)
    assert len(episodes) == 2 and min(len(e) for e in episodes) >= 290
    assert all(episode[-1]['mask'] == 0 for episode in episodes)    # cut by the time limit
    for episode in episodes:
        for k in range(-(-len(episode) // T)):
            unroll = next(unrolls)
            assert bool(unroll['first'][0, 0]) == (k == 0)
            for t in range(min(T, len(episode) - k * T)):
                for name in ('observation', 'action', 'reward', 'mask', 'first'):
                    np.testing.assert_array_equal(unroll[name][0, t], episode[k * T + t][name])
    server.stop()


def test_rows_learn_nothing_until_the_replay_can_be_sampled(tmp_path):
    """Episodes enter the replay once they end, and an actor blocks once its online queue is
    full: where the first episodes outlast the queue (Pong), a learner waiting for replayed
    rows would wait for ever. Until the table holds what its rate limiter waits for, each row
    gives mask-0 sequences at once; then the episodes, each from its first step."""
    builder = _builder()
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    restarts = tf.Variable(3, dtype=tf.int64)
    rows = iter(datasets.episode_rows(
        address, tables.REPLAY, 2, T + 1, T, restarts, STACK,
        unpack=builder.packing().unpack_tensors))
    taken = []
    reader = threading.Thread(target=lambda: taken.append(next(rows)), daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert taken, 'the rows waited for an empty replay'
    assert not taken[0]['mask'].numpy().any() and not taken[0]['first'].numpy().any()
    np.testing.assert_array_equal(taken[0][datasets.DRAWN_AT], [3, 3])
    variables.VariablePusher(reverb.Client(address),
                             builder.network().trainable_variables).push(step=1)
    _recorded_actor(builder, address, str(tmp_path))
    for _ in range(10):     # those the dataset took ahead while the replay filled, then episodes
        sequences = next(rows)
        if sequences['mask'].numpy().any():
            break
    server.stop()
    assert sequences['mask'].numpy().all(axis=1).any()
    assert sequences['first'].numpy()[:, 0].all()


def _carried_states(builder, address, learner_id, seed):
    """A learner of `builder` with its own parameters (`seed`) and no learning (rate 0): its
    batches and, before each update, the core state it carries for each replayed row."""
    tf.random.set_seed(seed)
    learning = builder.learning_state()
    learning.hyperparameters['learning_rate'].assign(0.0)
    before = learning.network.trainable_variables[0].numpy()
    iterator = builder.dataset(address, learner_id)
    batches, carried = [], []
    for _ in range(UPDATES):
        batch = next(iterator)
        carried.append(tf.nest.map_structure(lambda v: v.numpy(),
                                             learning.carried.variables))
        learning.update(batch)
        batches.append(batch)
    np.testing.assert_array_equal(learning.network.trainable_variables[0].numpy(), before)
    return learning.network, batches, carried


def _states_from_episode_start(network, batches, online, row, begin, end):
    """(update, state) for each update in [begin, end) whose unroll in replayed row `row` lies
    inside an episode: `network` run from that episode's first step (the initial state there)
    over the row's unrolls before it, walked forward. The row's unroll at `begin` starts one."""
    assert batches[begin]['first'][online + row, 0]
    for update in range(begin, end):
        if batches[update]['first'][online + row, 0]:     # the core resets there
            state = network.initial_state(1)
        else:
            yield update, state
        if update + 1 < end:
            unroll = {name: batches[update][name][online + row, :T, None]    # [T, 1, ...]
                      for name in ('observation', 'prev_action', 'prev_reward', 'first')}
            _, state = network.unroll(unroll['observation'], unroll['prev_action'],
                                      unroll['prev_reward'], None, unroll['first'], state)


def _assert_states(carried, update, row, expected):
    for got, want in zip(tf.nest.flatten(carried[update]), tf.nest.flatten(expected)):
        np.testing.assert_allclose(got[row], want[0], rtol=1e-5, atol=1e-5)


def _assert_states_from_episode_start(network, batches, carried, online, rows):
    inside = 0
    for row in range(rows):     # each row starts an episode at the first update
        for update, expected in _states_from_episode_start(network, batches, online, row, 0,
                                                           UPDATES):
            inside += 1
            _assert_states(carried, update, row, expected)
    return inside


def test_each_replayed_unroll_starts_from_the_state_of_the_episode_so_far(tmp_path):
    """The state a learner carries into a replayed unroll is its current network's, run from
    the episode's first step (app. A.2), wherever the unroll lies in the episode."""
    builder = _builder()
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    tf.random.set_seed(0)
    variables.VariablePusher(reverb.Client(address),
                             builder.network().trainable_variables).push(step=1)
    _recorded_actor(builder, address, str(tmp_path))
    network, batches, carried = _carried_states(builder, address, 0, seed=1)
    server.stop()
    online, rows = 3, 3
    assert _assert_states_from_episode_start(network, batches, carried, online, rows) >= 20


def test_a_shared_replay_gives_each_learner_states_from_its_own_parameters(tmp_path):
    """Two agents with different parameters write into one replay (sec. 5.4); each learner
    carries the states its own network reaches, not the other's."""
    builder = _builder(num_learners=2, replay_shared=True)
    server = reverb.Server(builders.replay_tables(builder, 2))
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    for learner_id in range(2):
        tf.random.set_seed(10 + learner_id)
        variables.VariablePusher(client, builder.network().trainable_variables,
                                 table=tables.private(tables.VARIABLES, learner_id)).push(step=1)
        _recorded_actor(builder, address, str(tmp_path), learner_id)
    learners = [_carried_states(builder, address, learner_id, seed=learner_id)
                for learner_id in range(2)]
    server.stop()
    online, rows = 3, 3
    for network, batches, carried in learners:
        assert _assert_states_from_episode_start(network, batches, carried, online, rows) >= 20
    # The other learner's network reaches other states from the same episode starts.
    (network, _, _), (_, batches, carried) = learners
    with pytest.raises(AssertionError):
        _assert_states_from_episode_start(network, batches, carried, online, rows)


# Updates after the copy: the batches tf.data had made before it (up to 8 seen), then those
# drawn after it.
AFTER_COPY = 20


@typed_config.config
class _Adapts(population.Population):
    pbt_adapted: str = typed_config.setting('entropy_cost,learning_rate', 'a test')


@typed_config.config
class _LaserAtariWithPopulation(laser_config.LaserAtari):
    population = typed_config.member(_Adapts)


def _member(builder, run_dir, dirs):
    """Learner 0's member of a population of two (IMPALA app. F's settings)."""
    c = _LaserAtariWithPopulation().replace(**builder.config.to_dict())
    return pbt.member(c.replace(pbt_population=2), run_dir, dirs, 0, fitness=lambda games: 0.0)


def _step(learning, iterator):
    """One update: (its batch, the rows' carried states before it, its metrics)."""
    batch = next(iterator)
    carried = tf.nest.map_structure(lambda v: v.numpy(), learning.carried.variables)
    return batch, carried, learning.update(batch)


def test_a_population_copy_restarts_every_replayed_row(tmp_path):
    """PBT's copy of another learner's checkpoint (the real hook and checkpoint) replaces the
    weights while the rows are inside episodes: every replayed row learns again only from a
    newly drawn episode's first step on, with the states the new weights compute from there;
    the rows' unrolls batched before the copy are masked out."""
    builder = _builder()
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    tf.random.set_seed(0)
    variables.VariablePusher(client, builder.network().trainable_variables).push(step=1)
    _recorded_actor(builder, address, str(tmp_path), num_steps=620)
    dirs = [str(tmp_path / 'member'), str(tmp_path / 'donor')]
    tf.random.set_seed(2)
    donor_builder = _builder()
    donor = donor_builder.learning_state()
    donor.hyperparameters['learning_rate'].assign(0.0)     # the copy takes it: no learning
    donor.update(next(donor_builder.dataset(address, 0)))  # its optimizer's slots
    saved = checkpointer.Checkpointer(donor, dirs[1], 'donor')
    saved.save()
    tf.random.set_seed(1)
    learning = builder.learning_state()
    hook = pbt_hook.PopulationHook(
        _member(builder, str(tmp_path), dirs), learning,
        checkpointer.Checkpointer(learning, dirs[0], 'member'),
        variables.VariablePusher(client, learning.network.trainable_variables), 'member')
    iterator = builder.dataset(address, 0)
    before = [_step(learning, iterator) for _ in range(5)]
    hook.copy_from(saved.latest)
    after = [_step(learning, iterator) for _ in range(AFTER_COPY)]
    server.stop()
    for got, want in zip(learning.network.trainable_variables, donor.network.trainable_variables):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    online, rows = 3, 3
    # The copy came while rows were inside episodes.
    assert not all(before[-1][0]['first'][online + row, 0] for row in range(rows))
    drawn_at = np.array([batch[datasets.DRAWN_AT] for batch, _, _ in after])   # [updates, rows]
    current = drawn_at == 1
    np.testing.assert_array_equal([metrics['replay_rows_masked'] for _, _, metrics in after],
                                  rows - current.sum(axis=1))
    assert not current[0].any()     # batched before the copy
    batches = [batch for batch, _, _ in after]
    carried = [state for _, state, _ in after]
    inside = 0
    for row in range(rows):
        first = int(np.argmax(current[:, row]))
        assert current[first:, row].all()     # the batches in flight, then none
        # From a newly drawn episode's start (the walk checks that it starts one).
        for update, expected in _states_from_episode_start(learning.network, batches, online,
                                                           row, first, AFTER_COPY):
            inside += 1
            _assert_states(carried, update, row, expected)
    assert inside >= 15
