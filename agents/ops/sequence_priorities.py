"""Replay priorities of whole sequences (Reactor sec. 3.3).

"We used simple gradient magnitude estimates as priorities, corresponding to a mean absolute TD
error along a sequence for Retrace, as defined in (3) for the classical RL case, and total
variation in the distributional Retrace case" (footnote 3: "Sum of absolute discrete probability
differences"). Time-major inputs `[T, B, ...]`; one priority per sequence, `[B]`.
"""
import tensorflow as tf


def _check_same_shape(name_a, a, name_b, b, rank):
    if a.shape.rank != rank:
        raise ValueError(f'sequence_priorities: `{name_a}` must have rank {rank}, '
                         f'got shape {a.shape}.')
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f'sequence_priorities: `{name_a}` {a.shape} and `{name_b}` {b.shape} '
                         f'must have the same shape.')


def retrace_priorities(retrace_targets, q_taken):
    """(1/T) sum_t |Delta Q(x_t, a_t)|, with Delta Q = Q^ret - Q(x_t, a_t) of eq. 3.

    Args:
      retrace_targets: [T, B] Q^ret(x_t, a_t), e.g. from `retrace.retrace_targets`.
      q_taken: [T, B] the current estimate Q(x_t, a_t).

    Returns:
      [B] priorities, wrapped in `tf.stop_gradient`.
    """
    retrace_targets = tf.convert_to_tensor(retrace_targets)
    q_taken = tf.convert_to_tensor(q_taken, retrace_targets.dtype)
    _check_same_shape('retrace_targets', retrace_targets, 'q_taken', q_taken, 2)
    return tf.stop_gradient(tf.reduce_mean(tf.abs(retrace_targets - q_taken), axis=0))


def distributional_retrace_priorities(target_distributions, distributions_taken):
    """(1/T) sum_t sum_i |q*_i(x_t, a_t) - q_i(x_t, a_t)|: the total variation of footnote 3
    (a plain sum of absolute differences, without the factor 1/2), averaged along the sequence.

    Args:
      target_distributions: [T, B, N] q*(x_t, a_t), e.g. from `retrace.distributional_retrace`.
      distributions_taken: [T, B, N] the current estimate q(x_t, a_t).

    Returns:
      [B] priorities, wrapped in `tf.stop_gradient`.
    """
    target_distributions = tf.convert_to_tensor(target_distributions)
    distributions_taken = tf.convert_to_tensor(distributions_taken, target_distributions.dtype)
    _check_same_shape('target_distributions', target_distributions,
                      'distributions_taken', distributions_taken, 3)
    total_variation = tf.reduce_sum(tf.abs(target_distributions - distributions_taken), axis=-1)
    return tf.stop_gradient(tf.reduce_mean(total_variation, axis=0))
