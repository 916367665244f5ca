"""Actor-critic loss terms of the V-trace actor-critic (IMPALA sec. 4.2).

Each loss is SUMMED over time and batch, as in IMPALA (not averaged); the learner weights them
with the baseline cost and entropy cost of its config.
"""
import tensorflow as tf


def policy_gradient_loss(logits, actions, advantages):
    """-sum_s log pi(a_s|x_s) A_s: its gradient is the sec. 4.2 policy-gradient direction, negated.

    Args:
      logits: [..., A] policy logits.
      actions: [...] integer actions taken.
      advantages: [...] A_s, e.g. V-trace's rho_s (r_s + gamma v_{s+1} - V(x_s)); treated as a
        constant (no gradient flows into it).
    """
    logits = tf.convert_to_tensor(logits)
    actions = tf.convert_to_tensor(actions)
    if actions.shape.rank != logits.shape.rank - 1:
        raise ValueError(f'policy_gradient_loss: `actions` {actions.shape} must have one '
                         f'dimension fewer than `logits` {logits.shape}.')
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
    return tf.reduce_sum(cross_entropy * tf.stop_gradient(advantages))


def entropy_loss(logits, mask=None):
    """-sum_s H(pi(.|x_s)): minimising it maximises entropy, the sec. 4.2 entropy bonus.

    `mask` [...] (optional) weights each step; 0 leaves a step out of the sum.
    """
    policy = tf.nn.softmax(logits)
    log_policy = tf.nn.log_softmax(logits)
    entropy = -tf.reduce_sum(policy * log_policy, axis=-1)
    if mask is not None:
        entropy = entropy * mask
    return -tf.reduce_sum(entropy)


def baseline_loss(vs_minus_values):
    """0.5 sum_s (v_s - V(x_s))^2: its negative gradient is sec. 4.2's (v_s - V(x_s)) grad V."""
    return 0.5 * tf.reduce_sum(tf.square(vs_minus_values))
