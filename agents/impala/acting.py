"""IMPALA's behaviour policy: sample from the network's softmax, store mu's logits (sec. 4)."""
import numpy as np
import sonnet as snt
import tensorflow as tf


class ImpalaPolicy:
    """Batched acting for the shared actor: one forward pass for all K environments."""

    def __init__(self, network: snt.Module, jit_compile: bool = False):
        self._network = network
        self._step = tf.function(self._sample, jit_compile=jit_compile)

    @property
    def variables(self):
        return self._network.trainable_variables

    def _sample(self, observations):
        logits = self._network(observations).logits
        actions = tf.random.categorical(logits, 1, dtype=tf.int32)[:, 0]
        return actions, logits

    def select_actions(self, observations: np.ndarray):
        actions, logits = self._step(observations)
        return actions.numpy(), {'behaviour_logits': logits.numpy()}
