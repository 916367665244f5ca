"""The Reactor agent (Gruslys et al., 2018): the paper config, bad input, the loss's treatment
of steps it must not learn from, and learner updates on sequences real actors wrote into a
loopback Reverb server (priorities, target copies, the pace of acting to learning)."""
import threading

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import variables
from agents.core.config_checks import ConfigError
from agents.networks import reactor as reactor_network
from agents.reactor import builder as reactor_builder
from agents.reactor import config as reactor_config
from agents.reactor import learning
from launch import experiments
from launch_processes import wait_for
from agents.reactor import lazy_priorities
from reverb_tables import tables


def test_paper_config_is_sec_3_4():
    c = reactor_config.ReactorAtari()
    assert (c.sequence_length, c.batch_size, c.target_update_period) == (33, 4, 1000)
    assert (c.learning_rate, c.adam_beta1) == (5e-5, 0.0)
    assert (c.retrace_lambda, c.beta_loo_truncation, c.policy_epsilon) == (1.0, 1.0, 0.01)
    assert 4 <= c.acting_steps_per_learning_step <= 6
    assert (c.frame_stack, c.action_repeat, c.total_frames) == (1, 4, 200_000_000)
    assert c.sequence_period == 1 and c.eval_protocol == 'reactor_atari_noop'
    c = reactor_config.check(c)


@pytest.mark.parametrize('field, value, message', [
    ('v_min', 10.0, '--config.v_min must be below --config.v_max, got v_min=10.0, v_max=10.0'),
    ('num_atoms', 1, '--config.num_atoms must be >= 2, got 1'),
    ('sequence_length', 1, '--config.sequence_length must be >= 2, got 1'),
    ('replay_epsilon', 1.5, '--config.replay_epsilon must be in [0, 1], got 1.5'),
    ('replay_epsilon', -0.1, '--config.replay_epsilon must be in [0, 1], got -0.1'),
    ('acting_steps_per_learning_step', 0.0,
     '--config.acting_steps_per_learning_step must be > 0, got 0.0'),
    ('min_replay_size', 2_000_000, '--config.min_replay_size=2000000 exceeds'),
    ('num_learners', 2, '--config.num_learners must be 1 (Reactor runs no sweeps), got 2'),
])
def test_bad_settings_are_one_line_errors(field, value, message):
    c = reactor_config.ReactorAtari()
    c = c.replace(**{field: value})
    with pytest.raises(ConfigError) as error:
        c = reactor_config.check(c)
    assert str(error.value).startswith(message) and '\n' not in str(error.value)


def _outputs(rng, t, b, a, n):
    def normal(*shape):
        return tf.constant(rng.normal(size=shape), tf.float32)
    return reactor_network.ReactorOutput(
        policy=tf.nn.softmax(normal(t, b, a)), q_logits=normal(t, b, a, n),
        q_distribution=tf.nn.softmax(normal(t, b, a, n)))


def test_masked_steps_are_bootstrapped_from_but_not_learnt_from():
    """A mask-0 step (the final observation of a time-limited episode) adds no loss term and
    cuts the traces: its action, behaviour probability and reward change nothing, while its
    distributions, the bootstrap of the step before, do."""
    c = reactor_config.tiny(reactor_config.ReactorAtari())
    rng = np.random.default_rng(0)
    t, b, a = 6, 3, 4
    online = _outputs(rng, t, b, a, c.num_atoms)
    target = _outputs(rng, t, b, a, c.num_atoms)
    mask = np.ones((t + 1, b))
    mask[3, 1] = 0.0
    discount = np.ones((t + 1, b))
    discount[3, 1] = 0.0                  # the mask-0 step's own discount (steps.bootstrap_step)
    data = {'mask': mask, 'discount': discount, 'reward': rng.normal(size=(t + 1, b)),
            'action': rng.integers(0, a, (t + 1, b)).astype(np.int32),
            'behaviour_prob': rng.uniform(0.2, 1.0, (t + 1, b))}
    weights = np.array([1.0, 0.5, 2.0])

    def loss_and_priorities(data, target=target):
        data = {k: tf.constant(v, tf.int32 if k == 'action' else tf.float32)
                for k, v in data.items()}
        loss, priorities, _ = learning.reactor_loss(online, target, data,
                                                    tf.constant(weights, tf.float32),
                                                    **learning.loss_scalars(c))
        return loss.numpy(), priorities.numpy()

    base = loss_and_priorities(data)
    changed = dict(data, action=data['action'].copy(), reward=data['reward'].copy(),
                   behaviour_prob=data['behaviour_prob'].copy())
    changed['action'][3, 1] = (changed['action'][3, 1] + 1) % a
    changed['reward'][3, 1] += 5.0
    changed['behaviour_prob'][3, 1] = 0.01
    for got, expected in zip(loss_and_priorities(changed), base):
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    # The target network's outputs at x_3 (entry 2 of `target`, which starts at x_1) are the
    # bootstrap of step 2, so they matter.
    moved = target._replace(q_distribution=tf.concat(
        [target.q_distribution[:2], tf.roll(target.q_distribution[2:3], 1, axis=-1),
         target.q_distribution[3:]], axis=0))
    assert not np.isclose(loss_and_priorities(data, moved)[0], base[0])


