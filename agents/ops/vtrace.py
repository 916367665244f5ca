"""V-trace off-policy targets and policy-gradient advantages (IMPALA sec. 4).

All tensors are time-major: `[T, B]` for per-step quantities, `[B]` for the bootstrap value.
"""
import collections

import tensorflow as tf

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
