"""bfloat16 networks (issue 37): float32 variables and outputs close to float32's, a bfloat16
learner update of every agent with a float32 loss, V-trace's reference check on a bfloat16
network's outputs, and `--config.precision=bfloat16` refused where no unit computes it."""
import numpy as np
import pytest
import reverb
import sonnet as snt
import tensorflow as tf

import test_vtrace
from agents.core import builders
from agents.core import runtime_config
from agents.core import variables
from agents.core.config_checks import ConfigError
from agents.networks import dpg
from agents.networks import dqn
from agents.networks import impala
from agents.networks import layers
from agents.networks import reactor
from agents.ops import vtrace
from launch import configs
from launch import experiments
from launch import input_checks
from launch import processor
from launch import runtime

_RNG = np.random.default_rng(0)
_FRAMES = tf.constant(_RNG.integers(0, 256, (5, 3, 84, 84, 4), np.uint8))   # [T, B, ...]
_FIRST = tf.constant(_RNG.random((5, 3)) < 0.2)
_FEATURES = tf.constant(_RNG.normal(size=(3, 24)), tf.float32)


def _impala(precision, torso):
    return impala.ImpalaFeedForwardNet(6, torso=torso, precision=precision), lambda n: n(
        _FRAMES[0])


def _impala_lstm(precision):
    return impala.ImpalaRecurrentNet(6, use_instruction=False, precision=precision), \
        lambda n: n.unroll(_FRAMES, tf.zeros((5, 3), tf.int32), tf.ones((5, 3)), None, _FIRST,
                           n.initial_state(3))


def _dqn(precision):
    return dqn.DuelingQNetwork(6, precision=precision), lambda n: n(_FRAMES[0])


def _dpg(precision, network='appendix_d'):
    def call(n):
        actions = n.policy(_FEATURES)
        return actions, n.critic(_FEATURES, actions)
    return dpg.ActorCritic(-np.ones(4), np.ones(4), precision, network), call


def _reactor(precision):
    return reactor.ReactorNet(6, 11, precision=precision), lambda n: n.unroll(
        _FRAMES[..., :1], _FIRST, n.initial_state(3))


NETWORKS = {'impala_shallow': lambda p: _impala(p, 'shallow'),
            'impala_deep': lambda p: _impala(p, 'deep'), 'impala_lstm': _impala_lstm,
            'dqn': _dqn, 'dpg': _dpg, 'dpg_d4pg': lambda p: _dpg(p, 'd4pg'),
            'reactor': _reactor}


def _pair(name):
    """The network in float32 and in bfloat16 with the same variables, and its call."""
    tf.random.set_seed(0)
    (single, call), (half, _) = NETWORKS[name]('float32'), NETWORKS[name]('bfloat16')
    call(single), call(half)
    variables.copy_variables(single, half)
    return single, half, call


@pytest.mark.parametrize('name', list(NETWORKS))
def test_bfloat16_networks_keep_float32_variables_and_give_float32_close_to_it(name):
    single, half, call = _pair(name)
    assert {v.dtype for v in half.variables} == {tf.float32}
    for a, b in zip(tf.nest.flatten(call(single)), tf.nest.flatten(call(half))):
        assert b.dtype == a.dtype == tf.float32
        # bfloat16's 8-bit significand rounds each layer's inputs by up to 0.4%; over up to 15
        # layers, into outputs that are sums of many terms (near 0 at initialisation), the
        # error reached 7% of the largest output here.
        scale = float(tf.reduce_max(tf.abs(a)))
        np.testing.assert_allclose(b.numpy(), a.numpy(), atol=0.15 * scale)
        assert not np.array_equal(b.numpy(), a.numpy())     # it did compute in bfloat16


def test_in_float32_the_layers_are_sonnets():
    """float32 is the papers' network, bit for bit: every cast is the identity."""
    x = tf.constant(_RNG.normal(size=(3, 8, 8, 2)), tf.float32)
    for ours, theirs, call in [
            (layers.Linear(5), snt.Linear(5), lambda m: m(tf.reshape(x, [3, -1]))),
            (layers.Conv2D(4, 3, stride=2, padding='VALID'),
             snt.Conv2D(4, 3, stride=2, padding='VALID'), lambda m: m(x))]:
        call(ours), call(theirs)
        for a, b in zip(ours.variables, theirs.variables):
            b.assign(a)
        np.testing.assert_array_equal(call(ours).numpy(), call(theirs).numpy())


def test_vtrace_reference_holds_on_a_bfloat16_networks_outputs():
    """The loss's operators get float32 from a bfloat16 network and compute in it: V-trace on
    its logits and values matches the float64 brute-force sum of IMPALA eq. 1."""
    network, call = _impala('bfloat16', 'shallow')
    outputs = snt.BatchApply(network, num_dims=2)(_FRAMES)        # [T, B, ...]
    assert outputs.logits.dtype == outputs.value.dtype == tf.float32
    actions = tf.constant(_RNG.integers(0, 6, (4, 3)), tf.int32)
    behaviour = tf.constant(_RNG.normal(size=(4, 3, 6)), tf.float32)
    inputs = dict(
        log_rhos=(vtrace.log_probs_from_logits_and_actions(outputs.logits[:-1], actions)
                  - vtrace.log_probs_from_logits_and_actions(behaviour, actions)),
        discounts=tf.fill((4, 3), 0.9), rewards=tf.constant(_RNG.normal(size=(4, 3)), tf.float32),
        values=outputs.value[:-1], bootstrap_value=outputs.value[-1])
    clips = dict(clip_rho_threshold=1.0, clip_c_threshold=1.0, clip_pg_rho_threshold=1.0,
                 lambda_=1.0)
    out = vtrace.vtrace(**inputs, **clips)
    assert out.vs.dtype == out.pg_advantages.dtype == tf.float32
    vs, pg_advantages = test_vtrace.reference(**{k: v.numpy() for k, v in inputs.items()},
                                              **clips)
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.pg_advantages.numpy(), pg_advantages, rtol=1e-5, atol=1e-5)


