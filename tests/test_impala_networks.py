"""IMPALA Figure 3 networks: shapes, parameter counts, state reset and instruction padding."""
import numpy as np
import pytest
import sonnet as snt
import tensorflow as tf

from agents.networks import impala

DMLAB_ACTIONS = 9        # IMPALA table D.2


def _num_params(module):
    return sum(int(np.prod(v.shape)) for v in module.trainable_variables)


def _recurrent_inputs(t, b, words=4, seed=0):
    rng = np.random.default_rng(seed)
    instruction = rng.integers(1, 1000, size=(t, b, words)).astype(np.int32)
    instruction[..., words // 2:] = 0                          # padded at the end
    return dict(
        observation=tf.constant(rng.integers(0, 256, (t, b, 72, 96, 3)).astype(np.uint8)),
        last_action=tf.constant(rng.integers(0, DMLAB_ACTIONS, (t, b)).astype(np.int32)),
        last_reward=tf.constant(rng.normal(0.0, 2.0, (t, b)).astype(np.float32)),
        instruction=tf.constant(instruction),
        first=tf.zeros((t, b), tf.bool))


def _slice(inputs, start, stop):
    return {name: x[start:stop] for name, x in inputs.items()}


@pytest.mark.parametrize('torso, num_convs', [('shallow', 2), ('deep', 15)])
def test_feed_forward_shapes(torso, num_convs):
    net = impala.ImpalaFeedForwardNet(num_actions=6, torso=torso)
    frames = tf.constant(np.random.default_rng(0).integers(0, 256, (2, 84, 84, 4)), tf.uint8)
    out = net(frames)
    assert out.logits.shape == (2, 6) and out.value.shape == (2,)
    assert out.logits.dtype == tf.float32
    assert sum(isinstance(m, snt.Conv2D) for m in net.submodules) == num_convs   # Figure 3


@pytest.mark.parametrize('torso', ['shallow', 'deep'])
def test_recurrent_shapes(torso):
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, torso=torso)
    out, state = net.unroll(**_recurrent_inputs(t=3, b=2), state=net.initial_state(2))
    assert out.logits.shape == (3, 2, DMLAB_ACTIONS) and out.value.shape == (3, 2)
    assert state.hidden.shape == (2, 256) and state.cell.shape == (2, 256)


def test_recurrent_without_instruction():
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, use_instruction=False)
    inputs = _recurrent_inputs(t=2, b=1)
    inputs['instruction'] = None
    out, _ = net.unroll(**inputs, state=net.initial_state(1))
    assert out.logits.shape == (2, 1, DMLAB_ACTIONS)


# Figure 3: "1.2 million" (shallow) and "1.6 million" (deep) parameters. With 72x96x3 frames,
# 9 actions and the instruction encoder (embeddings 1000x20 = 20,000; LSTM 64 = 21,760), the
# LSTM 256 over 256 + 1 + 9 + 64 inputs (601,088) and heads (2,313 + 257):
#   shallow: convs 3,088 + 8,224; Linear 7*10*32 -> 256 = 573,696         -> 1,230,426
#   deep:    15 convs 97,600;      Linear 9*12*32 -> 256 = 884,992         -> 1,628,010
@pytest.mark.parametrize('torso, expected, low, high', [
    ('shallow', 1_230_426, 1_150_000, 1_250_000),
    ('deep', 1_628_010, 1_550_000, 1_650_000)])
def test_dmlab_parameter_counts(torso, expected, low, high):
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, torso=torso, use_instruction=True)
    net.unroll(**_recurrent_inputs(t=1, b=1), state=net.initial_state(1))
    assert low <= _num_params(net) < high
    assert _num_params(net) == expected


def test_core_without_last_action_and_reward_hears_the_torso_alone():
    """`last_action_reward=False`: the LSTM's input is the torso's 256 outputs, and the
    policy and value do not move with the last action or reward."""
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, use_instruction=False,
                                    last_action_reward=False)
    inputs = dict(_recurrent_inputs(t=3, b=2), instruction=None)
    out, _ = net.unroll(**inputs, state=net.initial_state(2))
    assert net.core.trainable_variables and {
        tuple(v.shape) for v in net.core.trainable_variables if 'w_i' in v.name} == {(256, 1024)}
    other = dict(inputs, last_action=(inputs['last_action'] + 1) % DMLAB_ACTIONS,
                 last_reward=inputs['last_reward'] + 1.0)
    moved, _ = net.unroll(**other, state=net.initial_state(2))
    np.testing.assert_array_equal(out.logits.numpy(), moved.logits.numpy())
    np.testing.assert_array_equal(out.value.numpy(), moved.value.numpy())


