"""Ape-X DQN on Atari and Ape-X DPG on dm_control, in one process on a real Reverb server:
actors write prioritized N-step transitions, the learner trains, writes priorities back and
counts the actors' frames."""
import contextlib
import csv
import os

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.apex import acting
from agents.apex import builder as apex_builder
from agents.apex import config as apex_config
from agents.core import builders
from agents.core import transitions
from agents.core import variables
from agents.reactor import config as reactor_config
from launch import experiments
from reverb_tables import tables

STEPS = 20


def _priorities(client, draws=400):
    """key -> priority of the items a few hundred samples reach."""
    return {int(s.info.key): float(s.info.priority)
            for s in client.sample(tables.PRIORITIZED, draws, emit_timesteps=False)}


def _train(builder, run_dir):
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    learner = builders.make_learner(builder, address, run_dir)
    actor = builders.make_actor(builder, address, run_dir, actor_id=0)
    learner.push_parameters()   # as Learner.run does first (at step 0)
    actor.run(num_steps=100)
    inserted = client.server_info()[tables.PRIORITIZED].current_size
    before = _priorities(client)
    learner.run(max_steps=STEPS)
    after = _priorities(client)
    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        rows = list(csv.DictReader(f))
    server.stop()
    return learner, inserted, before, after, rows


def _check_training(builder, learner, inserted, before, after, rows):
    c = builder.config
    # 100 batched steps of 2 envs, less the last N steps of each open episode and what waits
    # in the adders' local buffers for a full batch.
    assert inserted >= 2 * (100 - c.n_step - (c.transition_batch_size - 1))
    assert learner.step == STEPS
    # Frames are the actors' environment frames (transitions x action repeat), not samples.
    frames = learner.frames
    assert frames == inserted * c.action_repeat
    losses = [float(row['loss']) for row in rows]
    assert all(np.isfinite(losses)) and len(set(losses)) > 1
    common = set(before) & set(after)
    changed = [k for k in common if abs(before[k] - after[k]) > 1e-6]
    assert len(changed) >= 10, 'the learner wrote new priorities back'


def test_apex_dqn_trains_on_atari(tmp_path):
    c = apex_config.tiny_dqn(apex_config.ApexDQNAtari())
    c = c.replace(game='pong', noop_max=3, max_episode_frames=300)
    builder = experiments.get('apex_dqn_atari').builder(c)
    learner, *results = _train(builder, str(tmp_path))
    _check_training(builder, learner, *results)
    # Each finished game is logged with the epsilon_i of its environment (sec. 4.1).
    with open(os.path.join(tmp_path, 'logs', 'episodes.csv')) as f:
        games = list(csv.DictReader(f))
    assert games
    epsilons = acting.actor_epsilons(c.num_actors * c.envs_per_actor, c.epsilon, c.epsilon_alpha)
    for game in games:
        i = int(game['actor']) * c.envs_per_actor + int(game['env'])
        assert float(game['epsilon']) == pytest.approx(epsilons[i]), game
    assert {float(g['epsilon']) for g in games} != {float(epsilons[0])}  # both environments'
    # The target network was copied at step 20 (period 5) and only then.
    state = learner.state
    for online, target in zip(state.network.variables, state.target_network.variables):
        np.testing.assert_array_equal(online.numpy(), target.numpy())


def test_apex_dpg_trains_on_control(tmp_path):
    c = apex_config.tiny(apex_config.ApexDPGControl()).replace(task='cartpole_swingup')
    builder = experiments.get('apex_dpg_control').builder(c)
    _check_training(builder, *_train(builder, str(tmp_path)))


def test_apex_dqn_and_reactor_read_dqns_pipeline_alike():
    """Both defer to DQN's Atari pipeline (Ape-X appendix C, Reactor sec. 4.1), whose training
    ends an episode at a lost life; what that pipeline fixes is the same in both configs."""
    apex, reactor = apex_config.ApexDQNAtari(), reactor_config.ReactorAtari()
    for field in ('action_set', 'action_repeat', 'max_pool_frames', 'screen_size',
                  'life_loss_ends_episode', 'noop_max', 'reward_clip'):
        assert apex[field] == reactor[field], field
    assert apex.life_loss_ends_episode


