"""Retrace(lambda) targets (Reactor eq. 3-4) and distributional Retrace (Reactor sec. 3.2).

All tensors are time-major: `[T, B, ...]` for the states x_0 .. x_{T-1} of a sequence and
`[B, ...]` for the bootstrap state x_T. `discounts[t]` is gamma * (1 - episode ended at step t):
it discounts the step x_t -> x_{t+1}, and a zero there cuts every return at that step (the
n-step backups, not the traces c_s, carry the discounts, as in sec. 3.2). The sequence ends at
x_T, whose action is not in the data: the trace is truncated there (c_T := 0), which is exactly
eq. 3 with its sum over s >= t stopped at s = T - 1.

Mixture arrays are indexed `[t, n - 1, B, ...]`: entry (t, n - 1) belongs to the target of step t
and to its n-step backup, which bootstraps from x_{t+n} (n = 1 .. T - t; zero for t + n > T).
"""
import collections

import tensorflow as tf

from agents.ops import categorical

NStepReturns = collections.namedtuple('NStepReturns', ['reward_sums', 'discount_products'])


def _check_rank(name, tensor, rank):
    if tensor.shape.rank != rank:
        raise ValueError(f'retrace: `{name}` must have rank {rank}, got shape {tensor.shape}.')


def _check_dtype(name, tensor, dtype):
    if tensor.dtype != dtype:
        raise TypeError(f'retrace: `{name}` has dtype {tensor.dtype}, expected {dtype}.')


def _as_dtype(x, dtype):
    """A Python number straight in `dtype` (tf.cast would round 0.7 through float32 first)."""
    return tf.cast(x, dtype) if isinstance(x, (tf.Tensor, tf.Variable)) else tf.constant(x, dtype)


def _traces(target_policy, behaviour_probs, actions, lambda_):
    """c_t = lambda min(1, pi(a_t|x_t) / mu(a_t|x_t)) (eq. 4) -> [T, B]."""
    pi_taken = tf.gather(target_policy, actions, axis=-1, batch_dims=2)
    return _as_dtype(lambda_, pi_taken.dtype) * tf.minimum(
        tf.ones_like(pi_taken), pi_taken / behaviour_probs)


def _windows(per_step, bootstrap=None):
    """out[t, k] = y_{t+k} for k = 0 .. T-1, zero past the end; y = per_step (+ bootstrap).

    With a bootstrap, y_s is per_step[s + 1] for s < T - 1 and bootstrap for s = T - 1, so
    out[t, n - 1] is the quantity at x_{t+n}; without one, out[t, k] is per_step[t + k].
    """
    seq = per_step if bootstrap is None else tf.concat([per_step[1:], bootstrap[None]], axis=0)
    padded = tf.concat([seq, tf.zeros_like(seq[1:])], axis=0)                 # length 2T - 1
    steps = tf.range(tf.shape(seq)[0])
    return tf.gather(padded, steps[:, None] + steps[None, :])


def n_step_returns(rewards, discounts):
    """The n-step reward sums and discount products of every n-step backup (sec. 3.2).

    Args:
      rewards: [T, B] r_t.
      discounts: [T, B] per-step discounts (gamma included, 0 at an episode end).

    Returns:
      NStepReturns: `reward_sums` [T, T, B], entry (t, n - 1) = sum_{s=t}^{t+n-1} (prod_{k=t}^{s-1}
      d_k) r_s, and `discount_products` [T, T, B], entry (t, n - 1) = prod_{k=t}^{t+n-1} d_k (the
      gamma^n of the paper, zero once an episode has ended). Both are zero for t + n > T.
    """
    rewards = tf.convert_to_tensor(rewards)
    discounts = tf.convert_to_tensor(discounts)
    _check_rank('rewards', rewards, 2)
    _check_rank('discounts', discounts, 2)
    _check_dtype('discounts', discounts, rewards.dtype)
    reward_windows = _windows(rewards)                   # [t, k] = r_{t+k}
    discount_windows = _windows(discounts)               # [t, k] = d_{t+k}, 0 past the end
    steps = tf.range(tf.shape(rewards)[0])
    valid = tf.cast(steps[:, None] + steps[None, :] < tf.shape(rewards)[0], rewards.dtype)
    reward_sums = tf.cumsum(
        tf.math.cumprod(discount_windows, axis=1, exclusive=True) * reward_windows, axis=1)
    return NStepReturns(reward_sums=reward_sums * valid[..., None],
                        discount_products=tf.math.cumprod(discount_windows, axis=1))


