"""beta-LOO (Reactor sec. 3.1): the loss gradient w.r.t. the logits against eq. 10-11 by hand,
and Proposition 1 (bias) by exact enumeration of a^ ~ mu."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import leave_one_out

T, B, A = 5, 3, 4


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _inputs(seed, t=T, b=B, a=A):
    rng = np.random.default_rng(seed)
    mu = _softmax(rng.normal(0.0, 2.0, (t, b, a)))          # some mu(a^) > 1/2, some < 1/2
    actions = np.array([[rng.choice(a, p=mu[i, j]) for j in range(b)] for i in range(t)])
    return dict(
        logits=rng.normal(0.0, 1.0, (t, b, a)),
        q_values=rng.normal(0.0, 1.0, (t, b, a)),
        returns=rng.normal(0.0, 2.0, (t, b)),
        actions=actions.astype(np.int32),
        behaviour_probs=np.take_along_axis(mu, actions[..., None], -1)[..., 0])


def _grad_pi(logits):
    """d pi(a) / d logit_k = pi(a) (I{a = k} - pi(k)), as [..., a, k]."""
    pi = _softmax(logits)
    return pi[..., :, None] * (np.eye(logits.shape[-1]) - pi[..., None, :])


def _eq10(logits, q_values, returns, actions, behaviour_probs, truncation):
    """beta (R - Q(a^)) grad pi(a^) + sum_a Q(a) grad pi(a), beta = min(c, 1/mu(a^)), looped."""
    jac = _grad_pi(logits)
    out = np.zeros_like(logits)
    for index in np.ndindex(*actions.shape):
        a_hat = actions[index]
        beta = 1.0 / behaviour_probs[index]
        if truncation is not None:
            beta = min(truncation, beta)
        out[index] = beta * (returns[index] - q_values[index][a_hat]) * jac[index][a_hat]
        for a in range(logits.shape[-1]):
            out[index] += q_values[index][a] * jac[index][a]
    return out


def _eq11(logits, q_values, returns, actions, behaviour_probs):
    """pi(a^)/mu(a^) (R - Q(a^)) grad log pi(a^) + sum_a Q(a) grad pi(a), looped."""
    pi = _softmax(logits)
    jac = _grad_pi(logits)
    out = np.zeros_like(logits)
    for index in np.ndindex(*actions.shape):
        a_hat = actions[index]
        grad_log_pi = np.eye(logits.shape[-1])[a_hat] - pi[index]
        out[index] = (pi[index][a_hat] / behaviour_probs[index]
                      * (returns[index] - q_values[index][a_hat]) * grad_log_pi)
        for a in range(logits.shape[-1]):
            out[index] += q_values[index][a] * jac[index][a]
    return out


def _loss_grad(logits, truncation, **kw):
    logits = tf.Variable(logits)
    with tf.GradientTape() as tape:
        loss = leave_one_out.beta_loo_loss(tf.nn.softmax(logits), **kw, truncation=truncation)
    return tape.gradient(loss, logits).numpy()


@pytest.mark.parametrize('truncation', [1.0, 2.0, 3.5, None])
def test_gradient_is_minus_eq10(truncation):
    inputs = _inputs(seed=0)
    logits = inputs.pop('logits')
    mu = inputs['behaviour_probs']
    assert np.any(mu > 0.5) and np.any(mu < 1 / 3.5)         # truncation both binds and not
    got = _loss_grad(logits, truncation, **inputs)
    np.testing.assert_allclose(got, -_eq10(logits, **inputs, truncation=truncation),
                               rtol=1e-10, atol=1e-12)


def test_truncation_one_is_loo_eq9():
    """c = 1 (the paper's beta = 1, sec. 4.1): R(a^) grad pi(a^) + sum_{a != a^} Q(a) grad pi(a)."""
    inputs = _inputs(seed=1)
    logits = inputs.pop('logits')
    jac = _grad_pi(logits)
    expected = np.zeros_like(logits)
    for index in np.ndindex(*inputs['actions'].shape):
        a_hat = inputs['actions'][index]
        expected[index] = inputs['returns'][index] * jac[index][a_hat]
        for a in range(A):
            if a != a_hat:
                expected[index] += inputs['q_values'][index][a] * jac[index][a]
    np.testing.assert_allclose(_loss_grad(logits, 1.0, **inputs), -expected, rtol=1e-10,
                               atol=1e-12)


def test_untruncated_is_eq11():
    inputs = _inputs(seed=2)
    logits = inputs.pop('logits')
    np.testing.assert_allclose(_loss_grad(logits, None, **inputs), -_eq11(logits, **inputs),
                               rtol=1e-10, atol=1e-12)


def _expected_estimate(truncation, seed=3):
    """E_{a^ ~ mu}[G(a^)] with R(a^) = Q^pi(a^), one batch entry per a^, plus G and the bias of
    Proposition 1, sum_a (1 - mu(a) beta(a)) grad pi(a) (Q(a) - Q^pi(a))."""
    rng = np.random.default_rng(seed)
    logits = np.tile(rng.normal(0.0, 1.0, A), (A, 1))
    q_values = np.tile(rng.normal(0.0, 1.0, A), (A, 1))
    q_pi = rng.normal(0.0, 1.0, A)
    mu = _softmax(rng.normal(0.0, 1.5, A))
    actions = np.arange(A, dtype=np.int32)
    grads = _loss_grad(logits, truncation, q_values=q_values, returns=q_pi, actions=actions,
                       behaviour_probs=mu)
    expected = -(mu @ grads)
    jac = _grad_pi(logits[0])
    true_gradient = q_pi @ jac                                          # G of eq. 8
    beta = 1.0 / mu if truncation is None else np.minimum(truncation, 1.0 / mu)
    bias = ((1.0 - mu * beta) * (q_values[0] - q_pi)) @ jac
    return expected, true_gradient, bias


def test_eq11_is_unbiased():
    expected, true_gradient, bias = _expected_estimate(truncation=None)
    np.testing.assert_allclose(bias, 0.0, atol=1e-12)
    np.testing.assert_allclose(expected, true_gradient, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('truncation', [1.0, 2.0])
def test_truncated_bias_is_proposition_1(truncation):
    expected, true_gradient, bias = _expected_estimate(truncation=truncation)
    assert np.max(np.abs(bias)) > 1e-3
    np.testing.assert_allclose(expected - true_gradient, bias, rtol=1e-10, atol=1e-12)


def test_loss_value_weights_and_no_gradient_into_critic():
    inputs = _inputs(seed=4)
    logits = inputs.pop('logits')
    pi = _softmax(logits)
    weights = np.random.default_rng(4).uniform(0.5, 1.5, (T, B))
    q_values = tf.Variable(inputs.pop('q_values'))
    returns = tf.Variable(inputs.pop('returns'))
    with tf.GradientTape(persistent=True) as tape:
        loss = leave_one_out.beta_loo_loss(pi, q_values, returns, **inputs, truncation=2.0,
                                           weights=weights)
    for grad in tape.gradient(loss, [q_values, returns]):
        assert grad is None or not np.any(grad.numpy())
    q, r, a, mu = q_values.numpy(), returns.numpy(), inputs['actions'], inputs['behaviour_probs']
    expected = 0.0
    for index in np.ndindex(T, B):
        beta = min(2.0, 1.0 / mu[index])
        expected -= weights[index] * (beta * (r[index] - q[index][a[index]]) * pi[index][a[index]]
                                      + q[index] @ pi[index])
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-10)


def test_function_mode_and_bad_inputs():
    inputs = _inputs(seed=5)
    pi = tf.nn.softmax(inputs.pop('logits'))
    fn = tf.function(lambda: leave_one_out.beta_loo_loss(pi, **inputs, truncation=1.5))
    np.testing.assert_allclose(fn().numpy(),
                               leave_one_out.beta_loo_loss(pi, **inputs, truncation=1.5).numpy(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match='>= 1'):
        leave_one_out.beta_loo_loss(pi, **inputs, truncation=0.5)
    with pytest.raises(ValueError, match='returns'):
        leave_one_out.beta_loo_loss(pi, **dict(inputs, returns=inputs['returns'][..., None]))
