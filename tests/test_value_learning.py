"""Ape-X n-step targets against the paper's sum written out, episode ends inside the N steps;
the DPG actor's loss against its value and gradient written out."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import value_learning

B, N, A = 12, 3, 5
GAMMA = 0.99


def _modes(fn):
    return {'eager': fn, 'function': tf.function(fn), 'jit': tf.function(fn, jit_compile=True)}


def _transitions(seed):
    """Random N-step transitions: some run N steps, some end by termination or a time-limit
    cut after m < N steps. Returns the adder's encoding and what the reference needs."""
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=(B, N)).astype(np.float32)
    discount_t = np.full((B, N), GAMMA, np.float32)
    lengths = np.full(B, N)
    terminal = np.zeros(B, bool)
    for b in range(B):
        kind = b % 3                      # 0: full N steps, 1: termination, 2: time-limit cut
        if kind:
            m = 1 + b % N if kind == 1 else 1 + b % (N - 1)
            lengths[b] = m
            rewards[b, m:] = 0.0
            discount_t[b, m:] = 1.0       # padding
            if kind == 1:
                terminal[b] = True
                discount_t[b, m - 1] = 0.0
    return rewards, discount_t, lengths, terminal


def _reference_return(rewards, lengths, terminal, bootstrap):
    """G_t = sum_{k<m} gamma^k R_{t+k+1} + [not terminal] gamma^m q(S_{t+m}) (docs/paper_notes)."""
    out = np.zeros(B)
    for b in range(B):
        total = 0.0
        for k in range(lengths[b]):
            total += GAMMA ** k * float(rewards[b, k])
        if not terminal[b]:
            total += GAMMA ** lengths[b] * float(bootstrap[b])
        out[b] = total
    return out


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
def test_double_q_targets_match_the_written_out_sum(mode):
    rng = np.random.default_rng(0)
    rewards, discount_t, lengths, terminal = _transitions(seed=0)
    q_target = rng.normal(size=(B, A)).astype(np.float32)
    q_selector = rng.normal(size=(B, A)).astype(np.float32)
    fn = _modes(value_learning.double_q_n_step_targets)[mode]
    out = fn(q_target, q_selector, rewards, discount_t).numpy()
    # Double Q: the online network picks the action, the target network values it.
    bootstrap = [q_target[b, int(np.argmax(q_selector[b]))] for b in range(B)]
    np.testing.assert_allclose(out, _reference_return(rewards, lengths, terminal, bootstrap),
                               rtol=1e-5, atol=1e-5)
    assert not np.allclose(bootstrap, q_target.max(axis=1))   # the test tells the two apart


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
def test_dpg_critic_targets_match_the_written_out_sum(mode):
    rewards, discount_t, lengths, terminal = _transitions(seed=1)
    q_at_pi = np.random.default_rng(1).normal(size=B).astype(np.float32)
    out = _modes(value_learning.dpg_critic_targets)[mode](q_at_pi, rewards, discount_t)
    np.testing.assert_allclose(out.numpy(),
                               _reference_return(rewards, lengths, terminal, q_at_pi),
                               rtol=1e-5, atol=1e-5)


def test_n_step_return_with_arbitrary_per_step_discounts():
    """The product form: G = sum_k (prod_{j<k} d_j) r_k + (prod_j d_j) v, as a double loop."""
    rng = np.random.default_rng(2)
    r = rng.normal(size=(B, N)).astype(np.float32)
    d = rng.uniform(0, 1, size=(B, N)).astype(np.float32)
    v = rng.normal(size=B).astype(np.float32)
    expected = np.zeros(B)
    for b in range(B):
        for k in range(N):
            expected[b] += np.prod(d[b, :k], dtype=np.float64) * r[b, k]
        expected[b] += np.prod(d[b], dtype=np.float64) * v[b]
    np.testing.assert_allclose(value_learning.n_step_return(r, d, v).numpy(), expected,
                               rtol=1e-5, atol=1e-5)


def test_targets_carry_no_gradient():
    q = tf.Variable(tf.ones((B, A)))
    rewards, discount_t, _, _ = _transitions(seed=0)
    with tf.GradientTape() as tape:
        target = value_learning.double_q_n_step_targets(q * 2.0, q, rewards, discount_t)
    assert tape.gradient(target, q) is None


def test_rank_checks():
    with pytest.raises(ValueError, match='r_t'):
        value_learning.n_step_return(np.zeros(B), np.zeros((B, N)), np.zeros(B))
    with pytest.raises(ValueError, match='q_target_tn'):
        value_learning.double_q_n_step_targets(np.zeros(B), np.zeros((B, A)),
                                               np.zeros((B, N)), np.zeros((B, N)))
    with pytest.raises(ValueError, match='dqda_t'):
        value_learning.dpg_loss(np.zeros((B, A)), np.zeros(B))


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
@pytest.mark.parametrize('clipping', [None, 1.0])
def test_dpg_loss_pushes_actions_along_the_clipped_dqda(mode, clipping):
    """1/2 sum_a (sg(a + clip(dq/da)) - a)^2: its value is 1/2 |clip(dq/da)|^2 and its gradient
    with respect to a is -clip(dq/da), element-wise (appendix D); dq/da gets no gradient."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(B, A)).astype(np.float32)
    dqda = (3.0 * rng.normal(size=(B, A))).astype(np.float32)    # many elements beyond 1
    clipped = dqda if clipping is None else np.clip(dqda, -clipping, clipping)
    assert clipping is None or (np.abs(dqda) > clipping).any()
    a_var, dqda_var = tf.Variable(a), tf.Variable(dqda)
    fn = _modes(lambda x, d: value_learning.dpg_loss(x, d, clipping))[mode]
    with tf.GradientTape(persistent=True) as tape:
        loss = fn(a_var, dqda_var)
        total = tf.reduce_sum(loss)
    np.testing.assert_allclose(loss.numpy(), 0.5 * np.sum(clipped ** 2, axis=1), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(total, a_var).numpy(), -clipped,
                               rtol=1e-5, atol=1e-6)
    assert tape.gradient(total, dqda_var) is None