# experiment -> (batched actor steps that fill its tables for one batch, tiny preset changes)
UPDATES = {
    'impala_atari': (12, {}),
    'laser_atari': (40, {'game': 'breakout', 'batch_size': 6, 'replay_proportion': 0.5,
                         'queue_size': 1000}),
    'apex_dqn_atari': (80, {}),
    'apex_dpg_control': (80, {}),
    'reactor_atari': (30, {}),
}


@pytest.mark.parametrize('name', list(UPDATES))
def test_a_bfloat16_learner_update_of_every_agent_has_a_float32_loss(name, tmp_path):
    """One update of the agent's own learning state in bfloat16, on a batch of its own
    dataset that a real actor filled (tiny preset): its loss is float32 and finite, and the
    variables and optimizer state it trained stay float32."""
    experiment = experiments.get(name)
    num_steps, fields = UPDATES[name]
    config = experiment.check(experiment.presets['tiny'](experiment.paper_config()).replace(
        **fields, precision='bfloat16'))
    builder = experiment.builder(config)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    state = builder.learning_state()
    before = [v.numpy() for v in state.network.trainable_variables]
    variables.VariablePusher(reverb.Client(address),
                             state.network.trainable_variables).push(0)
    builders.make_actor(builder, address, str(tmp_path), actor_id=0).run(num_steps=num_steps)
    metrics = state.update(next(builder.dataset(address, 0)))
    server.stop()
    assert metrics['loss'].dtype == tf.float32 and np.isfinite(metrics['loss'].numpy())
    assert float(metrics['nonfinite']) == 0.0
    assert {v.dtype for v in state.variables if v.dtype.is_floating} == {tf.float32}
    assert any(not np.array_equal(b, v.numpy())
               for b, v in zip(before, state.network.trainable_variables))


def test_cpu_flags_are_read_from_cpuinfo():
    with_units = 'processor\t: 0\nflags\t\t: fpu avx512f amx_bf16 avx512_bf16 amx_tile\n'
    assert processor.cpu_units(with_units) == ('avx512_bf16', 'amx_bf16')
    assert processor.cpu_units('processor\t: 0\nflags\t\t: fpu avx2 avx512f\n') == ()
    assert processor.gpu_units(['7.5', '8.0', '8.6']) == ('GPU 8.0', 'GPU 8.6')


def test_bfloat16_is_refused_in_one_line_without_units():
    config = runtime_config.Runtime(experiment='any', eval_protocol='any', precision='bfloat16')
    with pytest.raises(ConfigError, match=r'^--config.precision=bfloat16: this machine has no '
                                          r'bfloat16 units \(no avx512_bf16 or amx_bf16 '
                                          r'.*: use --config.precision=float32$'):
        input_checks.precision(config, units=processor.cpu_units('flags\t: fpu avx2\n'))
    input_checks.precision(config, units=('amx_bf16',))
    input_checks.precision(config.replace(precision='float32'), units=())


def test_a_run_resumed_in_another_precision_says_so(tmp_path):
    experiment = experiments.get('impala_atari')
    paper = experiment.paper_config()
    first = configs.resolve(experiment, paper=paper, run_dir=str(tmp_path), preset='tiny')
    assert configs.precision_note(first) is None
    first.write()
    same = configs.resolve(experiment, paper=paper, run_dir=str(tmp_path))
    assert configs.precision_note(same) is None
    other = configs.resolve(experiment, paper=paper, run_dir=str(tmp_path),
                            fields={'precision': 'bfloat16'})
    assert configs.precision_note(other) == (
        f'resuming in precision bfloat16: {tmp_path} trained in float32 until now (its '
        f'float32 checkpoints read back in either)')


class _StopBeforeAnyRole(Exception):
    pass


class _NoRoles:
    """A launcher that starts nothing: the run stops where its first role would start."""
    address = 'localhost:1'

    def process(self, *args, **kwargs):
        raise _StopBeforeAnyRole

    def describe(self):
        return 'no roles'

    def close(self):
        pass


def test_the_resume_note_heads_the_learners_log(tmp_path):
    """The launcher's console is gone when the run is read later: the note is also the first
    line of this sitting in the learner's log (RUN_DIR/logs/learner.log)."""
    experiment = experiments.get('impala_atari')
    paper = experiment.paper_config()
    configs.resolve(experiment, paper=paper, run_dir=str(tmp_path), preset='tiny').write()
    other = configs.resolve(experiment, paper=paper, run_dir=str(tmp_path),
                            fields={'precision': 'bfloat16'})
    with pytest.raises(_StopBeforeAnyRole):
        runtime.run_role(module='launch.impala_atari', spec=other, role='local',
                         replay_address=None, actor_id=0, learner_id=0, replay_wait_s=1.0,
                         launcher=_NoRoles)
    log = (tmp_path / 'logs' / 'learner.log').read_text()
    assert log == f'[launcher] {configs.precision_note(other)}\n'