def retrace_targets(q_values, target_policy, behaviour_probs, actions, rewards, discounts,
                    bootstrap_q_values, bootstrap_target_policy, *, lambda_=1.0):
    """Q^ret(x_t, a_t) = Q(x_t, a_t) + Delta Q(x_t, a_t) of eq. 3 for every step of a sequence.

    Uses the backward form of eq. 3, Q^ret_t = r_t + d_t (E_pi Q(x_{t+1}, .)
    + c_{t+1} (Q^ret_{t+1} - Q(x_{t+1}, a_{t+1}))), with c_T := 0 at the bootstrap state.

    Args:
      q_values: [T, B, A] Q(x_t, .).
      target_policy: [T, B, A] pi(.|x_t).
      behaviour_probs: [T, B] mu(a_t|x_t), stored with the actions (sec. 3.2, footnote 1).
      actions: [T, B] integer a_t.
      rewards: [T, B] r_t.
      discounts: [T, B] per-step discounts (gamma included, 0 at an episode end).
      bootstrap_q_values: [B, A] Q(x_T, .).
      bootstrap_target_policy: [B, A] pi(.|x_T).
      lambda_: the lambda of c_s = lambda min(1, rho_s) (eq. 4).

    Returns:
      [T, B] targets Q^ret, wrapped in `tf.stop_gradient`.
    """
    q_values = tf.convert_to_tensor(q_values)
    dtype = q_values.dtype
    target_policy = tf.convert_to_tensor(target_policy)
    behaviour_probs = tf.convert_to_tensor(behaviour_probs)
    actions = tf.convert_to_tensor(actions)
    rewards = tf.convert_to_tensor(rewards)
    discounts = tf.convert_to_tensor(discounts)
    bootstrap_q_values = tf.convert_to_tensor(bootstrap_q_values)
    bootstrap_target_policy = tf.convert_to_tensor(bootstrap_target_policy)
    for name, tensor, rank in [('q_values', q_values, 3), ('target_policy', target_policy, 3),
                               ('behaviour_probs', behaviour_probs, 2), ('rewards', rewards, 2),
                               ('discounts', discounts, 2),
                               ('bootstrap_q_values', bootstrap_q_values, 2),
                               ('bootstrap_target_policy', bootstrap_target_policy, 2)]:
        _check_rank(name, tensor, rank)
        _check_dtype(name, tensor, dtype)
    _check_rank('actions', actions, 2)

    cs = _traces(target_policy, behaviour_probs, actions, lambda_)
    q_taken = tf.gather(q_values, actions, axis=-1, batch_dims=2)
    values = tf.reduce_sum(target_policy * q_values, axis=-1)                  # E_pi Q(x_t, .)
    bootstrap_value = tf.reduce_sum(bootstrap_target_policy * bootstrap_q_values, axis=-1)
    values_tp1 = tf.concat([values[1:], bootstrap_value[None]], axis=0)
    zero = tf.zeros_like(bootstrap_value)
    cs_tp1 = tf.concat([cs[1:], zero[None]], axis=0)                           # c_T := 0
    q_taken_tp1 = tf.concat([q_taken[1:], zero[None]], axis=0)

    def step(q_ret_tp1, elems):
        reward, discount, value_tp1, c_tp1, q_tp1 = elems
        return reward + discount * (value_tp1 + c_tp1 * (q_ret_tp1 - q_tp1))

    q_ret = tf.scan(step, (rewards, discounts, values_tp1, cs_tp1, q_taken_tp1),
                    initializer=zero, reverse=True)
    return tf.stop_gradient(q_ret)


def retrace_mixture_weights(target_policy, behaviour_probs, actions, bootstrap_target_policy, *,
                            lambda_=1.0):
    """alpha_{n,a} = (c_{t+1} ... c_{t+n-1}) (pi(a|x_{t+n}) - I{a = a_{t+n}} c_{t+n}) (sec. 3.2).

    With c_T := 0 they sum to 1 over (n, a) for every t; single ones may be negative.

    Args:
      target_policy: [T, B, A] pi(.|x_t).
      behaviour_probs: [T, B] mu(a_t|x_t).
      actions: [T, B] integer a_t.
      bootstrap_target_policy: [B, A] pi(.|x_T).
      lambda_: the lambda of eq. 4.

    Returns:
      [T, T, B, A] alphas; entry (t, n - 1, b, a) is alpha_{n,a} of step t, zero for t + n > T.
      Wrapped in `tf.stop_gradient`.
    """
    target_policy = tf.convert_to_tensor(target_policy)
    behaviour_probs = tf.convert_to_tensor(behaviour_probs)
    actions = tf.convert_to_tensor(actions)
    bootstrap_target_policy = tf.convert_to_tensor(bootstrap_target_policy)
    _check_rank('target_policy', target_policy, 3)
    _check_rank('behaviour_probs', behaviour_probs, 2)
    _check_rank('actions', actions, 2)
    _check_rank('bootstrap_target_policy', bootstrap_target_policy, 2)
    _check_dtype('behaviour_probs', behaviour_probs, target_policy.dtype)
    _check_dtype('bootstrap_target_policy', bootstrap_target_policy, target_policy.dtype)

    cs = _traces(target_policy, behaviour_probs, actions, lambda_)
    num_actions = tf.shape(target_policy)[-1]
    # At x_T: pi is the bootstrap policy and c_T = 0, so no indicator term is needed there.
    one_hot = tf.one_hot(actions, num_actions, dtype=target_policy.dtype)
    c_next = _windows(cs, tf.zeros_like(cs[0]))                       # [t, n-1] = c_{t+n}
    pi_next = _windows(target_policy, bootstrap_target_policy)         # pi(.|x_{t+n})
    one_hot_next = _windows(one_hot, tf.zeros_like(one_hot[0]))        # I{. = a_{t+n}}
    trace = tf.math.cumprod(c_next, axis=1, exclusive=True)           # c_{t+1} ... c_{t+n-1}
    alphas = trace[..., None] * (pi_next - one_hot_next * c_next[..., None])
    return tf.stop_gradient(alphas)


