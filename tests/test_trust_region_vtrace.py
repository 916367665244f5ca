"""LASER trust-region V-trace vs numpy references of eqs. 3 and 7 and of beta_KL (sec. 4.3)."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import vtrace as vtrace_lib

T, B, A = 9, 4, 5
MODES = ['eager', 'function']
CLIP_NAMES = ['clip_rho_threshold', 'clip_c_threshold', 'clip_pg_rho_threshold', 'lambda_']
CLIP_SETTINGS = [
    (1.0, 1.0, 1.0, 1.0),        # the paper's rho-bar = c-bar = 1
    (2.0, 0.7, 1.3, 1.0),
    (1.0, 1.0, 1.0, 0.6),        # Remark 2's lambda
    (None, 1.2, None, 0.9),
]


def _maybe_function(fn, mode):
    return fn if mode == 'eager' else tf.function(fn)


def _softmax(logits):
    logits = np.asarray(logits, np.float64)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _logits(seed, t=T, b=B, a=A):
    """Target logits and behaviour logits that are close in some states and far in others."""
    rng = np.random.default_rng(seed)
    target = rng.normal(0.0, 1.5, (t, b, a))
    spread = rng.choice([0.05, 3.0], size=(t, b, 1))
    behaviour = target + rng.normal(0.0, 1.0, (t, b, a)) * spread
    return target.astype(np.float32), behaviour.astype(np.float32)


def _inputs(seed, t=T, b=B):
    rng = np.random.default_rng(seed)
    discounts = np.full((t, b), 0.9, np.float32)
    discounts[rng.random((t, b)) < 0.2] = 0.0        # episode ends inside the unroll
    discounts[t // 2, 0] = 0.0
    return dict(
        discounts=discounts,
        rewards=rng.normal(0.0, 1.0, (t, b)).astype(np.float32),
        values=rng.normal(0.0, 1.0, (t, b)).astype(np.float32),
        bootstrap_value=rng.normal(0.0, 1.0, (b,)).astype(np.float32))


def _implied_reference(target_logits, behaviour_logits, rho_bar):
    """Eq. 3 in probability space: min(rho_bar mu, pi) / sum_b min(rho_bar mu(b), pi(b))."""
    pi, mu = _softmax(target_logits), _softmax(behaviour_logits)
    unnormalised = np.minimum(rho_bar * mu, pi)
    return unnormalised / unnormalised.sum(axis=-1, keepdims=True)


def _kl_reference(target_logits, behaviour_logits, rho_bar):
    pi = _softmax(target_logits)
    implied = _implied_reference(target_logits, behaviour_logits, rho_bar)
    return np.sum(pi * (np.log(pi) - np.log(implied)), axis=-1)


def _trust_region_reference(log_rhos, discounts, rewards, values, bootstrap_value, relevant,
                            clip_rho_threshold, clip_c_threshold, clip_pg_rho_threshold,
                            lambda_):
    """Eq. 7 as printed, an O(T^2) sum with per-step discounts in place of gamma^k:
    G(s_t) = V(s_t) + sum_k (prod_{i<k} gamma lambda(s_{t+i}) c_{t+i}) lambda(s_{t+k})
    rho_{t+k} delta_{t+k} V, with Remark 2's lambda_ inside c."""
    log_rhos, discounts, rewards, values, bootstrap_value, lam = (
        np.asarray(x, np.float64)
        for x in (log_rhos, discounts, rewards, values, bootstrap_value, relevant))
    n, b = values.shape
    rhos = np.exp(log_rhos)
    clip = lambda x, c: x if c is None else np.minimum(c, x)
    v_ext = np.concatenate([values, bootstrap_value[None]], axis=0)
    vs = np.zeros((n, b))
    for t in range(n):
        total = values[t].copy()
        for k in range(n - t):
            weight = np.ones(b)
            for i in range(k):
                weight *= (discounts[t + i] * lam[t + i] * lambda_
                           * clip(rhos[t + i], clip_c_threshold))
            delta = rewards[t + k] + discounts[t + k] * v_ext[t + k + 1] - values[t + k]
            total += weight * lam[t + k] * clip(rhos[t + k], clip_rho_threshold) * delta
        vs[t] = total
    vs_ext = np.concatenate([vs, bootstrap_value[None]], axis=0)
    pg_advantages = lam * clip(rhos, clip_pg_rho_threshold) * (
        rewards + discounts * vs_ext[1:] - values)
    return vs, pg_advantages