@pytest.fixture(scope='module')
def replay_run(tmp_path_factory):
    """A loopback server with Reactor's tables (tiny preset) and one real actor on Pong,
    acting in a thread until the pace table's rate limiter holds it."""
    c = reactor_config.tiny(reactor_config.ReactorAtari())
    c = reactor_config.check(c)
    builder = experiments.get('reactor_atari').builder(c)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    state = builder.learning_state()
    variables.VariablePusher(client, state.network.trainable_variables,
                             table=tables.private(tables.VARIABLES, 0)).push(0)
    actor = builders.make_actor(builder, address, str(tmp_path_factory.mktemp('run')), 0)
    threading.Thread(target=actor.run, daemon=True).start()

    def held():
        """Whether the pace table's limiter refuses the next insert (Reverb's
        RateLimiter::CanInsert), so that the actor waits: the test below checks it is held
        at min_replay_size + tolerance x ratio sequences before the first draw."""
        info = client.server_info()[reactor_builder.PACE].rate_limiter_info
        diff = ((info.insert_stats.completed + 1) * info.samples_per_insert
                - info.sample_stats.completed)
        return diff > info.max_diff

    wait_for(held, 'the actor to fill the replay until the rate limiter holds it')
    yield builder, state, client, address
    server.stop()


def test_the_pace_table_holds_actors_to_the_learner(replay_run):
    """Sec. 3.4's 4-6 acting steps per learning step: with no learning step yet, the actor is
    held once it runs `rate_limiter_tolerance` learning steps ahead of the minimum size."""
    builder, _, client, _ = replay_run
    c = builder.config
    info = client.server_info()[reactor_builder.PACE].rate_limiter_info
    assert info.sample_stats.completed == 0
    ahead = info.insert_stats.completed / c.acting_steps_per_learning_step
    bound = c.min_replay_size / c.acting_steps_per_learning_step + c.rate_limiter_tolerance
    assert bound - 1 <= ahead <= bound


def test_updates_assign_priorities_move_weights_and_copy_the_target(replay_run):
    builder, state, client, address = replay_run
    c = builder.config
    iterator = builder.dataset(address, 0)
    feedback = builder.replay_feedback(client, state, 0)
    before = [v.numpy() for v in state.network.trainable_variables]
    target_before = [v.numpy() for v in state.target_network.trainable_variables]
    replay = builder.lazy_replay(client, 0)
    batch = next(iterator)
    assert batch['observation'].shape == (c.batch_size, c.sequence_length, 84, 84, 1)
    outputs = feedback(state.update(batch))
    assert np.isfinite(outputs['loss'].numpy()) and int(state.step.numpy()) == 1
    for key in batch['keys']:
        assert replay.lazy.assigned(int(key)) is not None
    assert all(not np.array_equal(b, v.numpy())
               for b, v in zip(before, state.network.trainable_variables))
    for _ in range(c.target_update_period - 2):
        feedback(state.update(next(iterator)))
    for b, v in zip(target_before, state.target_network.trainable_variables):
        np.testing.assert_array_equal(b, v.numpy())      # 4 updates of 5: not copied yet
    feedback(state.update(next(iterator)))
    for v, w in zip(state.network.trainable_variables,
                    state.target_network.trainable_variables):
        np.testing.assert_array_equal(v.numpy(), w.numpy())
    # Frames: the actors' steps (one pace stub each) since the learner started, x 4.
    frames = int(state.frames.numpy())
    assert frames > 0 and frames % c.action_repeat == 0


def test_a_snapshot_restores_the_bookkeeping(replay_run):
    """The bookkeeping saved before a checkpoint rebuilds the same estimates; a server that
    changed after the snapshot is refused in one line."""
    builder, _, client, _ = replay_run
    replay = builder.lazy_replay(client, 0)
    replay.save()
    restored = lazy_priorities.LazyReplay(
        client, capacity=builder.config.replay_capacity,
        snapshot_table=lazy_priorities.LAZY_SNAPSHOT)
    assert restored.lazy.estimates() == pytest.approx(replay.lazy.estimates())
    assert restored.lazy.state()['keys'].tolist() == replay.lazy.state()['keys'].tolist()
    key = int(replay.lazy.state()['keys'][0])
    replay.update([key], [replay.lazy.estimate(key) + 1.0])
    with pytest.raises(lazy_priorities.ReplayDivergedError, match='went back to a checkpoint'):
        lazy_priorities.LazyReplay(client, capacity=builder.config.replay_capacity,
                                   snapshot_table=lazy_priorities.LAZY_SNAPSHOT)
