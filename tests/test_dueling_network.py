"""Ape-X DQN's dueling network is Dueling DDQN's (Ape-X appendix C; Wang et al., 2016, sec.
4.2): the gradient entering the last convolutional layer is rescaled by 1/sqrt(2), the values
are not."""
import numpy as np
import tensorflow as tf

from agents.core import variables
from agents.networks import dqn


def test_the_torso_gradient_is_rescaled_by_one_over_sqrt_2_and_values_are_unchanged():
    rng = np.random.default_rng(0)
    frames = tf.constant(rng.integers(0, 256, size=(3, 84, 84, 4)), tf.uint8)
    dueling_ddqn, unscaled = dqn.DuelingQNetwork(6), dqn.DuelingQNetwork(
        6, torso_gradient_scale=1.0)
    dueling_ddqn(frames), unscaled(frames)
    variables.copy_variables(dueling_ddqn, unscaled)
    upstream = tf.constant(rng.normal(size=(3, 6)), tf.float32)
    gradients = []
    for network in (dueling_ddqn, unscaled):
        with tf.GradientTape() as tape:
            q = network(frames)
            loss = tf.reduce_sum(upstream * q)
        gradients.append((q.numpy(), tape.gradient(loss, network.trainable_variables)))
    (q_scaled, scaled), (q_unscaled, plain) = gradients
    np.testing.assert_array_equal(q_scaled, q_unscaled)
    names = [v.name for v in dueling_ddqn.trainable_variables]
    torso = [i for i, name in enumerate(names) if '/conv' in name]
    assert len(torso) == 6                                 # 3 convolutions' kernels and biases
    for i, (s, p) in enumerate(zip(scaled, plain)):
        if i in torso:
            expected = p.numpy() / np.sqrt(2)
            # The two float32 sums differ in their last bits: tolerance relative to the largest.
            np.testing.assert_allclose(s.numpy(), expected, rtol=1e-5,
                                       atol=1e-5 * np.abs(expected).max(), err_msg=names[i])
        else:                                              # the two streams: untouched
            np.testing.assert_array_equal(s.numpy(), p.numpy(), err_msg=names[i])