def _pipeline(target_logits, behaviour_logits, actions, inputs, threshold, clips):
    """Logits and sampled actions -> (returns, relevance, mask, log_rhos), as a learner would."""
    log_rhos = (vtrace_lib.log_probs_from_logits_and_actions(target_logits, actions)
                - vtrace_lib.log_probs_from_logits_and_actions(behaviour_logits, actions))
    relevance = vtrace_lib.behaviour_relevance(target_logits, behaviour_logits,
                                               clips['clip_rho_threshold'])
    mask = vtrace_lib.trust_region_mask(relevance, threshold)
    out = vtrace_lib.trust_region_vtrace(log_rhos, relevant=mask, **inputs, **clips)
    return out, relevance, mask, log_rhos


# Eq. 3: the implied policy.

@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('rho_bar', [0.5, 1.0, 2.0, 5.0])
def test_implied_policy_matches_eq3(mode, rho_bar):
    target, behaviour = _logits(seed=int(rho_bar * 10))
    fn = _maybe_function(vtrace_lib.implied_policy_log_probs, mode)
    got = fn(target, behaviour, rho_bar).numpy()
    expected = _implied_reference(target, behaviour, rho_bar)
    assert got.shape == (T, B, A)
    np.testing.assert_allclose(np.exp(got), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, np.log(expected), rtol=1e-5, atol=1e-5)


