"""IMPALA sec. 5.2.2's off-policy corrections and figure D.1's reward clipping, against numpy
written from the paper's definitions; the identities that tell the corrections apart; and the
correction study's program (launch/impala_correction_study.py)."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from launch_processes import ENV
from launch_processes import ROOT
from test_vtrace import reference as vtrace_reference

from agents.impala import learning
from agents.core.config_checks import ConfigError
from agents.impala import config as impala_config
from agents.ops import off_policy
from agents.ops import rewards as rewards_lib
from agents.ops import vtrace
from launch import experiments
from launch import impala_correction_study as study

T, B, A = 7, 3, 4
EPS = off_policy.LOG_PI_EPSILON


def _softmax(logits):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _unrolls(seed, t=T + 1, b=B):
    """Time-major unrolls of t steps (the last one only bootstraps) with episode ends
    (discount 0) and mask-0 steps inside the sequences, as the actors write them."""
    rng = np.random.default_rng(seed)
    discount = np.ones((t, b), np.float32)
    discount[rng.random((t, b)) < 0.25] = 0.0
    mask = np.ones((t, b), np.float32)
    mask[2, 0] = mask[4, 1] = 0.0
    mask[rng.random((t, b)) < 0.1] = 0.0
    behaviour = rng.normal(0.0, 1.0, (t, b, A))
    behaviour[3, 2, :] = [-20.0, 5.0, 5.0, 5.0]          # mu(a) ~ 1e-11: a huge rho
    logits = behaviour + rng.normal(0.0, 1.0, (t, b, A)) * rng.choice([0.1, 2.0], (t, b, 1))
    logits[1, 1, :] = [-40.0, 0.0, 0.0, 0.0]             # pi(a) ~ 1e-18, far below epsilon
    action = rng.integers(A, size=(t, b)).astype(np.int32)
    action[3, 2] = action[1, 1] = 0
    return dict(logits=logits.astype(np.float32), behaviour_logits=behaviour.astype(np.float32),
                values=rng.normal(0.0, 1.0, (t, b)).astype(np.float32), action=action,
                reward=rng.normal(0.0, 2.0, (t, b)).astype(np.float32), discount=discount,
                mask=mask)


def _log_rhos(u):
    """log pi(a_t|x_t) - log mu(a_t|x_t) of the learnt steps, in numpy (float64)."""
    pick = lambda probs: np.take_along_axis(probs, u['action'][..., None], -1)[..., 0]  # noqa
    return (np.log(pick(_softmax(u['logits'].astype(np.float64))))
            - np.log(pick(_softmax(u['behaviour_logits'].astype(np.float64)))))[:-1]


def _n_step_reference(discounts, rewards, values, bootstrap_value, relevant):
    """No-correction from its definition: A3C's n-step return, each step's running to the end
    of the unroll or to the next step outside `relevant` and bootstrapping from the value
    there; v_s = V(x_s) and advantage 0 at a step outside `relevant`."""
    n, b = values.shape
    v_ext = np.concatenate([values, bootstrap_value[None]]).astype(np.float64)
    vs = np.array(values, np.float64)
    for j in range(b):
        for s in range(n):
            if not relevant[s, j]:
                continue
            total, scale, t = 0.0, 1.0, s
            while t < n and relevant[t, j]:
                total += scale * rewards[t, j]
                scale *= discounts[t, j]
                t += 1
            vs[s, j] = total + scale * v_ext[t, j]
    vs_next = np.concatenate([vs[1:], bootstrap_value[None]])
    advantages = np.where(relevant, rewards + discounts * vs_next - values, 0.0)
    return vs, advantages


def _targets_reference(correction, u, gamma):
    """(v_s, policy-gradient advantage) of each correction from sec. 5.2.2's definitions."""
    relevant = u['mask'][:-1] > 0
    args = (gamma * u['discount'][:-1], u['reward'][:-1], u['values'][:-1], u['values'][-1])
    if correction == off_policy.VTRACE:    # eq. 1 with rho = c = 0 at mask-0 steps
        log_rhos = np.where(relevant, _log_rhos(u), -np.inf)
        return vtrace_reference(log_rhos, *args, 1.0, 1.0, 1.0, 1.0)
    vs, advantages = _n_step_reference(*args, relevant)
    if correction == off_policy.ONE_STEP_IS:
        advantages = np.minimum(1.0, np.exp(_log_rhos(u))) * advantages
    return vs, advantages