@pytest.mark.parametrize('last_action_reward, instruction', [(True, True), (False, False)])
def test_lstm_block_cell_initialisation(last_action_reward, instruction):
    """`lstm_init='lstm_block_cell'`: the core's w_i and w_h are one Glorot-uniform kernel
    over [input, state] (TF1 LSTMBlockCell's): uniform within +-sqrt(6 / (in + 256 + 1024)),
    in the torso's 256 (+ reward and one-hot action) (+ the instruction's 64); the biases 0
    but the forget gate's 1. The instruction's LSTM 64 likewise, over its 20-wide words."""
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, use_instruction=instruction,
                                    last_action_reward=last_action_reward,
                                    lstm_init='lstm_block_cell')
    inputs = _recurrent_inputs(t=1, b=1)
    if not instruction:
        inputs['instruction'] = None
    net.unroll(**inputs, state=net.initial_state(1))
    core_in = 256 + (1 + DMLAB_ACTIONS) * last_action_reward + 64 * instruction
    lstms = [(net.core, core_in, 256)] + [
        (m, 20, 64) for m in net.submodules
        if isinstance(m, snt.LSTM) and m is not net.core]
    assert len(lstms) == 1 + instruction
    for core, fan_in, hidden in lstms:
        limit = np.sqrt(6 / (fan_in + 5 * hidden))
        weights = {v.name.split('/')[-1].split(':')[0]: v.numpy()
                   for v in core.trainable_variables}
        assert weights['w_i'].shape == (fan_in, 4 * hidden)
        for w in (weights['w_i'], weights['w_h']):
            assert np.abs(w).max() <= limit
            # A uniform's std is limit / sqrt(3); over >= 16k draws 2% is ~4 standard errors.
            assert abs(w.std() / (limit / np.sqrt(3)) - 1) < 0.02
        expected_bias = np.zeros(4 * hidden)
        expected_bias[hidden:2 * hidden] = 1.0            # gates i, f, g, o: f's bias is 1
        np.testing.assert_array_equal(weights['b'], expected_bias)


def test_state_reset_on_first_splits_episodes():
    """An unroll across an episode boundary equals the two episodes unrolled separately."""
    t, k = 5, 2
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, torso='shallow')
    inputs = _recurrent_inputs(t=t, b=2, seed=1)
    first = np.zeros((t, 2), bool)
    first[k, 0] = True                     # sequence 0 starts a new episode at step k; 1 does not
    inputs['first'] = tf.constant(first)
    rng = np.random.default_rng(2)
    start = snt.LSTMState(*(tf.constant(rng.normal(size=(2, 256)), tf.float32) for _ in 'hc'))

    whole, whole_state = net.unroll(**inputs, state=start)
    head, head_state = net.unroll(**_slice(inputs, 0, k), state=start)
    fresh, fresh_state = net.unroll(**_slice(inputs, k, t), state=net.initial_state(2))
    carried, _ = net.unroll(**_slice(inputs, k, t), state=head_state)

    for field in impala.PolicyValue._fields:
        got, before = getattr(whole, field).numpy(), getattr(head, field).numpy()
        np.testing.assert_allclose(got[:k], before, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[k:, 0], getattr(fresh, field).numpy()[:, 0],
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[k:, 1], getattr(carried, field).numpy()[:, 1],
                                   rtol=1e-5, atol=1e-5)
        # Not vacuous: without the reset, sequence 1 differs from a fresh start.
        assert not np.allclose(got[k:, 1], getattr(fresh, field).numpy()[:, 1], atol=1e-4)
    np.testing.assert_allclose(whole_state.hidden.numpy()[0], fresh_state.hidden.numpy()[0],
                               rtol=1e-5, atol=1e-5)


