"""n-step value targets of Ape-X (Horgan et al., 2018): double-Q for DQN (sec. 3.1), the DPG
critic target (sec. 3.2); the DPG actor's loss with appendix D's element-wise clip of dq/da.

Batch-major: `[B, N]` for the N steps of a transition, `[B]` or `[B, A]` at its bootstrap state.
`discount_t` holds the per-step discounts with gamma included: gamma at a step inside the
episode, 0 at the step that ends it, and 1 for padding after a time-limit cut (the transition is
shorter than N steps, and the bootstrap state is the last observation before the cut).
"""
import tensorflow as tf


def _check_rank(name, tensor, rank):
    if tensor.shape.rank != rank:
        raise ValueError(f'value_learning: `{name}` must have rank {rank}, '
                         f'got shape {tensor.shape}.')


def n_step_return(r_t, discount_t, bootstrap_value_tn):
    """G = r_0 + d_0 r_1 + d_0 d_1 r_2 + ... + (d_0 ... d_{N-1}) bootstrap (docs/paper_notes.md).

    Args:
      r_t: [B, N] rewards R_{t+1}, ..., R_{t+N}.
      discount_t: [B, N] per-step discounts, gamma included.
      bootstrap_value_tn: [B] the value of S_{t+N}.

    Returns:
      [B] targets, wrapped in `tf.stop_gradient`.
    """
    r_t = tf.convert_to_tensor(r_t)
    discount_t = tf.convert_to_tensor(discount_t, r_t.dtype)
    bootstrap_value_tn = tf.convert_to_tensor(bootstrap_value_tn, r_t.dtype)
    _check_rank('r_t', r_t, 2)
    _check_rank('discount_t', discount_t, 2)
    _check_rank('bootstrap_value_tn', bootstrap_value_tn, 1)
    # Backwards: G_k = r_k + d_k G_{k+1}, G_N = bootstrap.
    target = bootstrap_value_tn
    for k in reversed(range(r_t.shape[1])):
        target = r_t[:, k] + discount_t[:, k] * target
    return tf.stop_gradient(target)


def double_q_n_step_targets(q_target_tn, q_selector_tn, r_t, discount_t):
    """Ape-X DQN's target: the N-step return bootstrapped from q(S_{t+N}, argmax_a q(S_{t+N}, a;
    theta); theta^-) (sec. 3.1; van Hasselt et al., 2016).

    Args:
      q_target_tn: [B, A] target-network values at S_{t+N}.
      q_selector_tn: [B, A] online-network values at S_{t+N}, which pick the action.
      r_t: [B, N] rewards.
      discount_t: [B, N] per-step discounts, gamma included.

    Returns:
      [B] targets, wrapped in `tf.stop_gradient`.
    """
    q_target_tn = tf.convert_to_tensor(q_target_tn)
    q_selector_tn = tf.convert_to_tensor(q_selector_tn)
    _check_rank('q_target_tn', q_target_tn, 2)
    _check_rank('q_selector_tn', q_selector_tn, 2)
    best_action = tf.argmax(q_selector_tn, axis=1, output_type=tf.int32)
    bootstrap = tf.gather(q_target_tn, best_action, axis=1, batch_dims=1)
    return n_step_return(r_t, discount_t, bootstrap)


def dpg_critic_targets(q_target_at_pi_tn, r_t, discount_t):
    """Ape-X DPG's critic target: the N-step return bootstrapped from q(S_{t+N}, pi(S_{t+N};
    phi^-); psi^-), both target networks (sec. 3.2).

    Args:
      q_target_at_pi_tn: [B] the target critic at S_{t+N} and the target actor's action there.
      r_t: [B, N] rewards.
      discount_t: [B, N] per-step discounts, gamma included.
    """
    return n_step_return(r_t, discount_t, q_target_at_pi_tn)


def dpg_loss(a_t, dqda_t, dqda_clipping=None):
    """Ape-X DPG's actor loss (sec. 3.2, appendix D): 1/2 sum_a (sg(a_t + clip(dq/da)) - a_t)^2,
    whose gradient with respect to a_t is -clip(dq/da), so that back-propagated through
    a_t = pi(S_t; phi) it ascends q(S_t, pi(S_t; phi)). Appendix D: "The gradient used to
    update the actor network is clipped to [-1, 1], element-wise": the clip is of dq/da,
    as trfl's `dpg(..., dqda_clipping)` (docs/fidelity.md).

    Args:
      a_t: [B, A] the actor's actions pi(S_t; phi), carrying its gradient.
      dqda_t: [B, A] the critic's gradient dq(S_t, a)/da at a = a_t.
      dqda_clipping: dq/da is clipped element-wise to [-dqda_clipping, dqda_clipping]; None
        leaves it.

    Returns:
      [B] losses.
    """
    a_t = tf.convert_to_tensor(a_t)
    dqda_t = tf.stop_gradient(tf.convert_to_tensor(dqda_t, a_t.dtype))
    _check_rank('a_t', a_t, 2)
    _check_rank('dqda_t', dqda_t, 2)
    if dqda_clipping is not None:
        dqda_t = tf.clip_by_value(dqda_t, -dqda_clipping, dqda_clipping)
    target = tf.stop_gradient(a_t + dqda_t)
    return 0.5 * tf.reduce_sum(tf.square(target - a_t), axis=1)
