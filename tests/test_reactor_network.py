"""Reactor network (Table 3, Figure 7): layer sizes and parameters against the table's CSV,
the mixed policy, the policy's gradient block, and LSTM state handling."""
import re

import numpy as np
import pytest
import sonnet as snt
import tensorflow as tf

from agents.networks import reactor
from paper_tables import tables

NUM_ACTIONS = 6
NUM_ATOMS = 51
EPSILON = 0.01
TABLE = tables.load('reactor_table_3_network.csv')
SYMBOLS = {'num_actions': NUM_ACTIONS, 'num_bins': NUM_ATOMS}


def _size(cell):
    """'84x84x1' -> (84, 84, 1); 'num_actions x num_bins' -> (6 * 51,); 128.0 -> (128,)."""
    if isinstance(cell, float):
        return (int(cell),)
    dims = [SYMBOLS[d] if d in SYMBOLS else int(d) for d in re.split(r'\s*x\s*', cell)]
    return tuple(dims) if len(dims) == 3 else (int(np.prod(dims)),)


def _layer_name(layer):
    if isinstance(layer, snt.Conv2D):
        return 'Conv'
    if isinstance(layer, snt.Linear):
        return 'Linear'
    if isinstance(layer, snt.LSTM):
        return 'LSTM'
    if isinstance(layer, reactor.MixWithUniform):
        return 'Mix with uniform'
    return {reactor.concat_relu: 'ConcatReLU', tf.nn.softmax: 'Softmax'}[layer]


def _inputs(t, b, channels=1, seed=0):
    rng = np.random.default_rng(seed)
    return (tf.constant(rng.integers(0, 256, (t, b, 84, 84, channels)), tf.uint8),
            tf.zeros((t, b), tf.bool))


def _trace(net, channels=1):
    """Runs one frame through every layer in Table 3's order -> [(block, layer, module, input
    shape, output shape)], shapes without the batch axis."""
    rows = []

    def walk(blocks, stack, x):
        flatten_input = None
        for layer in stack.layers:
            y = layer(x)
            if isinstance(layer, snt.Flatten):
                flatten_input, blocks = x.shape[1:], blocks[1:]
            else:
                in_shape = flatten_input if flatten_input is not None else x.shape[1:]
                rows.append((blocks[0], _layer_name(layer), layer, tuple(in_shape),
                             tuple(y.shape[1:])))
                flatten_input = None
            x = y
        return x

    def lstm(block, core, x):
        y, _ = core(x, core.initial_state(1))
        rows.append((block, 'LSTM', core, tuple(x.shape[1:]), tuple(y.shape[1:])))
        return y

    frames = reactor.impala.frames_to_float(_inputs(1, 1, channels)[0][0])
    features = walk(['convolutional', 'fully_connected'], net.torso, frames)
    walk(['recurrent_policy'], net.policy_head, lstm('recurrent_policy', net.policy_lstm,
                                                     features))
    q_core = lstm('recurrent_q', net.q_lstm, features)
    walk(['value_logit_head'], net.value_head, q_core)
    walk(['advantage_logit_head'], net.advantage_head, q_core)
    return rows


def _expected_variable_shapes(row):
    """Table 3 row -> {Sonnet variable name: shape} of its layer, empty without parameters."""
    in_size, out = _size(row['input_size']), row['output']
    if row['layer'] == 'Conv':
        kernel = tuple(int(k) for k in row['kernel'].split('x'))
        return {'w': (*kernel, in_size[-1], int(out)), 'b': (int(out),)}
    if row['layer'] == 'Linear':
        units = _size(out)[0]
        return {'w': (int(np.prod(in_size)), units), 'b': (units,)}
    if row['layer'] == 'LSTM':
        hidden = int(out)
        return {'w_i': (in_size[0], 4 * hidden), 'w_h': (hidden, 4 * hidden),
                'b': (4 * hidden,)}
    return {}


@pytest.fixture(scope='module')
def traced():
    net = reactor.ReactorNet(NUM_ACTIONS, NUM_ATOMS, EPSILON)
    return net, _trace(net)


def test_layers_match_table_3(traced):
    _, rows = traced
    assert len(rows) == len(TABLE.rows) == 21
    for (block, name, _, in_shape, out_shape), row in zip(rows, TABLE.rows):
        assert (block, name) == (row['block'], row['layer'][:len(name)]), row
        assert name == row['layer'] or name == 'Mix with uniform', row
        assert in_shape == _size(row['input_size']), row
        if name == 'ConcatReLU':
            assert out_shape == (*in_shape[:-1], 2 * in_shape[-1]), row
        elif name == 'Conv':
            assert out_shape[-1] == int(row['output']), row
            kernel, stride = int(row['kernel'].split('x')[0]), int(row['stride'])
            assert out_shape[0] == (in_shape[0] - kernel) // stride + 1, row     # VALID
        else:
            assert out_shape == _size(row['output']), row


def test_parameters_match_table_3(traced):
    net, rows = traced
    total = 0
    for (_, _, layer, _, _), row in zip(rows, TABLE.rows):
        expected = _expected_variable_shapes(row)
        variables = getattr(layer, 'trainable_variables', ())
        assert {v.name.split('/')[-1].split(':')[0]: tuple(v.shape)
                for v in variables} == expected, row
        total += sum(int(np.prod(shape)) for shape in expected.values())
    # Nothing outside the table: convs 1,040 + 16,416 + 18,464; linear 401,536; LSTMs
    # 2 x 197,120; heads 4,128 + 390 (policy), 4,128 + 3,315 (value), 4,128 + 19,890
    # (advantage), with 6 actions and 51 bins.
    assert total == sum(int(np.prod(v.shape)) for v in net.trainable_variables) == 867_675