def test_instruction_padding_is_ignored():
    encoder = impala.InstructionEncoder()
    padded = tf.constant([[5, 7, 0, 0], [5, 0, 0, 0]], tf.int32)
    unpadded = tf.constant([[5, 7]], tf.int32)
    out = encoder(padded).numpy()
    np.testing.assert_allclose(out[0], encoder(unpadded).numpy()[0], rtol=1e-6, atol=1e-6)
    assert not np.allclose(out[0], out[1])
    assert not np.any(encoder(tf.zeros((1, 3), tf.int32)).numpy())        # empty instruction


def _conv(x, conv, stride, padding):
    return tf.nn.conv2d(x, conv.w, stride, padding) + conv.b


def _reference_torso(torso, frames):
    """Figure 3 written out with raw TF ops and the module's own weights."""
    x = tf.cast(frames, tf.float32) / 255.0
    if isinstance(torso, impala.ShallowTorso):
        x = tf.nn.relu(_conv(x, torso.convs[0], 4, 'VALID'))
        x = tf.nn.relu(_conv(x, torso.convs[1], 2, 'VALID'))
    else:
        for conv, blocks in torso.sections:
            x = tf.nn.max_pool2d(_conv(x, conv, 1, 'SAME'), 3, 2, 'SAME')
            for first_conv, second_conv in blocks:
                y = _conv(tf.nn.relu(x), first_conv, 1, 'SAME')
                x = x + _conv(tf.nn.relu(y), second_conv, 1, 'SAME')
        x = tf.nn.relu(x)
    x = tf.reshape(x, [x.shape[0], -1])
    return tf.nn.relu(tf.matmul(x, torso.linear.w) + torso.linear.b)


@pytest.mark.parametrize('torso', ['shallow', 'deep'])
def test_torso_matches_figure_3(torso):
    module = impala.make_torso(torso)
    frames = tf.constant(np.random.default_rng(5).integers(0, 256, (2, 72, 96, 3)), tf.uint8)
    got = module(frames)
    np.testing.assert_allclose(got.numpy(), _reference_torso(module, frames).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_inputs_are_scaled_and_clipped():
    frames = tf.constant([[0, 51, 255]], tf.uint8)
    np.testing.assert_allclose(impala.frames_to_float(frames).numpy(), [[0.0, 0.2, 1.0]])
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, torso='shallow')
    inputs = _recurrent_inputs(t=2, b=1, seed=4)
    outs = []
    for reward in (1.0, 7.0):                       # the network sees clip(r, -1, 1)
        inputs['last_reward'] = tf.fill((2, 1), reward)
        outs.append(net.unroll(**inputs, state=net.initial_state(1))[0].logits.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_unroll_compiles_with_xla():
    net = impala.ImpalaRecurrentNet(DMLAB_ACTIONS, torso='shallow')
    inputs = _recurrent_inputs(t=3, b=2, seed=3)
    inputs['first'] = tf.constant([[True, False], [False, False], [False, True]])
    eager, _ = net.unroll(**inputs, state=net.initial_state(2))
    compiled = tf.function(net.unroll, jit_compile=True)
    jitted, _ = compiled(**inputs, state=net.initial_state(2))
    np.testing.assert_allclose(jitted.logits.numpy(), eager.logits.numpy(), rtol=1e-4, atol=1e-4)


def test_unknown_torso_raises():
    with pytest.raises(ValueError, match="torso must be 'shallow' or 'deep'"):
        impala.ImpalaFeedForwardNet(4, torso='resnet')


def test_laser_widens_every_deep_convolution_four_times():
    """LASER sec. 5.1: the deep network with 4x the channels of figure 3 (16, 32, 32)."""
    net = impala.ImpalaFeedForwardNet(4, torso='deep', channel_multiplier=4)
    net(tf.zeros((1, 84, 84, 4), tf.uint8))
    conv_kernels = [v for v in net.trainable_variables if 'conv' in v.name and 'w:' in v.name]
    assert len(conv_kernels) == 15
    assert sorted({int(v.shape[-1]) for v in conv_kernels}) == [64, 128]
    with pytest.raises(ValueError, match='channel_multiplier only for'):
        impala.ImpalaFeedForwardNet(4, torso='shallow', channel_multiplier=4)