def test_actor_epsilons_follow_sec_4_1():
    eps = acting.actor_epsilons(8, 0.4, 7.0)
    assert eps[0] == pytest.approx(0.4) and eps[-1] == pytest.approx(0.4 ** 8)
    np.testing.assert_allclose(eps, [0.4 ** (1 + 7 * i / 7) for i in range(8)])


@contextlib.contextmanager
def _dpg_batch(reward, **overrides):
    """Ape-X DPG's builder on cartpole_swingup and one batch of its transitions, each with
    `reward`, from a real Reverb server (stopped on exit)."""
    c = apex_config.tiny(apex_config.ApexDPGControl())
    c = c.replace(task='cartpole_swingup', min_replay_size=c.batch_size, replay_readers=1,
                 **overrides)
    builder = experiments.get('apex_dpg_control').builder(c)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    adder = builder.adder(reverb.Client(address), learner_id=0)
    spec = builder.step_spec()
    rng = np.random.default_rng(0)
    for _ in range(4 * c.batch_size):
        adder.add({'observation': rng.normal(size=spec['observation'].shape).astype(np.float32),
                   'action': np.zeros(spec['action'].shape, np.float32),
                   'reward': np.float32(reward), 'discount': np.float32(1),
                   'mask': np.float32(1), 'q_value': np.float32(0),
                   'bootstrap_value': np.float32(0)})
    adder.flush()
    try:
        yield builder, next(builder.dataset(address, learner_id=0))
    finally:
        server.stop()


def test_dpg_critic_gradient_norm_is_clipped_to_40():
    """Appendix D, "otherwise as per DQN": the critic's gradients are applied with their global
    norm clipped to 40 (Adam's second moment after one step holds the clipped gradient)."""
    with _dpg_batch(reward=1e4) as (builder, batch):   # a critic gradient far beyond 40
        state = builder.learning_state()
        outputs = state.update(batch)
    assert float(outputs['grad_norm']) > 1e3
    optimizer = state.critic_optimizer
    applied_norm = np.sqrt(sum(np.sum(v.numpy()) for v in optimizer.v) / (1 - optimizer.beta2))
    assert applied_norm == pytest.approx(builder.config.critic_max_grad_norm, rel=1e-3)


def _dpg_actor_update(**overrides):
    """One Ape-X DPG update from a critic whose dq/da is far beyond 1 (its output layer x50):
    the actor's gradient as applied (Adam's first moment after one step is (1 - beta1) x the
    gradient), the actor's parameter gradient of the batch-mean loss whose d/da is a given
    -dq/da / B, and dq/da of the critic before and after its own update."""
    with _dpg_batch(reward=1.0, learning_rate=0.1, **overrides) as (builder, batch):
        state = builder.learning_state()
        for variable in state.network.critic.trainable_variables[-2:]:
            variable.assign(variable * 50.0)
        before = builder.network()
        variables.copy_variables(state.network, before)
        observation = transitions.stacked_transitions(batch.data)['observation']
        state.update(batch)
    actions = before.policy(observation)

    def dqda(critic):
        with tf.GradientTape() as tape:
            tape.watch(actions)
            q = critic(observation, actions)
        return tape.gradient(q, actions)

    def actor_gradient(dq_da):
        with tf.GradientTape() as tape:
            a = before.policy(observation)
        return [g.numpy() for g in tape.gradient(
            a, before.policy.trainable_variables,
            output_gradients=-dq_da / builder.config.batch_size)]

    optimizer = state.policy_optimizer
    applied = [m.numpy() / (1 - optimizer.beta1) for m in optimizer.m]
    return (applied, actor_gradient, dqda(before.critic), dqda(state.network.critic),
            builder.config.actor_gradient_clip)


def _same(applied, gradients):
    """Equal up to float32 rounding: an element near 0 is held to its tensor's scale, not to 0."""
    return all(np.allclose(a, g, rtol=1e-4, atol=1e-5 * np.abs(g).max())
               for a, g in zip(applied, gradients))