def test_frame_stack_changes_only_conv_1():
    net = reactor.ReactorNet(NUM_ACTIONS)
    out, _ = net.unroll(*_inputs(2, 1, channels=4), state=net.initial_state(1))
    assert out.policy.shape == (2, 1, NUM_ACTIONS)
    assert net.torso.layers[0].w.shape == (8, 8, 4, 16)


def test_output_shapes_and_policy():
    net = reactor.ReactorNet(NUM_ACTIONS, NUM_ATOMS, EPSILON)
    observation, first = _inputs(3, 2)
    net.unroll(observation, first, net.initial_state(2))
    final = net.policy_head.layers[2].w
    final.assign(final * 1e4)                      # a near-deterministic softmax
    out, state = net.unroll(observation, first, net.initial_state(2))
    assert out.policy.shape == (3, 2, NUM_ACTIONS)
    assert out.q_logits.shape == out.q_distribution.shape == (3, 2, NUM_ACTIONS, NUM_ATOMS)
    assert state.policy.hidden.shape == state.q.cell.shape == (2, 128)
    policy = out.policy.numpy()
    np.testing.assert_allclose(policy.sum(-1), 1.0, atol=1e-5)
    assert policy.min() >= EPSILON / NUM_ACTIONS * (1 - 1e-6)
    assert policy.min() < EPSILON / NUM_ACTIONS * (1 + 1e-3)       # the floor is reached
    np.testing.assert_allclose(out.q_distribution.numpy().sum(-1), 1.0, atol=1e-5)
    support = tf.linspace(-10.0, 10.0, NUM_ATOMS)
    assert reactor.expected_q(out.q_distribution, support).shape == (3, 2, NUM_ACTIONS)


def test_dueling_logits_are_value_plus_centred_advantage():
    net = reactor.ReactorNet(NUM_ACTIONS, NUM_ATOMS)
    core = tf.random.normal([4, 128], seed=1)
    value = net.value_head(core)[:, None, :]
    advantage = tf.reshape(net.advantage_head(core), [4, NUM_ACTIONS, NUM_ATOMS])
    expected = value + advantage - tf.reduce_mean(advantage, axis=1, keepdims=True)
    np.testing.assert_allclose(net.q_logits(core), expected, atol=1e-5)


def test_policy_gradients_do_not_reach_shared_torso():
    net = reactor.ReactorNet(NUM_ACTIONS, NUM_ATOMS)
    observation, first = _inputs(3, 2)
    net.unroll(observation, first, net.initial_state(2))
    torso = net.torso.trainable_variables
    policy_vars = net.policy_lstm.trainable_variables + net.policy_head.trainable_variables
    q_vars = (net.q_lstm.trainable_variables + net.value_head.trainable_variables
              + net.advantage_head.trainable_variables)
    assert len(torso) == 8
    weights = tf.random.normal([3, 2, NUM_ACTIONS], seed=2)
    with tf.GradientTape(persistent=True) as tape:
        out, _ = net.unroll(observation, first, net.initial_state(2))
        policy_loss = tf.reduce_sum(out.policy * weights)
        atoms = tf.range(NUM_ATOMS, dtype=tf.float32)
        q_loss = tf.reduce_sum(out.q_distribution * weights[..., None] * atoms)

    def reached(loss, variables):
        grads = tape.gradient(loss, variables)
        return [g is not None and float(tf.reduce_max(tf.abs(g))) > 0 for g in grads]

    assert not any(reached(policy_loss, torso + q_vars))
    assert all(reached(policy_loss, policy_vars))
    assert all(reached(q_loss, torso + q_vars))
    assert not any(reached(q_loss, policy_vars))


def _assert_close(a, b):
    tf.nest.map_structure(lambda x, y: np.testing.assert_allclose(x, y, atol=1e-5), a, b)


def test_first_resets_state():
    net = reactor.ReactorNet(NUM_ACTIONS, NUM_ATOMS)
    observation, first = _inputs(6, 2, seed=3)
    _, warm = net.unroll(*_inputs(4, 2, seed=4), state=net.initial_state(2))   # not initial
    k = 3
    first = tf.constant(np.broadcast_to(np.arange(6)[:, None] == k, (6, 2)))
    out, state = net.unroll(observation, first, warm)
    tail, tail_state = net.unroll(observation[k:], tf.zeros((6 - k, 2), tf.bool),
                                  net.initial_state(2))
    _assert_close(tf.nest.map_structure(lambda x: x[k:], out), tail)
    _assert_close(state, tail_state)
    head, _ = net.unroll(observation[:k], first[:k], net.initial_state(2))
    assert not np.allclose(out.policy[:k], head.policy, atol=1e-6)    # warm state was used


def test_step_by_step_equals_one_unroll():
    net = reactor.ReactorNet(NUM_ACTIONS, NUM_ATOMS)
    observation, _ = _inputs(5, 2, seed=5)
    first = tf.constant([[True, False], [False, False], [False, True], [False, False],
                         [True, False]])
    _, state = net.unroll(*_inputs(2, 2, seed=6), state=net.initial_state(2))
    whole, whole_state = net.unroll(observation, first, state)
    steps = []
    for t in range(5):
        out, state = net.unroll(observation[t:t + 1], first[t:t + 1], state)
        steps.append(out)
    _assert_close(tf.nest.map_structure(lambda *xs: tf.concat(xs, 0), *steps), whole)
    _assert_close(state, whole_state)
