"""Sequence priorities (Reactor sec. 3.3): mean |Delta Q| of eq. 3 along a sequence, and the mean
total variation (footnote 3: "Sum of absolute discrete probability differences")."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import retrace as retrace_lib
from agents.ops import sequence_priorities

T, B, A, N = 6, 3, 3, 5


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _delta_q_reference(q_values, target_policy, behaviour_probs, actions, rewards, discounts,
                       bootstrap_q_values, bootstrap_target_policy, lambda_):
    """Delta Q(x_t, a_t) = sum_{s>=t} (d_t ... d_{s-1}) (c_{t+1} ... c_s) delta_s (eq. 3)."""
    q_ext = np.concatenate([q_values, bootstrap_q_values[None]], axis=0)
    pi_ext = np.concatenate([target_policy, bootstrap_target_policy[None]], axis=0)
    out = np.zeros((T, B))
    for j in range(B):
        c = [lambda_ * min(1.0, target_policy[s, j, actions[s, j]] / behaviour_probs[s, j])
             for s in range(T)]
        for t in range(T):
            for s in range(t, T):
                weight = np.prod(discounts[t:s, j]) * np.prod(c[t + 1:s + 1])
                delta = (rewards[s, j] + discounts[s, j] * (pi_ext[s + 1, j] @ q_ext[s + 1, j])
                         - q_values[s, j, actions[s, j]])
                out[t, j] += weight * delta
    return out


def _retrace_inputs(seed):
    rng = np.random.default_rng(seed)
    mu = _softmax(rng.normal(0.0, 1.5, (T, B, A)))
    actions = np.array([[rng.choice(A, p=mu[i, j]) for j in range(B)] for i in range(T)])
    discounts = np.full((T, B), 0.95)
    discounts[2, 0] = discounts[4, 1] = 0.0                    # episode ends inside
    return dict(
        q_values=rng.normal(0.0, 1.0, (T, B, A)),
        target_policy=_softmax(rng.normal(0.0, 1.5, (T, B, A))),
        behaviour_probs=np.take_along_axis(mu, actions[..., None], -1)[..., 0],
        actions=actions.astype(np.int32),
        rewards=rng.normal(0.0, 1.0, (T, B)),
        discounts=discounts,
        bootstrap_q_values=rng.normal(0.0, 1.0, (B, A)),
        bootstrap_target_policy=_softmax(rng.normal(0.0, 1.5, (B, A))))


@pytest.mark.parametrize('lambda_', [1.0, 0.7])
def test_retrace_priority_is_mean_absolute_eq3_error(lambda_):
    inputs = _retrace_inputs(seed=int(10 * lambda_))
    targets = retrace_lib.retrace_targets(**inputs, lambda_=lambda_)
    q_taken = np.take_along_axis(inputs['q_values'], inputs['actions'][..., None], -1)[..., 0]
    got = sequence_priorities.retrace_priorities(targets, q_taken).numpy()
    delta_q = _delta_q_reference(**inputs, lambda_=lambda_)
    expected = [sum(abs(delta_q[t, j]) for t in range(T)) / T for j in range(B)]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_retrace_priority_averages_over_time():
    """A single error e at one step of a T-step sequence gives priority |e| / T (mean, not sum)."""
    targets = np.zeros((T, B))
    targets[3, 1] = -2.5
    got = sequence_priorities.retrace_priorities(targets, np.zeros((T, B))).numpy()
    np.testing.assert_allclose(got, [0.0, 2.5 / T, 0.0])


def test_total_variation_priority():
    rng = np.random.default_rng(1)
    targets = rng.normal(0.2, 0.5, (T, B, N))                     # signed, as q* may be
    current = rng.dirichlet(np.ones(N), (T, B))
    got = tf.function(sequence_priorities.distributional_retrace_priorities)(targets, current)
    expected = np.zeros(B)
    for j in range(B):
        for t in range(T):
            for i in range(N):
                expected[j] += abs(targets[t, j, i] - current[t, j, i]) / T
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)


def test_total_variation_has_no_half():
    """Footnote 3 sums the absolute differences: two disjoint point masses are 2 apart."""
    target = np.zeros((1, 1, N))
    current = np.zeros((1, 1, N))
    target[..., 0] = current[..., -1] = 1.0
    got = sequence_priorities.distributional_retrace_priorities(target, current).numpy()
    np.testing.assert_allclose(got, [2.0])


def test_end_to_end_distributional_priority():
    support = np.linspace(-3.0, 3.0, N)
    inputs = _retrace_inputs(seed=2)
    rng = np.random.default_rng(2)
    distributions = rng.dirichlet(np.ones(N), (T, B, A))
    inputs.pop('q_values')
    inputs.pop('bootstrap_q_values')
    targets = retrace_lib.distributional_retrace(
        distributions, **inputs, bootstrap_distributions=rng.dirichlet(np.ones(N), (B, A)),
        support=support)
    taken = np.take_along_axis(distributions, inputs['actions'][..., None, None], 2)[:, :, 0]
    got = sequence_priorities.distributional_retrace_priorities(targets, taken).numpy()
    expected = np.mean(np.sum(np.abs(targets.numpy() - taken), axis=-1), axis=0)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_shape_errors():
    with pytest.raises(ValueError, match='same shape'):
        sequence_priorities.retrace_priorities(np.zeros((T, B)), np.zeros((T, B + 1)))
    with pytest.raises(ValueError, match='rank 3'):
        sequence_priorities.distributional_retrace_priorities(np.zeros((T, B)), np.zeros((T, B)))