def _loss_reference(correction, u, config):
    """Sec. 4.2's loss, summed: -log pi(a) A (log(pi(a) + epsilon) for the epsilon-correction)
    + baseline_cost 0.5 (v_s - V)^2 - entropy_cost H(pi), the last two over mask-1 steps."""
    vs, advantages = _targets_reference(correction, u, config.discount)
    probs = _softmax(u['logits'][:-1].astype(np.float64))
    pi_a = np.take_along_axis(probs, u['action'][:-1, :, None], -1)[..., 0]
    log_pi_a = np.log(pi_a + EPS) if correction == off_policy.EPSILON else np.log(pi_a)
    entropy = -np.sum(probs * np.log(probs), axis=-1) * u['mask'][:-1]
    return (-np.sum(log_pi_a * advantages)
            + config.baseline_cost * 0.5 * np.sum((vs - u['values'][:-1]) ** 2)
            - config.entropy_cost * np.sum(entropy))


def _config(**overrides):
    c = impala_config.ImpalaAtari()
    c = c.replace(**overrides)
    return c


def _loss(u, config):
    data = {k: tf.constant(u[k]) for k in ('behaviour_logits', 'action', 'reward', 'discount',
                                           'mask')}
    data['origin'] = tf.zeros([u['reward'].shape[1]], tf.int32)
    return learning.actor_critic_loss(tf.constant(u['logits']), tf.constant(u['values']), data,
                                      **learning.loss_scalars(config))


@pytest.mark.parametrize('correction', off_policy.CORRECTIONS)
def test_each_correction_matches_its_definition(correction):
    """The whole loss of each variant, episode ends and mask-0 steps included."""
    u = _unrolls(seed=off_policy.CORRECTIONS.index(correction))
    config = _config(off_policy_correction=correction, reward_clip=0.0)
    loss, metrics = _loss(u, config)
    assert np.isfinite(float(loss))
    np.testing.assert_allclose(float(loss), _loss_reference(correction, u, config), rtol=1e-4)
    assert float(metrics['mean_rho']) > 0.0


def _op_inputs(seed):
    u = _unrolls(seed)
    relevant = u['mask'][:-1]
    return u, dict(discounts=0.99 * u['discount'][:-1], rewards=u['reward'][:-1],
                   values=u['values'][:-1], bootstrap_value=u['values'][-1]), relevant


@pytest.mark.parametrize('lambda_', [1.0, 0.7])
def test_no_correction_is_vtrace_with_pi_equal_to_mu(lambda_):
    """Sec. 5.2.2's No-correction learns as if mu were pi: V-trace at log rho = 0."""
    _, args, relevant = _op_inputs(seed=10)
    ours = off_policy.no_correction(**args, relevant=relevant, lambda_=lambda_)
    on_policy = vtrace.trust_region_vtrace(tf.zeros([T, B]), **args, relevant=relevant,
                                           lambda_=lambda_)
    np.testing.assert_allclose(ours.vs, on_policy.vs, rtol=1e-6)
    np.testing.assert_allclose(ours.pg_advantages, on_policy.pg_advantages, rtol=1e-6)


