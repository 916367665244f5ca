"""Retrace (Reactor eq. 3-4), its alpha-mixture form and distributional Retrace (sec. 3.2) against
numpy references written from the paper's formulas, plus the paper's invariants."""
import itertools

import numpy as np
import pytest
import tensorflow as tf

from agents.ops import categorical
from agents.ops import retrace as retrace_lib

T, B, A = 7, 3, 4
LAMBDAS = [1.0, 0.7]


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _inputs(seed, t=T, b=B, a=A, num_atoms=None):
    """Random sequences with episode ends (discount 0) inside, actions drawn from mu."""
    rng = np.random.default_rng(seed)
    target_policy = _softmax(rng.normal(0.0, 1.5, (t, b, a)))
    mu = _softmax(rng.normal(0.0, 1.5, (t, b, a)))
    actions = np.array([[rng.choice(a, p=mu[i, j]) for j in range(b)] for i in range(t)])
    discounts = np.full((t, b), 0.9)
    discounts[rng.random((t, b)) < 0.2] = 0.0
    discounts[t // 2, 0] = 0.0                              # at least one end inside
    inputs = dict(
        target_policy=target_policy,
        behaviour_probs=np.take_along_axis(mu, actions[..., None], -1)[..., 0],
        actions=actions.astype(np.int32),
        rewards=rng.normal(0.0, 1.0, (t, b)),
        discounts=discounts,
        bootstrap_target_policy=_softmax(rng.normal(0.0, 1.5, (b, a))))
    if num_atoms is None:
        inputs['q_values'] = rng.normal(0.0, 1.0, (t, b, a))
        inputs['bootstrap_q_values'] = rng.normal(0.0, 1.0, (b, a))
    else:
        inputs['distributions'] = rng.dirichlet(np.ones(num_atoms) * 0.5, (t, b, a))
        inputs['bootstrap_distributions'] = rng.dirichlet(np.ones(num_atoms) * 0.5, (b, a))
    return inputs


def _traces(target_policy, behaviour_probs, actions, lambda_):
    """c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s)) (eq. 4), one entry at a time."""
    t, b = actions.shape
    lambdas = np.broadcast_to(lambda_, (t, b))          # a scalar, or one lambda per step
    c = np.zeros((t, b))
    for s in range(t):
        for j in range(b):
            ratio = target_policy[s, j, actions[s, j]] / behaviour_probs[s, j]
            c[s, j] = lambdas[s, j] * min(1.0, ratio)
    return c


def _retrace_reference(q_values, target_policy, behaviour_probs, actions, rewards, discounts,
                       bootstrap_q_values, bootstrap_target_policy, lambda_):
    """Q(x_t, a_t) + sum_{s>=t} gamma^{s-t} (c_{t+1} ... c_s) delta_s (eq. 3), O(T^2) loops, with
    the product of the per-step discounts d_t ... d_{s-1} in place of gamma^{s-t}."""
    t_len, b_len = actions.shape
    c = _traces(target_policy, behaviour_probs, actions, lambda_)
    q_ext = np.concatenate([q_values, bootstrap_q_values[None]], axis=0)
    pi_ext = np.concatenate([target_policy, bootstrap_target_policy[None]], axis=0)
    out = np.zeros((t_len, b_len))
    for j in range(b_len):
        for t in range(t_len):
            total = q_values[t, j, actions[t, j]]
            for s in range(t, t_len):
                weight = 1.0
                for k in range(t, s):
                    weight *= discounts[k, j]
                for k in range(t + 1, s + 1):
                    weight *= c[k, j]
                expected_q = sum(pi_ext[s + 1, j, a] * q_ext[s + 1, j, a]
                                 for a in range(q_values.shape[-1]))
                delta = (rewards[s, j] + discounts[s, j] * expected_q
                         - q_values[s, j, actions[s, j]])
                total += weight * delta
            out[t, j] = total
    return out


def _alphas_reference(target_policy, behaviour_probs, actions, bootstrap_target_policy,
                      lambda_):
    """alpha_{n,a} = (c_{t+1} ... c_{t+n-1}) (pi(a|x_{t+n}) - I{a = a_{t+n}} c_{t+n}) (sec. 3.2),
    n = 1 .. T - t; at the bootstrap state x_T the trace is cut (c_T = 0), as eq. 3 stops at T-1."""
    t_len, b_len, a_len = target_policy.shape
    c = _traces(target_policy, behaviour_probs, actions, lambda_)
    c_ext = np.concatenate([c, np.zeros((1, b_len))], axis=0)
    pi_ext = np.concatenate([target_policy, bootstrap_target_policy[None]], axis=0)
    alphas = np.zeros((t_len, t_len, b_len, a_len))
    for j in range(b_len):
        for t in range(t_len):
            for n in range(1, t_len - t + 1):
                trace = np.prod([c_ext[k, j] for k in range(t + 1, t + n)])
                for a in range(a_len):
                    taken = t + n < t_len and actions[t + n, j] == a
                    alphas[t, n - 1, j, a] = trace * (pi_ext[t + n, j, a]
                                                      - float(taken) * c_ext[t + n, j])
    return alphas


def _n_step(rewards, discounts, t, n, j):
    """(sum_{s=t}^{t+n-1} (d_t ... d_{s-1}) r_s, d_t ... d_{t+n-1})."""
    reward_sum, discount = 0.0, 1.0
    for s in range(t, t + n):
        reward_sum += discount * rewards[s, j]
        discount *= discounts[s, j]
    return reward_sum, discount


def _h(support, i, x):
    """h_{z_i}(x) as printed in sec. 3.2."""
    z, last = support, len(support) - 1
    if (i == 0 and x <= z[0]) or (i == last and x >= z[last]):
        return 1.0
    if i > 0 and z[i - 1] <= x <= z[i]:
        return (x - z[i - 1]) / (z[i] - z[i - 1])
    if i < last and z[i] <= x <= z[i + 1]:
        return (z[i + 1] - x) / (z[i + 1] - z[i])
    return 0.0


def _distributional_reference(distributions, target_policy, behaviour_probs, actions, rewards,
                              discounts, bootstrap_distributions, bootstrap_target_policy,
                              support, lambda_):
    """q*_i = sum_n sum_a alpha_{n,a} sum_j q_j(x_{t+n}, a) h_{z_i}(z^n_j) (sec. 3.2), all loops.

    The printed formula has q_j(x_{t+n}, a_{t+n}); with the sum over a it must be q_j(x_{t+n}, a)
    (otherwise pi(.|x_{t+n}) would drop out and the mean would not be Retrace's)."""
    alphas = _alphas_reference(target_policy, behaviour_probs, actions,
                               bootstrap_target_policy, lambda_)
    q_ext = np.concatenate([distributions, bootstrap_distributions[None]], axis=0)
    t_len, b_len, a_len, _ = distributions.shape
    out = np.zeros((t_len, b_len, len(support)))
    for j in range(b_len):
        for t in range(t_len):
            for n in range(1, t_len - t + 1):
                reward_sum, discount = _n_step(rewards, discounts, t, n, j)
                for a in range(a_len):
                    for k, z_k in enumerate(support):
                        atom = reward_sum + discount * z_k                      # z^n_k
                        for i in range(len(support)):
                            out[t, j, i] += (alphas[t, n - 1, j, a] * q_ext[t + n, j, a, k]
                                             * _h(support, i, atom))
    return out


def _modes(fn):
    return {'eager': fn, 'function': tf.function(fn), 'jit': tf.function(fn, jit_compile=True)}


# ---------------------------------------------------------------------------------- Retrace


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
@pytest.mark.parametrize('lambda_', LAMBDAS)
def test_retrace_matches_eq3(mode, lambda_):
    inputs = _inputs(seed=int(10 * lambda_))
    fn = _modes(lambda kw: retrace_lib.retrace_targets(**kw, lambda_=lambda_))[mode]
    expected = _retrace_reference(**inputs, lambda_=lambda_)
    np.testing.assert_allclose(fn(inputs).numpy(), expected, rtol=1e-10, atol=1e-10)
    inputs32 = {k: v.astype(np.float32) if v.dtype == np.float64 else v
                for k, v in inputs.items()}
    np.testing.assert_allclose(fn(inputs32).numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('lambda_', LAMBDAS)
def test_alphas_match_formula_sum_to_one_and_some_are_negative(lambda_):
    inputs = _inputs(seed=3)
    args = [inputs[k] for k in ('target_policy', 'behaviour_probs', 'actions',
                                'bootstrap_target_policy')]
    alphas = retrace_lib.retrace_mixture_weights(*args, lambda_=lambda_).numpy()
    np.testing.assert_allclose(alphas, _alphas_reference(*args, lambda_=lambda_),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(alphas.sum(axis=(1, 3)), 1.0, rtol=1e-12)
    assert np.any(alphas < -1e-3)
    for t in range(T):
        assert not np.any(alphas[t, T - t:])                 # no backup beyond x_T


@pytest.mark.parametrize('mode', ['eager', 'function'])
@pytest.mark.parametrize('lambda_', LAMBDAS)
def test_mixture_form_reproduces_retrace(mode, lambda_):
    inputs = _inputs(seed=4 + int(10 * lambda_))
    expected = _retrace_reference(**inputs, lambda_=lambda_)
    # The reference alphas with explicit n-step backups: the identity itself, in numpy.
    alphas = _alphas_reference(inputs['target_policy'], inputs['behaviour_probs'],
                               inputs['actions'], inputs['bootstrap_target_policy'], lambda_)
    q_ext = np.concatenate([inputs['q_values'], inputs['bootstrap_q_values'][None]], axis=0)
    mixture = np.zeros((T, B))
    for j in range(B):
        for t in range(T):
            for n in range(1, T - t + 1):
                reward_sum, discount = _n_step(inputs['rewards'], inputs['discounts'], t, n, j)
                for a in range(A):
                    mixture[t, j] += alphas[t, n - 1, j, a] * (reward_sum
                                                               + discount * q_ext[t + n, j, a])
    np.testing.assert_allclose(mixture, expected, rtol=1e-10, atol=1e-10)

    def fn(kw):
        alphas = retrace_lib.retrace_mixture_weights(
            kw['target_policy'], kw['behaviour_probs'], kw['actions'],
            kw['bootstrap_target_policy'], lambda_=lambda_)
        return retrace_lib.retrace_from_mixture(alphas, kw['q_values'], kw['rewards'],
                                                kw['discounts'], kw['bootstrap_q_values'])

    got = _modes(fn)[mode](inputs).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_n_step_returns():
    inputs = _inputs(seed=5)
    got = retrace_lib.n_step_returns(inputs['rewards'], inputs['discounts'])
    for j in range(B):
        for t in range(T):
            for n in range(1, T + 1):
                expected = _n_step(inputs['rewards'], inputs['discounts'], t, n, j) \
                    if t + n <= T else (0.0, 0.0)
                np.testing.assert_allclose(got.reward_sums[t, n - 1, j], expected[0], atol=1e-12)
                np.testing.assert_allclose(got.discount_products[t, n - 1, j], expected[1],
                                           atol=1e-12)


def _deterministic_on_policy(inputs):
    """pi = mu = a point mass on the action taken (mu(a_t|x_t) = 1), so every c_s = lambda = 1."""
    t_len, b_len, a_len = inputs['target_policy'].shape
    inputs['target_policy'] = np.eye(a_len)[inputs['actions']]
    inputs['behaviour_probs'] = np.ones((t_len, b_len))
    return inputs


def test_retrace_on_policy_deterministic_is_n_step_return_to_the_end():
    """With pi = mu deterministic and lambda = 1, alpha_{n,a} = 0 for t + n < T: Q^ret_t is the
    (T - t)-step return bootstrapped from E_pi Q(x_T, .)."""
    inputs = _deterministic_on_policy(_inputs(seed=6))
    got = retrace_lib.retrace_targets(**inputs).numpy()
    bootstrap = np.sum(inputs['bootstrap_target_policy'] * inputs['bootstrap_q_values'], -1)
    for j in range(B):
        for t in range(T):
            reward_sum, discount = _n_step(inputs['rewards'], inputs['discounts'], t, T - t, j)
            np.testing.assert_allclose(got[t, j], reward_sum + discount * bootstrap[j],
                                       rtol=1e-12, atol=1e-12)


def _all_intermediate_actions(seed, t_len=4, a_len=3, num_atoms=None):
    """One batch entry per choice of (a_1, ..., a_{T-1}), everything else shared, pi = mu."""
    combos = list(itertools.product(range(a_len), repeat=t_len - 1))
    inputs = _inputs(seed, t=t_len, b=1, a=a_len, num_atoms=num_atoms)
    inputs = {k: np.repeat(v, len(combos), axis=1 if v.ndim > 1 and k not in (
        'bootstrap_q_values', 'bootstrap_target_policy', 'bootstrap_distributions') else 0)
              for k, v in inputs.items()}
    inputs['actions'][1:] = np.array(combos, np.int32).T
    pi = inputs['target_policy']
    inputs['behaviour_probs'] = np.take_along_axis(pi, inputs['actions'][..., None], -1)[..., 0]
    probability = np.prod(inputs['behaviour_probs'][1:], axis=0)     # P(a_1 .. a_{T-1})
    np.testing.assert_allclose(probability.sum(), 1.0)
    return inputs, probability


def test_retrace_on_policy_is_n_step_return_in_expectation():
    """With pi = mu stochastic and lambda = 1, Q^ret_0 is the T-step return plus corrections
    d..(E_pi Q(x_s, .) - Q(x_s, a_s)) that vanish only in expectation over a_s ~ mu: averaging
    over every choice of the later actions (rewards held fixed) gives the T-step return."""
    inputs, probability = _all_intermediate_actions(seed=7)
    got = retrace_lib.retrace_targets(**inputs).numpy()[0]
    rewards, discounts = inputs['rewards'][:, 0], inputs['discounts'][:, 0]
    reward_sum, discount = _n_step(rewards[:, None], discounts[:, None], 0, len(rewards), 0)
    bootstrap = np.sum(inputs['bootstrap_target_policy'][0] * inputs['bootstrap_q_values'][0])
    assert np.std(got) > 1e-3                                # single samples differ
    np.testing.assert_allclose(np.sum(probability * got), reward_sum + discount * bootstrap,
                               rtol=1e-10, atol=1e-10)


def test_episode_end_cuts_the_target():
    """A zero discount at step k makes targets before k independent of everything after k."""
    inputs = _inputs(seed=8)
    inputs['discounts'][:] = 0.9
    k = 3
    inputs['discounts'][k] = 0.0
    base = retrace_lib.retrace_targets(**inputs).numpy()
    changed = dict(inputs, rewards=inputs['rewards'].copy(), q_values=inputs['q_values'].copy())
    changed['rewards'][k + 1:] += 5.0
    changed['q_values'][k + 1:] -= 3.0
    changed['bootstrap_q_values'] = inputs['bootstrap_q_values'] + 7.0
    other = retrace_lib.retrace_targets(**changed).numpy()
    np.testing.assert_allclose(other[:k + 1], base[:k + 1], rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(other[k + 1:] - base[k + 1:]) > 1e-3)


def test_no_gradient_and_bad_inputs():
    inputs = _inputs(seed=9)
    q = tf.Variable(inputs.pop('q_values'))
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(retrace_lib.retrace_targets(q_values=q, **inputs))
    grad = tape.gradient(total, q)
    assert grad is None or not np.any(grad.numpy())
    inputs['q_values'] = q.numpy()
    with pytest.raises(ValueError, match='`rewards` must have rank'):
        retrace_lib.retrace_targets(**dict(inputs, rewards=inputs['rewards'][..., None]))
    with pytest.raises(TypeError, match='rewards'):
        retrace_lib.retrace_targets(**dict(inputs, rewards=inputs['rewards'].astype(np.float32)))


# --------------------------------------------------------------------- distributional Retrace

SUPPORT = np.linspace(-2.0, 2.0, 5)


def _distributional_args(inputs):
    return {k: v for k, v in inputs.items() if k not in ('q_values', 'bootstrap_q_values')}


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
@pytest.mark.parametrize('lambda_', LAMBDAS)
def test_distributional_matches_reference(mode, lambda_):
    inputs = _inputs(seed=11 + int(10 * lambda_), t=5, b=2, a=3, num_atoms=len(SUPPORT))
    fn = _modes(lambda kw: retrace_lib.distributional_retrace(**kw, support=SUPPORT,
                                                              lambda_=lambda_))[mode]
    got = fn(inputs).numpy()
    expected = _distributional_reference(**inputs, support=SUPPORT, lambda_=lambda_)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize('uniform_support', [False, True])
def test_distributional_per_step_lambda_and_uniform_projection(uniform_support):
    """A [T, B] lambda (the learner's lambda * mask: c = 0 where a step is not learnt from),
    and the O(M) projection of an evenly spaced support, against the all-loops reference."""
    inputs = _inputs(seed=21, t=6, b=3, a=3, num_atoms=len(SUPPORT))
    lambda_ = 0.9 * (np.random.default_rng(21).uniform(size=(6, 3)) > 0.3)
    fn = tf.function(lambda kw: retrace_lib.distributional_retrace(
        **kw, support=SUPPORT, lambda_=tf.constant(lambda_), uniform_support=uniform_support),
        jit_compile=True)
    expected = _distributional_reference(**inputs, support=SUPPORT, lambda_=lambda_)
    np.testing.assert_allclose(fn(_distributional_args(inputs)).numpy(), expected,
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize('lambda_', LAMBDAS)
def test_distributional_target_sums_to_one_with_signed_masses(lambda_):
    """sum_i q*_i = sum_{n,a} alpha_{n,a} = 1, but single masses may be negative (sec. 3.2)."""
    inputs = _inputs(seed=16, b=8, num_atoms=len(SUPPORT))
    got = retrace_lib.distributional_retrace(**_distributional_args(inputs), support=SUPPORT,
                                             lambda_=lambda_).numpy()
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-10)
    assert np.any(got < -1e-3)


def test_distributional_mean_is_scalar_retrace():
    """"One atom" check, formulated correctly. A support of size 1 does NOT reduce to scalar
    Retrace: the projection then sends every atom to z_1, so q* = sum alpha = 1 on z_1 (checked
    below). What does reduce is the mean: the kernel h interpolates linearly, so as long as no
    atom z^n_j leaves [v_min, v_max], sum_i z_i q*_i = sum_n sum_a alpha_{n,a} (R_n + gamma^n
    sum_j z_j q_j(x_{t+n}, a)), i.e. the alpha-mixture of scalar Retrace with Q := E_q[z]."""
    support = np.linspace(-40.0, 40.0, 81)
    inputs = _inputs(seed=12, num_atoms=len(support))
    for key in ('distributions', 'bootstrap_distributions'):    # mass only on [-20, 20]
        inner = inputs[key] * (np.abs(support) <= 20.0)
        inputs[key] = inner / inner.sum(axis=-1, keepdims=True)
    assert np.max(np.abs(inputs['rewards'])) * T <= 20.0      # no atom leaves [-40, 40]
    scalar = dict(inputs, q_values=inputs['distributions'] @ support,
                  bootstrap_q_values=inputs['bootstrap_distributions'] @ support)
    scalar = {k: v for k, v in scalar.items() if 'distributions' not in k}
    for lambda_ in LAMBDAS:
        target = retrace_lib.distributional_retrace(
            **_distributional_args(inputs), support=support, lambda_=lambda_).numpy()
        expected = retrace_lib.retrace_targets(**scalar, lambda_=lambda_).numpy()
        np.testing.assert_allclose(target @ support, expected, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(expected, _retrace_reference(**scalar, lambda_=lambda_),
                                   rtol=1e-10, atol=1e-10)

    single = _inputs(seed=13, num_atoms=1)
    target = retrace_lib.distributional_retrace(**_distributional_args(single),
                                                support=np.array([0.5]), lambda_=0.7)
    np.testing.assert_allclose(target.numpy(), 1.0, rtol=1e-12)


def _n_step_distribution_to_the_end(inputs, support, t, j):
    """The (T - t)-step distributional backup from sum_a pi(a|x_T) q(x_T, a), projected."""
    t_len = inputs['rewards'].shape[0]
    reward_sum, discount = _n_step(inputs['rewards'], inputs['discounts'], t, t_len - t, j)
    mixture = inputs['bootstrap_target_policy'][j] @ inputs['bootstrap_distributions'][j]
    return categorical.project(support, reward_sum + discount * support, mixture).numpy()


def test_distributional_on_policy_deterministic_is_n_step_backup_to_the_end():
    """pi = mu (a point mass on a_t) and lambda = 1: alpha_{n,a} = 0 before x_T, alpha_{T-t,a} =
    pi(a|x_T), so q* is exactly the n-step distributional backup to the end of the sequence."""
    inputs = _deterministic_on_policy(_inputs(seed=14, num_atoms=len(SUPPORT)))
    got = retrace_lib.distributional_retrace(**_distributional_args(inputs),
                                             support=SUPPORT).numpy()
    for j in range(B):
        for t in range(T):
            np.testing.assert_allclose(got[t, j],
                                       _n_step_distribution_to_the_end(inputs, SUPPORT, t, j),
                                       rtol=1e-12, atol=1e-12)


def test_distributional_on_policy_is_n_step_backup_in_expectation():
    """pi = mu stochastic and lambda = 1: the literal equality with the n-step backup to the end
    holds only in expectation over the later actions (E_mu[alpha_{n,a}] = 0 for t + n < T);
    averaging over every choice of a_1 .. a_{T-1} gives it exactly."""
    inputs, probability = _all_intermediate_actions(seed=15, num_atoms=len(SUPPORT))
    got = retrace_lib.distributional_retrace(**_distributional_args(inputs),
                                             support=SUPPORT).numpy()[0]
    assert np.max(np.std(got, axis=0)) > 1e-3
    np.testing.assert_allclose(probability @ got,
                               _n_step_distribution_to_the_end(inputs, SUPPORT, 0, 0),
                               rtol=1e-10, atol=1e-10)