def retrace_from_mixture(alphas, q_values, rewards, discounts, bootstrap_q_values):
    """sum_{n>=1} sum_a alpha_{n,a} [n-step backup from Q(x_{t+n}, a)]: Q^ret again (sec. 3.2).

    Args:
      alphas: [T, T, B, A] from `retrace_mixture_weights`.
      q_values: [T, B, A] Q(x_t, .); q_values[0] is not used (x_0 is never bootstrapped from).
      rewards: [T, B] r_t.
      discounts: [T, B] per-step discounts.
      bootstrap_q_values: [B, A] Q(x_T, .).

    Returns:
      [T, B] targets, wrapped in `tf.stop_gradient`.
    """
    q_values = tf.convert_to_tensor(q_values)
    bootstrap_q_values = tf.convert_to_tensor(bootstrap_q_values)
    _check_rank('alphas', tf.convert_to_tensor(alphas), 4)
    _check_rank('q_values', q_values, 3)
    _check_rank('bootstrap_q_values', bootstrap_q_values, 2)
    returns = n_step_returns(rewards, discounts)
    backups = (returns.reward_sums[..., None]
               + returns.discount_products[..., None] * _windows(q_values, bootstrap_q_values))
    return tf.stop_gradient(tf.reduce_sum(alphas * backups, axis=[1, 3]))


def distributional_retrace(distributions, target_policy, behaviour_probs, actions, rewards,
                           discounts, bootstrap_distributions, bootstrap_target_policy, support,
                           *, lambda_=1.0, uniform_support=False):
    """Distributional Retrace target q*_i(x_t, a_t) (sec. 3.2).

    q*_i = sum_n sum_a alpha_{n,a} sum_j q_j(x_{t+n}, a) h_{z_i}(z^n_j), with z^n_j the n-step
    reward sum plus (prod of the n discounts) z_j, and h the projection of `categorical.project`.

    Args:
      distributions: [T, B, A, N] q_j(x_t, .); distributions[0] is not used.
      target_policy: [T, B, A] pi(.|x_t).
      behaviour_probs: [T, B] mu(a_t|x_t).
      actions: [T, B] integer a_t.
      rewards: [T, B] r_t.
      discounts: [T, B] per-step discounts (gamma included, 0 at an episode end).
      bootstrap_distributions: [B, A, N] q_j(x_T, .).
      bootstrap_target_policy: [B, A] pi(.|x_T).
      support: [N] the fixed grid z_1 < ... < z_N.
      lambda_: the lambda of eq. 4 (a scalar, or [T, B] per step).
      uniform_support: the support is evenly spaced (eq. 5): the projection takes
        `categorical.project_uniform`, the same result at a fraction of the cost.

    Returns:
      [T, B, N] target masses on the support. They sum to 1 per step but, as the paper notes,
      single ones may be negative. Wrapped in `tf.stop_gradient`.
    """
    distributions = tf.convert_to_tensor(distributions)
    bootstrap_distributions = tf.convert_to_tensor(bootstrap_distributions)
    _check_rank('distributions', distributions, 4)
    _check_rank('bootstrap_distributions', bootstrap_distributions, 3)
    alphas = retrace_mixture_weights(target_policy, behaviour_probs, actions,
                                     bootstrap_target_policy, lambda_=lambda_)
    _check_dtype('distributions', distributions, alphas.dtype)
    _check_dtype('bootstrap_distributions', bootstrap_distributions, alphas.dtype)
    support = tf.convert_to_tensor(support, distributions.dtype)
    returns = n_step_returns(rewards, discounts)
    # All actions' backups of one n share the atoms z^n_j: mix their masses with the alphas first.
    masses = tf.einsum('tnba,tnbaj->tnbj', alphas,
                       _windows(distributions, bootstrap_distributions))
    atoms = (returns.reward_sums[..., None]
             + returns.discount_products[..., None] * support)                  # [T, T, B, N]
    project = categorical.project_uniform if uniform_support else categorical.project
    projected = project(support, atoms, masses)                                 # [T, T, B, N]
    return tf.stop_gradient(tf.reduce_sum(projected, axis=1))