def test_dpg_actor_follows_the_clipped_dqda():
    """Appendix D clips "the gradient used to update the actor network" to [-1, 1] element-wise:
    dq/da (trfl's `dpg(..., dqda_clipping)`), not the actor's parameter gradients."""
    applied, actor_gradient, unclipped, _, clip = _dpg_actor_update()
    assert np.abs(unclipped).max() > 1.0                      # the clip binds
    assert _same(applied, actor_gradient(tf.clip_by_value(unclipped, -clip, clip)))
    assert not _same(applied, actor_gradient(unclipped))
    assert not _same(applied, [np.clip(g, -clip, clip) for g in actor_gradient(unclipped)])


def test_dpg_actor_follows_the_critic_before_its_update():
    """The actor's gradient comes from the critic as it was before this step's critic update
    (D4PG's order). With the clip out of the way (it would map both critics' dq/da, far beyond
    1, to the same 1s), the two critics' gradients differ."""
    applied, actor_gradient, before, after, _ = _dpg_actor_update(actor_gradient_clip=1e9)
    assert not np.allclose(before, after, rtol=1e-3)
    assert _same(applied, actor_gradient(before))
    assert not _same(applied, actor_gradient(after))


def _layer_norm_mlp(x, layers, norm):
    """Acme's LayerNormMLP (activate_final): Linear, LayerNorm (epsilon 1e-5, then scale and
    offset), tanh; then Linear and ELU for each later layer."""
    (w, b), *rest = layers
    h = x @ w + b
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    h = np.tanh(h * norm['scale'] + norm['offset'])
    for w, b in rest:
        h = h @ w + b
        h = np.where(h > 0, h, np.expm1(h))
    return h


def _linears_and_norm(module):
    """A Sonnet MLP's [(w, b)] in creation order and its LayerNorm's {scale, offset}."""
    named = [(v.name.split('/')[-1].split(':')[0], v.numpy()) for v in module.trainable_variables]
    norm = {name: value for name, value in named if name in ('scale', 'offset')}
    linear = [value for name, value in named if name in ('w', 'b')]
    return [(linear[i + 1], linear[i]) for i in range(0, len(linear), 2)], norm


def test_dpg_d4pg_network_is_acmes_layer_norm_mlps():
    """`--config.network=d4pg` builds Acme D4PG's control torsos (actor 256-256-256, critic
    512-512-256, LayerNorm after the first layer, ELU after the others) under Ape-X DPG's heads
    (a tanh actor scaled to the bounds, one critic value); its first actions sit near the
    bounds' middle (Acme's near-zero output layer). Checked against numpy on its variables."""
    c = apex_config.tiny(apex_config.ApexDPGControl()).replace(network='d4pg')
    action_spec = type('Bounds', (), dict(minimum=np.full(6, -1.0), maximum=np.full(6, 2.0)))
    network = apex_builder.actor_critic_network((tf.TensorSpec([24]), action_spec),
                                                c.learning.network, c.runtime.precision)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 24)).astype(np.float32)
    a = rng.uniform(-1, 2, size=(5, 6)).astype(np.float32)

    linears, norm = _linears_and_norm(network.policy)
    assert [w.shape[1] for w, _ in linears] == [256, 256, 256, 6]
    for w, _ in linears[:-1]:         # Acme's uniform within +-sqrt(3 x 0.333 / fan_out)
        assert 0.95 < np.abs(w).max() * np.sqrt(w.shape[1]) <= 1.0
    (w, b), hidden = linears[-1], linears[:-1]
    expected = 0.5 + 1.5 * np.tanh(_layer_norm_mlp(x, hidden, norm) @ w + b)
    np.testing.assert_allclose(network.policy(x).numpy(), expected, rtol=1e-5, atol=1e-5)
    assert np.abs(expected - 0.5).max() < 0.05                    # near the middle at first

    linears, norm = _linears_and_norm(network.critic)
    assert [w.shape[1] for w, _ in linears] == [512, 512, 256, 1]
    (w, b), hidden = linears[-1], linears[:-1]
    expected = (_layer_norm_mlp(np.concatenate([x, a], 1), hidden, norm) @ w + b)[:, 0]
    np.testing.assert_allclose(network.critic(x, a).numpy(), expected, rtol=1e-4, atol=1e-5)