def test_implied_policy_stable_for_extreme_logits():
    target, behaviour = _logits(seed=7)
    target, behaviour = 40.0 * target, 40.0 * behaviour       # probabilities down to ~1e-100
    got = vtrace_lib.implied_policy_log_probs(target, behaviour, 1.0).numpy()
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(np.exp(got), _implied_reference(target, behaviour, 1.0),
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('rho_bar', [1.0, 2.0])
def test_implied_policy_is_target_when_on_policy(rho_bar):
    target, _ = _logits(seed=8)
    got = vtrace_lib.implied_policy_log_probs(target, target, rho_bar).numpy()
    np.testing.assert_allclose(np.exp(got), _softmax(target), rtol=1e-6, atol=1e-6)


def test_implied_policy_without_clipping_is_target():
    target, behaviour = _logits(seed=9)
    got = vtrace_lib.implied_policy_log_probs(target, behaviour, None).numpy()
    np.testing.assert_allclose(np.exp(got), _softmax(target), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('phi', [0.01, 0.1, 0.3])
def test_proposition_1_example_is_uniform(phi):
    """Sec. 2.3: mu = (phi, 1 - phi), pi = (1 - phi, phi), rho_bar = 1 -> pi~ is uniform."""
    mu = np.log(np.array([[[phi, 1.0 - phi]]], np.float32))
    pi = np.log(np.array([[[1.0 - phi, phi]]], np.float32))
    got = vtrace_lib.implied_policy_log_probs(pi, mu, 1.0).numpy()
    np.testing.assert_allclose(np.exp(got), [[[0.5, 0.5]]], rtol=1e-6, atol=1e-6)


# Sec. 4.3: beta_KL and the mask.

@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('rho_bar', [1.0, 2.0])
def test_behaviour_relevance_matches_kl_reference(mode, rho_bar):
    target, behaviour = _logits(seed=int(rho_bar) + 10)
    fn = _maybe_function(vtrace_lib.behaviour_relevance, mode)
    got = fn(target, behaviour, rho_bar).numpy()
    expected = _kl_reference(target, behaviour, rho_bar)
    assert got.shape == (T, B)
    assert np.all(got >= 0.0)
    assert np.ptp(expected) > 0.1                       # the inputs do spread the KL
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('rho_bar', [1.0, 2.0])
def test_behaviour_relevance_zero_on_policy(rho_bar):
    target, _ = _logits(seed=12)
    got = vtrace_lib.behaviour_relevance(target, target, rho_bar).numpy()
    assert np.all(got >= 0.0)
    np.testing.assert_allclose(got, 0.0, atol=1e-6)


def test_behaviour_relevance_is_a_target():
    target, behaviour = _logits(seed=13)
    target = tf.Variable(target)
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(vtrace_lib.behaviour_relevance(target, behaviour))
    grad = tape.gradient(total, target)
    assert grad is None or not np.any(grad.numpy())


def test_mask_keeps_low_kl_and_rejects_high_kl():
    """lambda(s) = 1[beta(s) < b]: relevant states have small KL (sec. 4.1, 4.3)."""
    relevance = np.array([[0.0, 0.1], [0.3, 2.0]], np.float32)
    np.testing.assert_array_equal(vtrace_lib.trust_region_mask(relevance, 0.3).numpy(),
                                  [[1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(
        vtrace_lib.trust_region_mask(relevance, float('inf')).numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(vtrace_lib.trust_region_mask(relevance, 0.0).numpy(),
                                  np.zeros((2, 2)))


# Eq. 7: the trust-region V-trace return.

@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('clips', CLIP_SETTINGS)
def test_trust_region_vtrace_matches_eq7(mode, clips):
    seed = CLIP_SETTINGS.index(clips)
    rng = np.random.default_rng(100 + seed)
    inputs = _inputs(seed)
    log_rhos = rng.normal(0.0, 0.7, (T, B)).astype(np.float32)
    relevant = (rng.random((T, B)) > 0.3).astype(np.float32)
    relevant[T // 2 + 1, 0] = 0.0                       # right after an episode end
    relevant[2, :] = 0.0
    clip_kwargs = dict(zip(CLIP_NAMES, clips))
    fn = _maybe_function(vtrace_lib.trust_region_vtrace, mode)
    out = fn(log_rhos, relevant=relevant, **inputs, **clip_kwargs)
    vs, pg_advantages = _trust_region_reference(log_rhos, relevant=relevant, **inputs,
                                                **clip_kwargs)
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.pg_advantages.numpy(), pg_advantages, rtol=1e-5, atol=1e-5)
    rejected = relevant == 0.0
    np.testing.assert_array_equal(out.vs.numpy()[rejected], inputs['values'][rejected])
    np.testing.assert_array_equal(out.pg_advantages.numpy()[rejected], 0.0)
    # A bool mask is the same mask.
    out_bool = fn(log_rhos, relevant=relevant.astype(bool), **inputs, **clip_kwargs)
    np.testing.assert_array_equal(out_bool.vs.numpy(), out.vs.numpy())


@pytest.mark.parametrize('mode', MODES)
def test_end_to_end_from_logits(mode):
    """Logits -> eq. 3 -> beta_KL -> lambda -> eq. 7, against numpy at the paper's rho-bar = 1."""
    target, behaviour = _logits(seed=20)
    actions = np.random.default_rng(21).integers(0, A, (T, B)).astype(np.int32)
    inputs = _inputs(seed=22)
    kl = _kl_reference(target, behaviour, 1.0)
    ordered = np.sort(kl.ravel())
    threshold = 0.5 * (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2])
    clips = dict(zip(CLIP_NAMES, CLIP_SETTINGS[0]))
    fn = _maybe_function(lambda *args: _pipeline(*args, clips=clips), mode)
    out, _, mask, _ = fn(target, behaviour, actions, inputs, threshold)
    expected_mask = (kl < threshold).astype(np.float64)
    np.testing.assert_array_equal(mask.numpy(), expected_mask)
    log_rhos = (np.log(np.take_along_axis(_softmax(target), actions[..., None], -1)[..., 0])
                - np.log(np.take_along_axis(_softmax(behaviour), actions[..., None], -1)[..., 0]))
    vs, pg_advantages = _trust_region_reference(log_rhos, relevant=expected_mask, **inputs,
                                                **clips)
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.pg_advantages.numpy(), pg_advantages, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('mode', MODES)
def test_nothing_rejected_is_vtrace(mode):
    target, behaviour = _logits(seed=30)
    actions = np.random.default_rng(31).integers(0, A, (T, B)).astype(np.int32)
    inputs = _inputs(seed=32)
    clips = dict(zip(CLIP_NAMES, CLIP_SETTINGS[1]))

    def both(target, behaviour, actions, inputs):
        out, _, mask, log_rhos = _pipeline(target, behaviour, actions, inputs, float('inf'),
                                           clips)
        return out, mask, vtrace_lib.vtrace(log_rhos, **inputs, **clips)

    out, mask, plain = _maybe_function(both, mode)(target, behaviour, actions, inputs)
    np.testing.assert_array_equal(mask.numpy(), np.ones((T, B)))
    np.testing.assert_array_equal(out.vs.numpy(), plain.vs.numpy())
    np.testing.assert_array_equal(out.pg_advantages.numpy(), plain.pg_advantages.numpy())


@pytest.mark.parametrize('mode', MODES)
def test_mask_does_not_depend_on_sampled_action(mode):
    """Sec. 4.3: the censoring is state dependent, so the choice of bootstrapping is the same
    whatever actions were sampled; only the returns change."""
    target, behaviour = _logits(seed=40)
    rng = np.random.default_rng(41)
    actions_1 = rng.integers(0, A, (T, B)).astype(np.int32)
    actions_2 = (actions_1 + 1 + rng.integers(0, A - 1, (T, B))).astype(np.int32) % A
    inputs = _inputs(seed=42)
    threshold = float(np.median(_kl_reference(target, behaviour, 1.0)))
    clips = dict(zip(CLIP_NAMES, CLIP_SETTINGS[0]))
    fn = _maybe_function(lambda *args: _pipeline(*args, clips=clips), mode)
    out_1, relevance_1, mask_1, _ = fn(target, behaviour, actions_1, inputs, threshold)
    out_2, relevance_2, mask_2, _ = fn(target, behaviour, actions_2, inputs, threshold)
    assert 0.0 < mask_1.numpy().mean() < 1.0
    np.testing.assert_array_equal(relevance_1.numpy(), relevance_2.numpy())
    np.testing.assert_array_equal(mask_1.numpy(), mask_2.numpy())
    assert not np.allclose(out_1.vs.numpy(), out_2.vs.numpy())


@pytest.mark.parametrize('mode', MODES)
def test_everything_rejected(mode):
    target, behaviour = _logits(seed=50)
    actions = np.random.default_rng(51).integers(0, A, (T, B)).astype(np.int32)
    inputs = _inputs(seed=52)
    clips = dict(zip(CLIP_NAMES, CLIP_SETTINGS[1]))
    fn = _maybe_function(lambda *args: _pipeline(*args, clips=clips), mode)
    out, _, mask, _ = fn(target, behaviour, actions, inputs, 0.0)   # KL >= 0 is never < 0
    np.testing.assert_array_equal(mask.numpy(), np.zeros((T, B)))
    np.testing.assert_array_equal(out.vs.numpy(), inputs['values'])
    np.testing.assert_array_equal(out.pg_advantages.numpy(), np.zeros((T, B)))


def test_float64():
    rng = np.random.default_rng(60)
    inputs = {k: v.astype(np.float64) for k, v in _inputs(seed=61).items()}
    log_rhos = rng.normal(0.0, 0.7, (T, B))
    relevant = (rng.random((T, B)) > 0.3).astype(np.float64)
    clips = dict(zip(CLIP_NAMES, CLIP_SETTINGS[0]))
    out = vtrace_lib.trust_region_vtrace(log_rhos, relevant=relevant, **inputs, **clips)
    vs, pg_advantages = _trust_region_reference(log_rhos, relevant=relevant, **inputs, **clips)
    assert out.vs.dtype == tf.float64
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.pg_advantages.numpy(), pg_advantages, rtol=1e-10, atol=1e-10)


def test_bad_rank_raises():
    inputs = _inputs(seed=70)
    with pytest.raises(ValueError, match='`relevant` must have rank'):
        vtrace_lib.trust_region_vtrace(np.zeros((T, B), np.float32), relevant=np.ones((T,)),
                                       **inputs)
    with pytest.raises(ValueError, match='`target_logits` must have rank'):
        vtrace_lib.behaviour_relevance(np.zeros((T, A)), np.zeros((T, A)))
