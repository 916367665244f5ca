"""Categorical projection h_z onto a fixed support (Reactor sec. 3.2; C51, Bellemare et al. 2017).

h_{z_i}(x) is the triangular (linear interpolation) kernel of Reactor sec. 3.2: x between z_{i-1}
and z_{i+1} splits its mass between its two neighbouring support points in proportion to
closeness; x <= v_min = z_1 goes wholly to z_1 and x >= v_max = z_N wholly to z_N.
"""
import tensorflow as tf


def project(support, atoms, probabilities):
    """sum_j p_j h_{z_i}(x_j): the distribution sum_j p_j delta_{x_j} projected onto {z_i}.

    Args:
      support: [N] strictly increasing z_1 < ... < z_N (need not be uniform; N may be 1).
      atoms: [..., M] locations x_j, e.g. the shifted and scaled atoms r + gamma z_j.
      probabilities: [..., M] masses p_j. The projection is linear in them, so any real weights
        (e.g. distributional Retrace's signed mixture) are projected too.

    Returns:
      [..., N] masses on the support: they sum to sum_j p_j. Atoms outside [z_1, z_N] are
      clipped to the ends; an atom exactly on z_i puts all its mass on z_i.
    """
    atoms = tf.convert_to_tensor(atoms)
    probabilities = tf.convert_to_tensor(probabilities, atoms.dtype)
    support = tf.convert_to_tensor(support, atoms.dtype)
    if support.shape.rank != 1:
        raise ValueError(f'categorical: `support` must have rank 1, got shape {support.shape}.')
    if atoms.shape.rank is not None and atoms.shape.rank < 1:
        raise ValueError('categorical: `atoms` must have rank >= 1.')
    x = tf.clip_by_value(atoms, support[0], support[-1])[..., None]          # [..., M, 1]
    ones = tf.ones_like(support[:1])
    # Neighbours z_{i-1}, z_{i+1} and gaps. At the ends, a dummy neighbour one unit away makes
    # the branch below evaluate to 1 exactly at x = z_1; the branch x > z_N is never taken.
    gaps = support[1:] - support[:-1]
    left = tf.concat([support[:1] - 1, support[:-1]], axis=0)
    left_gap = tf.concat([ones, gaps], axis=0)
    right = tf.concat([support[1:], support[-1:] + 1], axis=0)
    right_gap = tf.concat([gaps, ones], axis=0)
    rising = (x - left) / left_gap                   # (x - z_{i-1}) / (z_i - z_{i-1})
    falling = (right - x) / right_gap                # (z_{i+1} - x) / (z_{i+1} - z_i)
    kernel = tf.clip_by_value(tf.where(x <= support, rising, falling), 0.0, 1.0)  # [..., M, N]
    return tf.reduce_sum(probabilities[..., None] * kernel, axis=-2)


def project_uniform(support, atoms, probabilities):
    """`project` for an evenly spaced support (Reactor eq. 5's grid), in O(M) per row instead
    of O(M N): each atom's mass goes to its two neighbouring points by segment sums.

    Args:
      support: [N] evenly spaced z_1 < ... < z_N, N >= 2 (only z_1, z_N and N are read).
      atoms: [..., M] locations.
      probabilities: [..., M] masses (any real weights).

    Returns:
      [..., N], equal to `project(support, atoms, probabilities)` up to rounding.
    """
    atoms = tf.convert_to_tensor(atoms)
    probabilities = tf.convert_to_tensor(probabilities, atoms.dtype)
    support = tf.convert_to_tensor(support, atoms.dtype)
    num_points = support.shape[0]
    if support.shape.rank != 1 or num_points is None or num_points < 2:
        raise ValueError(f'categorical: `support` must be a vector of >= 2 points, got shape '
                         f'{support.shape}.')
    v_min, v_max = support[0], support[-1]
    position = (tf.clip_by_value(atoms, v_min, v_max) - v_min) / (v_max - v_min) * (
        num_points - 1)                                                  # in [0, N - 1]
    lower = tf.minimum(tf.floor(position), num_points - 1)
    upper_weight = position - lower                                      # 0 on a point
    lower = tf.cast(lower, tf.int32)
    upper = tf.minimum(lower + 1, num_points - 1)
    rows = tf.reduce_prod(tf.shape(atoms)[:-1])
    offsets = tf.reshape(tf.range(rows) * num_points,
                         tf.concat([tf.shape(atoms)[:-1], [1]], axis=0))
    masses = tf.concat([probabilities * (1 - upper_weight), probabilities * upper_weight], -1)
    segments = tf.concat([lower + offsets, upper + offsets], axis=-1)
    projected = tf.math.unsorted_segment_sum(tf.reshape(masses, [-1]),
                                             tf.reshape(segments, [-1]), rows * num_points)
    return tf.reshape(projected, tf.concat([tf.shape(atoms)[:-1], [num_points]], axis=0))