def test_one_step_is_weighs_uncorrected_advantages_and_leaves_v_alone():
    """1-step IS: the value targets of No-correction ("no off-policy correction when
    optimising V(x)"), each advantage times its own min(1, rho_t); with one-step unrolls
    (no traces to cut) its policy gradient is V-trace's, its value target is not."""
    u, args, relevant = _op_inputs(seed=11)
    log_rhos = _log_rhos(u).astype(np.float32)
    ours = off_policy.one_step_importance_sampling(log_rhos, **args, relevant=relevant)
    plain = off_policy.no_correction(**args, relevant=relevant)
    np.testing.assert_allclose(ours.vs, plain.vs, rtol=1e-6)
    np.testing.assert_allclose(ours.pg_advantages, np.minimum(1.0, np.exp(log_rhos))
                               * plain.pg_advantages, rtol=1e-5, atol=1e-6)
    # At a mask-0 step an infinite unclipped rho weighs nothing (no 0 * inf).
    log_rhos[2, 0] = 200.0
    ours = off_policy.one_step_importance_sampling(log_rhos, **args, relevant=relevant,
                                                   clip_pg_rho_threshold=None)
    assert relevant[2, 0] == 0 and ours.pg_advantages[2, 0] == 0.0
    assert np.all(np.isfinite(ours.pg_advantages))

    one = {k: v[:1] for k, v in args.items() if k != 'bootstrap_value'}
    one['bootstrap_value'] = args['values'][1]
    ours = off_policy.one_step_importance_sampling(log_rhos[:1], **one, relevant=np.ones((1, B)))
    traced = vtrace.vtrace(log_rhos[:1], **one)
    np.testing.assert_allclose(ours.pg_advantages, traced.pg_advantages, rtol=1e-5)
    assert not np.allclose(ours.vs, traced.vs)


def test_epsilon_correction_bounds_the_log_and_scales_its_gradient():
    """log(pi(a) + 1e-6) is at least log(1e-6), and its gradient is that of log pi(a) times
    pi(a) / (pi(a) + 1e-6): a step whose action has pi(a) ~ 1e-18 adds almost nothing."""
    u = _unrolls(seed=12)
    logits = tf.constant(u['logits'][:-1])
    actions = tf.constant(u['action'][:-1])
    pi_a = np.take_along_axis(_softmax(u['logits'][:-1].astype(np.float64)),
                              u['action'][:-1, :, None], -1)[..., 0]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        plain = tf.reduce_sum(vtrace.log_probs_from_logits_and_actions(logits, actions))
        eps = off_policy.epsilon_log_probs(logits, actions)
        eps_sum = tf.reduce_sum(eps)
    np.testing.assert_allclose(eps, np.log(pi_a + EPS), rtol=1e-5)
    assert float(eps[1, 1]) >= np.log(EPS) - 1e-3
    # Step [t, b]'s log depends on logits[t, b] only: one gradient holds every step's.
    scale = (pi_a / (pi_a + EPS))[..., None]
    np.testing.assert_allclose(tape.gradient(eps_sum, logits),
                               tape.gradient(plain, logits) * scale, rtol=1e-3, atol=1e-7)
    assert float(tf.reduce_max(tf.abs(tape.gradient(eps_sum, logits)[1, 1]))) < 1e-9


def test_corrections_agree_on_policy():
    """With pi = mu every correction but epsilon's log is the same loss."""
    u = _unrolls(seed=13)
    u['behaviour_logits'] = u['logits'].copy()
    losses = [float(_loss(u, _config(off_policy_correction=c))[0])
              for c in (off_policy.VTRACE, off_policy.ONE_STEP_IS, off_policy.NONE)]
    np.testing.assert_allclose(losses, losses[0], rtol=1e-5)


def test_optimistic_asymmetric_clipping_is_figure_d1():
    rewards = np.array([-100.0, -2.0, -0.5, 0.0, 0.3, 1.0, 7.0], np.float32)
    expected = (0.3 * np.minimum(np.tanh(rewards.astype(np.float64)), 0)
                + 5.0 * np.maximum(np.tanh(rewards.astype(np.float64)), 0))
    np.testing.assert_allclose(rewards_lib.optimistic_asymmetric_clip(rewards), expected,
                               rtol=1e-6)
    u = _unrolls(seed=14)
    u['reward'][:] = np.random.default_rng(0).normal(0.0, 5.0, u['reward'].shape)
    clipped = float(_loss(u, _config(reward_clipping='optimistic_asymmetric'))[0])
    transformed = dict(u, reward=rewards_lib.optimistic_asymmetric_clip(u['reward']).numpy())
    np.testing.assert_allclose(clipped, float(_loss(transformed, _config(reward_clip=0.0))[0]),
                               rtol=1e-6)


@pytest.mark.parametrize('field, value', [('off_policy_correction', 'retrace'),
                                          ('reward_clipping', 'tanh')])
