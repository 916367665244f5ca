"""The actor-critic behaviour policy: sample from the network's softmax and store mu's logits
(IMPALA sec. 4; LASER's replay keeps the same logits, sec. 4.3).

With figure 3's LSTM core the policy carries the core state across steps, resets it where an
episode starts, and feeds the core the previous action and reward (agents/core/steps.py).
"""
import sonnet as snt
import tensorflow as tf

from agents.core import steps


def is_recurrent(network: snt.Module) -> bool:
    return hasattr(network, 'unroll')


class SoftmaxPolicy:
    """Batched acting for the shared actor: one forward pass for all K environments."""

    def __init__(self, network: snt.Module, jit_compile: bool = False):
        self._network = network
        self._recurrent = is_recurrent(network)
        # Plain tensor arguments: each one a tf.function call converts costs time per step.
        sample = self._sample_recurrent if self._recurrent else self._sample_feed_forward
        self._step = tf.function(sample, jit_compile=jit_compile, autograph=False)

    @property
    def variables(self):
        return self._network.trainable_variables

    def initial_state(self, num_envs: int):
        if not self._recurrent:
            return ()
        return tf.nest.map_structure(lambda s: s.numpy(),
                                     self._network.initial_state(num_envs))

    def _sample_feed_forward(self, observation):
        logits = self._network(observation).logits
        return tf.random.categorical(logits, 1, dtype=tf.int32)[:, 0], logits

    def _sample_recurrent(self, observation, prev_action, prev_reward, first, state):
        """One step as an unroll of length 1: the code path of the learner's unroll."""
        outputs, next_state = self._network.unroll(
            tf.nest.map_structure(lambda x: x[None], observation), prev_action[None],
            prev_reward[None], None, first[None], state)
        logits = outputs.logits[0]
        return tf.random.categorical(logits, 1, dtype=tf.int32)[:, 0], logits, next_state

    def select_actions(self, inputs: steps.PolicyInputs, state):
        if not self._recurrent:
            actions, logits = self._step(inputs.observation)
            return actions.numpy(), {'behaviour_logits': logits.numpy()}, state
        actions, logits, next_state = self._step(*inputs, state)
        return (actions.numpy(), {'behaviour_logits': logits.numpy()},
                tf.nest.map_structure(lambda s: s.numpy(), next_state))
