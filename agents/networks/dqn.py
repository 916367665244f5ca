"""The dueling Q network of Ape-X DQN (appendix C: "the same network as in the Dueling DDQN
agent", Wang et al., 2016, sec. 4.2): the DQN convolutions, then value and advantage streams of
512 units, combined as Q(s, a) = V(s) + A(s, a) - mean_a' A(s, a'). As Wang et al. sec. 4.2,
"we rescale the combined gradient entering the last convolutional layer by 1/sqrt(2)"; the
forward values are untouched. It computes in its `precision` up to the streams' output layers,
which give float32 (agents/networks/layers.py)."""
import numpy as np
import sonnet as snt
import tensorflow as tf

from agents.networks import impala
from agents.networks import layers


def scale_gradient(x: tf.Tensor, scale: float) -> tf.Tensor:
    """x in the forward pass; its gradient multiplied by `scale` in the backward pass."""
    @tf.custom_gradient
    def identity(y):
        return tf.identity(y), lambda dy: dy * scale
    return identity(x)


class DuelingQNetwork(snt.Module):
    """[N, 84, 84, 4] uint8 frames -> [N, A] action values."""

    def __init__(self, num_actions: int, torso_gradient_scale: float = 1 / np.sqrt(2),
                 precision: str = 'float32', name='dueling_q_network'):
        super().__init__(name=name)
        self._dtype = layers.compute_dtype(precision)
        # Conv 32 8x8/4, 64 4x4/2, 64 3x3/1, ReLUs (Mnih et al., 2015).
        self._torso = snt.Sequential([
            layers.Conv2D(32, 8, stride=4, padding='VALID'), tf.nn.relu,
            layers.Conv2D(64, 4, stride=2, padding='VALID'), tf.nn.relu,
            layers.Conv2D(64, 3, stride=1, padding='VALID'), tf.nn.relu,
            snt.Flatten()])
        self._torso_gradient_scale = torso_gradient_scale
        self._value = snt.Sequential([layers.Linear(512), tf.nn.relu,
                                      layers.Linear(1, output=True)])
        self._advantage = snt.Sequential([layers.Linear(512), tf.nn.relu,
                                          layers.Linear(num_actions, output=True)])

    def __call__(self, observation):
        x = self._torso(impala.frames_to_float(observation, self._dtype))
        # Both streams' gradients meet here, at the last convolution's (flattened) output.
        x = scale_gradient(x, self._torso_gradient_scale)
        advantage = self._advantage(x)
        value = self._value(x)
        return value + advantage - tf.reduce_mean(advantage, axis=1, keepdims=True)