def test_unknown_names_are_one_line_errors(field, value):
    with pytest.raises(ConfigError, match=f'--config.{field} must be one of') as error:
        impala_config.check(_config(**{field: value}))
    assert '\n' not in str(error.value)


# The study program: its grid, what it passes on, its checks, and one tiny study end to end.

def test_the_study_grid_and_what_it_forwards(tmp_path):
    plan = study.sub_runs(str(tmp_path), ['none', 'vtrace'], ['with', 'without'])
    assert [(s.replay, s.correction, os.path.basename(s.run_dir)) for s in plan] == [
        ('without', 'vtrace', 'vtrace'), ('without', 'none', 'none'),
        ('with', 'vtrace', 'vtrace_replay'), ('with', 'none', 'none_replay')]
    assert '--config.replay_proportion=0.5' in plan[2].overrides()
    for corrections, replay in [(['v-trace'], ['with']), (['none'], ['sometimes']),
                                (['none', 'none'], ['with'])]:
        with pytest.raises(ConfigError, match='give one or more of'):
            study.sub_runs(str(tmp_path), corrections, replay)
    argv = ['study', '--game=pong', '--run_dir', 'x', '--corrections=none', '--preset=tiny',
            '--replay', 'with', '--config.learning_rate=1e-3', '--launcher=local']
    assert study.forwarded_args(argv) == ['--game=pong', '--preset=tiny',
                                          '--config.learning_rate=1e-3', '--launcher=local']


@pytest.mark.parametrize('overrides, kwargs, match', [
    ({'replay_proportion': 0.5}, {}, 'is what the study varies'),
    ({'batch_size': 1}, {}, 'each batch needs at least one'),
    ({}, {'target': 'pongg'}, 'pong'),
    ({}, {'role': 'learner'}, '--role and --sweep are not for it'),
    ({'num_learners': 2}, {}, 'each run of the study is one'),
])
def test_the_study_checks_every_run_before_starting(tmp_path, overrides, kwargs, match):
    plan = study.sub_runs(str(tmp_path), list(off_policy.CORRECTIONS), ['without', 'with'])
    arguments = dict(experiment=experiments.get('impala_atari'),
                     paper=impala_config.ImpalaAtari(), preset='tiny', fields=overrides,
                     target='pong')
    with pytest.raises(ConfigError, match=match) as error:
        study.check_plan(plan, **{**arguments, **kwargs})
    assert '\n' not in str(error.value)
    assert not os.listdir(tmp_path)


def test_a_tiny_study_runs_writes_table_2_and_skips_what_is_finished(tmp_path, capsys):
    """One run of the grid (1-Step with replay) through the program, then its resumption."""
    run_dir = str(tmp_path / 'study')
    done = subprocess.run(
        [sys.executable, '-m', 'launch.impala_correction_study',
         '--game=pong', '--preset=tiny', f'--run_dir={run_dir}', '--corrections=one_step_is',
         '--replay=with', '--config.total_frames=2000'],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    plan = study.sub_runs(run_dir, ['one_step_is'], ['with'])
    config = open(os.path.join(plan[0].run_dir, 'config.json')).read()
    assert '"off_policy_correction": "one_step_is"' in config
    assert '"replay_proportion": 0.5' in config
    table = open(os.path.join(run_dir, 'table_2.md')).read()
    assert '| with | 1-Step | ' in table and '| 54.7 |' in table   # the paper's watermaze cell
    assert 'Atari game pong' in table and table in done.stdout
    study.run_sub_run(plan[0], [])
    assert 'finished before, skipped' in capsys.readouterr().out


# The study on DeepMind Lab (--level): the program each run is, the checks, the table beside
# the level's column, and a tiny study of two runs through the fake deepmind_lab.

FAKES = os.path.join(ROOT, 'tests', 'fakes')


def test_the_level_flag_chooses_the_dmlab_program(tmp_path, monkeypatch):
    assert study.environment_of(['study', '--game=pong']) is study.ATARI
    for argv in (['study', '--level=rooms_watermaze'], ['study', '--level', 'x'],
                 ['study', '-level=x']):
        assert study.environment_of(argv) is study.DMLAB
    assert study.environment_of(['study', '--levels=x']) is study.ATARI
    plan = study.sub_runs(str(tmp_path), ['vtrace'], ['with'])
    arguments = dict(experiment=experiments.get('impala_dmlab'), paper=impala_config.ImpalaDmLab(),
                     preset='tiny', fields={})
    with pytest.raises(ConfigError, match="^--level: unknown DeepMind Lab level 'rooms_watermase'"
                       "; did you mean: rooms_watermaze?") as error:
        study.check_plan(plan, target='rooms_watermase', **arguments)
    assert '\n' not in str(error.value)
    fake = importlib.util.spec_from_file_location('deepmind_lab',
                                                  os.path.join(FAKES, 'deepmind_lab.py'))
    module = importlib.util.module_from_spec(fake)
    fake.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, 'deepmind_lab', module)   # with DeepMind Lab, it checks
    study.check_plan(plan, target='Seekavoid Arena 01', **arguments)
    assert not os.listdir(tmp_path)
    os.makedirs(plan[0].run_dir)                 # an Atari study's run where DMLab's would go
    with open(os.path.join(plan[0].run_dir, 'config.json'), 'w') as f:
        f.write('{"experiment": "impala_atari", "game": "pong"}')
    with pytest.raises(ConfigError, match='holds a run of impala_atari, not of impala_dmlab'):
        study.check_plan(plan, target='seekavoid_arena_01', **arguments)


