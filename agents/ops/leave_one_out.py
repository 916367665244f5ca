"""The beta-leave-one-out policy gradient of the Reactor (sec. 3.1, eq. 10-11).

G = beta(a^) (R(a^) - Q(a^)) grad pi(a^) + sum_a Q(a) grad pi(a), with beta(a^) = min(c, 1/mu(a^))
for a truncation level c >= 1. Like `policy_gradient.py`, the loss is SUMMED over time and batch.
"""
import tensorflow as tf


def beta_loo_coefficients(behaviour_probs, truncation=1.0):
    """beta(a^) = min(c, 1 / mu(a^)) (sec. 3.1): c = 1 gives beta = 1, the LOO estimate (eq. 9),
    the setting of the paper's experiments (sec. 4.1); `truncation=None` gives 1/mu (eq. 11).

    Args:
      behaviour_probs: [...] mu(a^|x) of the actions taken.
      truncation: the constant c >= 1, or None for no truncation.
    """
    behaviour_probs = tf.convert_to_tensor(behaviour_probs)
    inverse = tf.math.reciprocal(behaviour_probs)
    if truncation is None:
        return inverse
    if not isinstance(truncation, (tf.Tensor, tf.Variable)) and truncation < 1:
        raise ValueError(f'leave_one_out: the truncation c must be >= 1 (sec. 3.1), '
                         f'got {truncation}.')
    if isinstance(truncation, (tf.Tensor, tf.Variable)):
        truncation = tf.cast(truncation, behaviour_probs.dtype)
    else:                       # tf.cast would round a Python float through float32 first
        truncation = tf.constant(truncation, behaviour_probs.dtype)
    return tf.minimum(truncation, inverse)


def beta_loo_loss(policy_probs, q_values, returns, actions, behaviour_probs, *, truncation=1.0,
                  weights=None):
    """-sum [beta (R - Q(a^)) pi(a^) + sum_a Q(a) pi(a)]: its gradient is minus eq. 10's G.

    R, Q and beta are constants (stop-gradient), so the gradient w.r.t. whatever produced
    `policy_probs` (e.g. logits through a softmax) is -G of eq. 10, step by step.

    Args:
      policy_probs: [..., A] pi(.|x), differentiable (softmax of the logits, possibly mixed with
        a uniform distribution as in sec. 3.4).
      q_values: [..., A] the current estimate Q(x, .) (the expectation of the distributional
        critic in the distributional case).
      returns: [...] R(a^): the Retrace return Q^ret(x, a^) (sec. 3.2: "we use the off-policy
        corrected return computed by the Retrace algorithm").
      actions: [...] integer a^, drawn from mu.
      behaviour_probs: [...] mu(a^|x).
      truncation: c of beta = min(c, 1/mu); None for beta = 1/mu (eq. 11, unbiased).
      weights: optional [...] per-step weights (e.g. prioritized-replay importance weights).

    Returns:
      A scalar, the loss summed over all leading dimensions.
    """
    policy_probs = tf.convert_to_tensor(policy_probs)
    dtype = policy_probs.dtype
    q_values = tf.stop_gradient(tf.convert_to_tensor(q_values, dtype))
    returns = tf.stop_gradient(tf.convert_to_tensor(returns, dtype))
    actions = tf.convert_to_tensor(actions)
    behaviour_probs = tf.convert_to_tensor(behaviour_probs, dtype)
    if q_values.shape.rank != policy_probs.shape.rank:
        raise ValueError(f'leave_one_out: `q_values` {q_values.shape} and `policy_probs` '
                         f'{policy_probs.shape} must have the same rank.')
    for name, tensor in [('returns', returns), ('actions', actions),
                         ('behaviour_probs', behaviour_probs)]:
        if tensor.shape.rank != policy_probs.shape.rank - 1:
            raise ValueError(f'leave_one_out: `{name}` {tensor.shape} must have one dimension '
                             f'fewer than `policy_probs` {policy_probs.shape}.')
    batch_dims = actions.shape.rank
    beta = tf.stop_gradient(beta_loo_coefficients(behaviour_probs, truncation))
    pi_taken = tf.gather(policy_probs, actions, axis=-1, batch_dims=batch_dims)
    q_taken = tf.gather(q_values, actions, axis=-1, batch_dims=batch_dims)
    objective = beta * (returns - q_taken) * pi_taken + tf.reduce_sum(
        q_values * policy_probs, axis=-1)
    if weights is not None:
        objective = objective * tf.stop_gradient(tf.convert_to_tensor(weights, dtype))
    return -tf.reduce_sum(objective)
