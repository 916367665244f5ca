"""V-trace off-policy targets and policy-gradient advantages (IMPALA sec. 4), and LASER's
trust-region V-trace (Schmitt et al., 2019, sec. 4).

All tensors are time-major: `[T, B]` for per-step quantities, `[B]` for the bootstrap value.
"""
import collections

import tensorflow as tf
import tensorflow_probability as tfp

VTraceReturns = collections.namedtuple('VTraceReturns', ['vs', 'pg_advantages'])


def _check_rank(name, tensor, rank):
    if tensor.shape.rank != rank:
        raise ValueError(f'vtrace: `{name}` must have rank {rank}, got shape {tensor.shape}.')


def log_probs_from_logits_and_actions(logits, actions):
    """log pi(a_t|x_t) for `logits` [T, B, A] and integer `actions` [T, B] -> [T, B]."""
    logits = tf.convert_to_tensor(logits)
    actions = tf.convert_to_tensor(actions)
    _check_rank('logits', logits, 3)
    _check_rank('actions', actions, 2)
    return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)


def vtrace(log_rhos, discounts, rewards, values, bootstrap_value, *, clip_rho_threshold=1.0,
           clip_c_threshold=1.0, clip_pg_rho_threshold=1.0, lambda_=1.0):
    """V-trace targets v_s (eq. 1, via Remark 1) and advantages for the policy gradient (sec. 4.2).

    Args:
      log_rhos: [T, B] log pi(a_t|x_t) - log mu(a_t|x_t).
      discounts: [T, B] gamma * (1 - episode ended at step t); a zero cuts every trace there.
      rewards: [T, B] r_t.
      values: [T, B] V(x_t).
      bootstrap_value: [B] V(x_T).
      clip_rho_threshold: rho-bar of rho_t in delta_t V; None for no clipping.
      clip_c_threshold: c-bar of the trace coefficients c_i; None for no clipping.
      clip_pg_rho_threshold: rho-bar of the policy-gradient weight rho_s; None for no clipping.
      lambda_: Remark 2's c_i = lambda * min(c-bar, pi/mu).

    Returns:
      VTraceReturns: `vs` [T, B], the targets v_s, and `pg_advantages` [T, B],
      rho_s (r_s + gamma_s v_{s+1} - V(x_s)) with v_T := bootstrap_value. Both are wrapped in
      `tf.stop_gradient`: they are targets.
    """
    log_rhos = tf.convert_to_tensor(log_rhos)
    discounts = tf.convert_to_tensor(discounts)
    rewards = tf.convert_to_tensor(rewards)
    values = tf.convert_to_tensor(values)
    bootstrap_value = tf.convert_to_tensor(bootstrap_value)
    for name, tensor in [('log_rhos', log_rhos), ('discounts', discounts),
                         ('rewards', rewards), ('values', values)]:
        _check_rank(name, tensor, 2)
        if tensor.dtype != values.dtype:
            raise TypeError(f'vtrace: `{name}` has dtype {tensor.dtype}, '
                            f'`values` has {values.dtype}.')
    _check_rank('bootstrap_value', bootstrap_value, 1)
    if bootstrap_value.dtype != values.dtype:
        raise TypeError(f'vtrace: `bootstrap_value` has dtype {bootstrap_value.dtype}, '
                        f'`values` has {values.dtype}.')

    def clip(rhos, threshold):
        return rhos if threshold is None else tf.minimum(tf.cast(threshold, rhos.dtype), rhos)

    rhos = tf.exp(log_rhos)
    clipped_rhos = clip(rhos, clip_rho_threshold)
    cs = tf.cast(lambda_, rhos.dtype) * clip(rhos, clip_c_threshold)
    values_tp1 = tf.concat([values[1:], bootstrap_value[None]], axis=0)
    deltas = clipped_rhos * (rewards + discounts * values_tp1 - values)

    # Remark 1: v_s - V(x_s) = delta_s V + gamma_s c_s (v_{s+1} - V(x_{s+1})), backwards in time.
    def step(acc, elems):
        delta_t, discount_t, c_t = elems
        return delta_t + discount_t * c_t * acc

    vs_minus_values = tf.scan(step, (deltas, discounts, cs),
                              initializer=tf.zeros_like(bootstrap_value), reverse=True)
    vs = vs_minus_values + values

    # Sec. 4.2: q_s = r_s + gamma v_{s+1}; the advantage q_s - V(x_s) is weighted by rho_s.
    vs_tp1 = tf.concat([vs[1:], bootstrap_value[None]], axis=0)
    pg_advantages = clip(rhos, clip_pg_rho_threshold) * (rewards + discounts * vs_tp1 - values)
    return VTraceReturns(vs=tf.stop_gradient(vs), pg_advantages=tf.stop_gradient(pg_advantages))