def _result(game, frames=1000):
    return study.Result(game, frames, 1.0, 1, 'impala_dmlab_training', 2.0)


def test_a_level_outside_table_2_sits_beside_all_five_columns(tmp_path):
    plan = study.sub_runs(str(tmp_path), ['none'], ['without'])
    table = study.table_2(plan, {plan[0]: _result('rooms_select_nonmatching_object')},
                          study.DMLAB)
    assert "rooms_select_nonmatching_object, which is not one of table 2's tasks" in table
    assert '| without | No-correction | 1,000 | 1.0 | 2.0 | 40.3 | 29.1 | 5.0 | 94.9 | 16.1 |' \
        in table
    assert 'mean return of the last 1 training games (protocol impala_dmlab_training' in table


def test_a_tiny_dmlab_study_writes_table_2_beside_its_level(tmp_path):
    """V-trace with replay on seekavoid_arena_01 (a classic level, loaded by its bare name)
    through launch/impala_dmlab.py and the fake deepmind_lab: one cell (the Atari study test
    runs the grid)."""
    run_dir = str(tmp_path / 'study')
    env = dict(ENV, PYTHONPATH=os.pathsep.join(filter(None, [FAKES, ENV.get('PYTHONPATH')])),
               DEEPMIND_LAB_FAKE_EPISODE_FRAMES='40')
    done = subprocess.run(
        [sys.executable, '-m', 'launch.impala_correction_study', '--level=seekavoid_arena_01',
         '--preset=tiny', f'--run_dir={run_dir}', '--corrections=vtrace', '--replay=with',
         '--config.total_frames=400'],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count('-m launch.impala_dmlab --level=seekavoid_arena_01') == 1
    (sub_run,) = study.sub_runs(run_dir, ['vtrace'], ['with'])
    config = open(os.path.join(sub_run.run_dir, 'config.json')).read()
    assert '"experiment": "impala_dmlab"' in config and '"torso": "shallow"' in config
    assert '"tasks": "seekavoid_arena_01"' in config
    assert '"replay_proportion": 0.5' in config
    table = open(os.path.join(run_dir, 'table_2.md')).read()
    assert "the DeepMind Lab level seekavoid_arena_01, beside table 2's column for it" in table
    assert 'protocol impala_dmlab_training: table 2 reports training returns' in table
    header, rows = table.splitlines()[4], table.splitlines()[6:]
    assert header.endswith('| ours, training | paper, seekavoid_arena_01 |'), header
    assert rows[0].startswith('| with | V-trace | ') and rows[0].endswith('| 46.9 |')
    assert table in done.stdout
    csv_rows = open(os.path.join(run_dir, 'table_2.csv')).read().splitlines()
    assert csv_rows[1].startswith('with,V-trace,level,seekavoid_arena_01,')
