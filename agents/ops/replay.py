"""Prioritized replay quantities (Schaul et al., 2016; Ape-X sec. 3 and appendix F).

Reverb applies the priority exponent alpha itself: a table stores p_i and samples item i with
P(i) = p_i^alpha / sum_k p_k^alpha, and returns P(i) with each sample.
"""
import tensorflow as tf

# Added to |delta| so that no item gets priority 0: it could never be sampled again, and
# prioritized eviction at a negative exponent would give it weight 0^-0.4 = inf (Schaul et al.,
# 2016, sec. 3.3: p_i = |delta_i| + epsilon).
MIN_PRIORITY = 1e-6


def priorities_from_td_errors(td_errors):
    """p_i = |delta_i| (+ MIN_PRIORITY): the proportional variant (Ape-X appendix F)."""
    return tf.abs(tf.convert_to_tensor(td_errors)) + MIN_PRIORITY


def importance_weights(probabilities, exponent):
    """w_i = (N P(i))^-beta / max_j w_j over the batch (Schaul et al., 2016, sec. 3.4).

    The memory size N cancels in the normalisation, so w_i = (P(i) / min_j P(j))^-beta.

    Args:
      probabilities: [B] sampling probabilities P(i) of the batch, as Reverb returned them.
      exponent: beta (Ape-X sec. 4.1: 0.4).

    Returns:
      [B] weights in (0, 1], the largest exactly 1; wrapped in `tf.stop_gradient`.
    """
    probabilities = tf.convert_to_tensor(probabilities)
    if probabilities.shape.rank != 1:
        raise ValueError(f'replay: `probabilities` must have rank 1, got shape '
                         f'{probabilities.shape}.')
    ratio = probabilities / tf.reduce_min(probabilities)
    return tf.stop_gradient(tf.pow(ratio, -tf.cast(exponent, probabilities.dtype)))