# LASER's trust-region V-trace (Schmitt et al., 2019, sec. 4).


def implied_policy_log_probs(target_logits, behaviour_logits, clip_rho_threshold=1.0):
    """log pi~_mu(a|x) of LASER eq. 3, the policy whose value V-trace actually estimates.

    pi~_mu(a|x) = min(rho_bar mu(a|x), pi(a|x)) / sum_b min(rho_bar mu(b|x), pi(b|x)), computed
    in log space. `target_logits` (pi) and `behaviour_logits` (mu) are [T, B, A]; returns
    [T, B, A]. `clip_rho_threshold` is rho_bar; None means no clipping (pi~ = pi).
    """
    target_logits = tf.convert_to_tensor(target_logits)
    behaviour_logits = tf.convert_to_tensor(behaviour_logits, dtype=target_logits.dtype)
    _check_rank('target_logits', target_logits, 3)
    _check_rank('behaviour_logits', behaviour_logits, 3)
    log_pi = tf.nn.log_softmax(target_logits, axis=-1)
    if clip_rho_threshold is None:
        return log_pi
    log_mu = tf.nn.log_softmax(behaviour_logits, axis=-1)
    log_rho_bar = tf.math.log(tf.cast(clip_rho_threshold, log_pi.dtype))
    log_unnormalised = tf.minimum(log_rho_bar + log_mu, log_pi)
    return log_unnormalised - tf.reduce_logsumexp(log_unnormalised, axis=-1, keepdims=True)


def behaviour_relevance(target_logits, behaviour_logits, clip_rho_threshold=1.0):
    """beta_KL(s) = KL(pi(.|s) || pi~_mu(.|s)) of LASER sec. 4.3 -> [T, B].

    A function of the state only (current policy and stored behaviour logits), never of the
    sampled action. Clamped at 0 against rounding; wrapped in `tf.stop_gradient`: a target.
    """
    target_logits = tf.convert_to_tensor(target_logits)
    implied = implied_policy_log_probs(target_logits, behaviour_logits, clip_rho_threshold)
    kl = tfp.distributions.Categorical(logits=target_logits).kl_divergence(
        tfp.distributions.Categorical(logits=implied))
    return tf.stop_gradient(tf.maximum(kl, tf.zeros_like(kl)))


def trust_region_mask(relevance, threshold):
    """lambda(s_t) of LASER eq. 7 -> float [T, B]: 1.0 for relevant states, 0.0 for rejected.

    lambda(s) = 1[beta(s) < b]: the printed indicator reads 1_{beta > b}, but the relevant set
    is M = {mu_z : beta(pi, mu_z, s) < b} (sec. 4.1) and high-KL, high-bias transitions are the
    ones rejected (sec. 4.3). `threshold` = float('inf') keeps every state.
    """
    relevance = tf.convert_to_tensor(relevance)
    _check_rank('relevance', relevance, 2)
    return tf.cast(relevance < tf.cast(threshold, relevance.dtype), relevance.dtype)


def trust_region_vtrace(log_rhos, discounts, rewards, values, bootstrap_value, relevant, *,
                        clip_rho_threshold=1.0, clip_c_threshold=1.0, clip_pg_rho_threshold=1.0,
                        lambda_=1.0):
    """Trust-region V-trace targets (LASER eq. 7) and policy-gradient advantages (sec. 4.3).

    G(s_t) = V(s_t) + sum_k (prod_{i<k} gamma_{t+i} lambda(s_{t+i}) c_{t+i})
    lambda(s_{t+k}) rho_{t+k} delta_{t+k} V. With lambda = `relevant` in {0, 1} this is `vtrace`
    with rho_t = c_t = 0 at rejected steps, so it sets their log_rhos to the dtype's most
    negative value (exp() is exactly 0): traces stop there, v_s = V(x_s) at a rejected state,
    the state before it bootstraps from V of the rejected state, and the policy-gradient
    advantage of a rejected state is exactly 0 (no loss term). All arguments are as in `vtrace`;
    `relevant` is the [T, B] float or bool mask of `trust_region_mask`.
    """
    log_rhos = tf.convert_to_tensor(log_rhos)
    relevant = tf.convert_to_tensor(relevant)
    _check_rank('log_rhos', log_rhos, 2)
    _check_rank('relevant', relevant, 2)
    if relevant.dtype != tf.bool:
        relevant = tf.not_equal(relevant, tf.zeros_like(relevant))
    rejected_log_rho = tf.constant(log_rhos.dtype.min, log_rhos.dtype)
    return vtrace(tf.where(relevant, log_rhos, rejected_log_rho), discounts, rewards, values,
                  bootstrap_value, clip_rho_threshold=clip_rho_threshold,
                  clip_c_threshold=clip_c_threshold, clip_pg_rho_threshold=clip_pg_rho_threshold,
                  lambda_=lambda_)
