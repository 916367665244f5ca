"""V-trace against a brute-force numpy sum of IMPALA eq. 1, plus the paper's invariants."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import vtrace as vtrace_lib

T, B = 9, 4
CLIP_SETTINGS = [
    # (clip_rho_threshold, clip_c_threshold, clip_pg_rho_threshold, lambda_)
    (1.0, 1.0, 1.0, 1.0),        # the paper's rho-bar = c-bar = 1 (sec. 5.2)
    (None, None, None, 1.0),     # no clipping
    (2.0, 0.7, 1.3, 1.0),        # three different thresholds
    (1.0, 1.0, 1.0, 0.6),        # Remark 2's lambda
    (None, 1.2, None, 0.9),
]


def _inputs(seed, t=T, b=B):
    rng = np.random.default_rng(seed)
    discounts = np.full((t, b), 0.9, np.float32)
    discounts[rng.random((t, b)) < 0.2] = 0.0        # episode ends inside the unroll
    return dict(
        log_rhos=rng.normal(0.0, 0.7, (t, b)).astype(np.float32),
        discounts=discounts,
        rewards=rng.normal(0.0, 1.0, (t, b)).astype(np.float32),
        values=rng.normal(0.0, 1.0, (t, b)).astype(np.float32),
        bootstrap_value=rng.normal(0.0, 1.0, (b,)).astype(np.float32))


def reference(log_rhos, discounts, rewards, values, bootstrap_value, clip_rho_threshold,
              clip_c_threshold, clip_pg_rho_threshold, lambda_):
    """Eq. 1 as written: an O(T^2) sum, with prod of per-step discounts in place of gamma^(t-s)."""
    log_rhos, discounts, rewards, values, bootstrap_value = (
        np.asarray(x, np.float64)
        for x in (log_rhos, discounts, rewards, values, bootstrap_value))
    n, b = values.shape
    rhos = np.exp(log_rhos)
    clip = lambda x, c: x if c is None else np.minimum(c, x)
    v_ext = np.concatenate([values, bootstrap_value[None]], axis=0)      # V(x_0..x_n)
    vs = np.zeros((n, b))
    for s in range(n):
        total = values[s].copy()
        for t in range(s, n):
            weight = np.ones(b)
            for i in range(s, t):
                weight *= discounts[i] * lambda_ * clip(rhos[i], clip_c_threshold)
            delta = clip(rhos[t], clip_rho_threshold) * (
                rewards[t] + discounts[t] * v_ext[t + 1] - values[t])
            total += weight * delta
        vs[s] = total
    vs_ext = np.concatenate([vs, bootstrap_value[None]], axis=0)
    pg_advantages = clip(rhos, clip_pg_rho_threshold) * (
        rewards + discounts * vs_ext[1:] - values)
    return vs, pg_advantages


def _modes():
    fn = lambda kw, clips: vtrace_lib.vtrace(**kw, **clips)
    return {'eager': fn, 'function': tf.function(fn),
            'jit': tf.function(fn, jit_compile=True)}


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
@pytest.mark.parametrize('clips', CLIP_SETTINGS)
def test_matches_brute_force_sum(mode, clips):
    inputs = _inputs(seed=CLIP_SETTINGS.index(clips))
    clip_kwargs = dict(zip(
        ['clip_rho_threshold', 'clip_c_threshold', 'clip_pg_rho_threshold', 'lambda_'], clips))
    out = _modes()[mode](inputs, clip_kwargs)
    vs, pg_advantages = reference(**inputs, **clip_kwargs)
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.pg_advantages.numpy(), pg_advantages, rtol=1e-5, atol=1e-5)


def test_on_policy_is_n_step_bellman_target():
    """Eq. 2: with pi = mu and no clipping, v_s = sum_t gamma^(t-s) r_t + gamma^(n-s) V(x_n)."""
    gamma = 0.95
    inputs = _inputs(seed=1)
    inputs['log_rhos'] = np.zeros((T, B), np.float32)
    inputs['discounts'] = np.full((T, B), gamma, np.float32)
    out = vtrace_lib.vtrace(**inputs, clip_rho_threshold=None, clip_c_threshold=None,
                            clip_pg_rho_threshold=None)
    rewards, bootstrap = inputs['rewards'].astype(np.float64), inputs['bootstrap_value']
    for s in range(T):
        expected = sum(gamma ** (t - s) * rewards[t] for t in range(s, T))
        expected = expected + gamma ** (T - s) * bootstrap
        np.testing.assert_allclose(out.vs.numpy()[s], expected, rtol=1e-5, atol=1e-5)


def test_trace_across_episode_boundary_equals_two_episodes():
    inputs = _inputs(seed=2)
    inputs['discounts'] = np.full((T, B), 0.9, np.float32)
    k = 4
    inputs['discounts'][k - 1] = 0.0                       # episode 1 ends at step k - 1
    whole = vtrace_lib.vtrace(**inputs, clip_rho_threshold=None, clip_c_threshold=None)
    first = {name: x[:k] for name, x in inputs.items() if name != 'bootstrap_value'}
    first = vtrace_lib.vtrace(**first, bootstrap_value=np.full((B,), 123.0, np.float32),
                              clip_rho_threshold=None, clip_c_threshold=None)
    second = {name: x[k:] for name, x in inputs.items() if name != 'bootstrap_value'}
    second = vtrace_lib.vtrace(**second, bootstrap_value=inputs['bootstrap_value'],
                               clip_rho_threshold=None, clip_c_threshold=None)
    for field in vtrace_lib.VTraceReturns._fields:
        joined = np.concatenate([getattr(first, field), getattr(second, field)], axis=0)
        np.testing.assert_allclose(getattr(whole, field).numpy(), joined, rtol=1e-6, atol=1e-6)


def test_no_gradient_into_targets():
    inputs = _inputs(seed=3)
    values = tf.Variable(inputs.pop('values'))
    bootstrap_value = tf.Variable(inputs.pop('bootstrap_value'))
    log_rhos = tf.Variable(inputs.pop('log_rhos'))
    with tf.GradientTape() as tape:
        out = vtrace_lib.vtrace(log_rhos, values=values, bootstrap_value=bootstrap_value,
                                **inputs)
        total = tf.reduce_sum(out.vs) + tf.reduce_sum(out.pg_advantages)
    for grad in tape.gradient(total, [values, bootstrap_value, log_rhos]):
        assert grad is None or not np.any(grad.numpy())


@pytest.mark.parametrize('name, bad_shape', [
    ('log_rhos', (T,)), ('discounts', (T, B, 1)), ('rewards', (T * B,)),
    ('values', (T, B, 1)), ('bootstrap_value', (B, 1))])
def test_bad_rank_raises(name, bad_shape):
    inputs = _inputs(seed=4)
    inputs[name] = np.zeros(bad_shape, np.float32)
    with pytest.raises(ValueError, match=f'`{name}` must have rank'):
        vtrace_lib.vtrace(**inputs)


def test_mixed_dtype_raises():
    inputs = _inputs(seed=5)
    inputs['rewards'] = inputs['rewards'].astype(np.float64)
    with pytest.raises(TypeError, match='rewards'):
        vtrace_lib.vtrace(**inputs)


def test_log_probs_from_logits_and_actions():
    rng = np.random.default_rng(6)
    logits = rng.normal(size=(T, B, 5)).astype(np.float32)
    actions = rng.integers(0, 5, size=(T, B)).astype(np.int32)
    log_policy = logits - np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
    expected = np.take_along_axis(log_policy, actions[..., None], axis=-1)[..., 0]
    got = vtrace_lib.log_probs_from_logits_and_actions(logits, actions)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match='rank'):
        vtrace_lib.log_probs_from_logits_and_actions(logits[0], actions[0, :, None])
