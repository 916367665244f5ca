"""Actor-critic loss terms against numpy, including signs and sum (not mean) reduction."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import policy_gradient

T, B, A = 5, 3, 4


def _log_softmax(logits):
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    return dict(logits=rng.normal(size=(T, B, A)).astype(np.float32),
                actions=rng.integers(0, A, size=(T, B)).astype(np.int32),
                advantages=rng.normal(size=(T, B)).astype(np.float32))


def test_policy_gradient_loss(batch):
    log_pi = np.take_along_axis(_log_softmax(batch['logits']), batch['actions'][..., None],
                                axis=-1)[..., 0]
    expected = -np.sum(log_pi * batch['advantages'])
    got = policy_gradient.policy_gradient_loss(**batch)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)


def test_policy_gradient_loss_gradients(batch):
    logits = tf.Variable(batch['logits'])
    advantages = tf.Variable(batch['advantages'])
    with tf.GradientTape() as tape:
        loss = policy_gradient.policy_gradient_loss(logits, batch['actions'], advantages)
    grad_logits, grad_advantages = tape.gradient(loss, [logits, advantages])
    assert grad_advantages is None
    one_hot = np.eye(A)[batch['actions']]
    policy = np.exp(_log_softmax(batch['logits']))
    expected = -(one_hot - policy) * batch['advantages'][..., None]
    np.testing.assert_allclose(grad_logits.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_policy_gradient_loss_bad_rank(batch):
    with pytest.raises(ValueError, match='one dimension fewer'):
        policy_gradient.policy_gradient_loss(batch['logits'], batch['actions'][..., None],
                                             batch['advantages'])


def test_entropy_loss(batch):
    log_pi = _log_softmax(batch['logits'])
    entropy = -np.sum(np.exp(log_pi) * log_pi, axis=-1)
    got = policy_gradient.entropy_loss(batch['logits'])
    np.testing.assert_allclose(got.numpy(), -np.sum(entropy), rtol=1e-5)
    # A uniform policy has the lowest loss: -T * B * log(A).
    uniform = policy_gradient.entropy_loss(np.zeros((T, B, A), np.float32))
    np.testing.assert_allclose(uniform.numpy(), -T * B * np.log(A), rtol=1e-6)


def test_minimising_entropy_loss_raises_entropy(batch):
    logits = tf.Variable(batch['logits'])
    with tf.GradientTape() as tape:
        loss = policy_gradient.entropy_loss(logits)
    logits.assign_sub(0.1 * tape.gradient(loss, logits))
    assert policy_gradient.entropy_loss(logits).numpy() < loss.numpy()


def test_baseline_loss(batch):
    x = batch['advantages']
    got = policy_gradient.baseline_loss(x)
    np.testing.assert_allclose(got.numpy(), 0.5 * np.sum(x.astype(np.float64) ** 2), rtol=1e-5)
    # Summed, not averaged: doubling the batch doubles the loss.
    doubled = policy_gradient.baseline_loss(np.concatenate([x, x], axis=1))
    np.testing.assert_allclose(doubled.numpy(), 2 * got.numpy(), rtol=1e-6)


def test_jit_compiles(batch):
    @tf.function(jit_compile=True)
    def total(logits, actions, advantages):
        return (policy_gradient.policy_gradient_loss(logits, actions, advantages)
                + policy_gradient.entropy_loss(logits)
                + policy_gradient.baseline_loss(advantages))
    eager = (policy_gradient.policy_gradient_loss(**batch)
             + policy_gradient.entropy_loss(batch['logits'])
             + policy_gradient.baseline_loss(batch['advantages']))
    np.testing.assert_allclose(total(**batch).numpy(), eager.numpy(), rtol=1e-5)
