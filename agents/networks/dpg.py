"""Ape-X DPG's actor and critic (appendix D), learning from state features.

Appendix D gives the hidden sizes and the first activation only: critic Linear 400, tanh,
Linear 300; actor Linear 300, tanh, Linear 200. Assumptions (docs/fidelity.md): ReLU after the
second hidden layer; the action enters the critic with the observation at its input; the actor
ends in tanh scaled to the action bounds; observations are the flattened, concatenated
dm_control features. Both compute in their `precision` up to their output layers, which give
float32 (agents/networks/layers.py).
"""
import numpy as np
import sonnet as snt
import tensorflow as tf

from agents.networks import layers


class Actor(snt.Module):
    """[N, D] observations -> [N, A] actions within [minimum, maximum]."""

    def __init__(self, minimum: np.ndarray, maximum: np.ndarray, precision: str = 'float32',
                 name='dpg_actor'):
        super().__init__(name=name)
        self._dtype = layers.compute_dtype(precision)
        self._scale = tf.constant((maximum - minimum) / 2.0, tf.float32)
        self._offset = tf.constant((maximum + minimum) / 2.0, tf.float32)
        self._mlp = snt.Sequential([layers.Linear(300), tf.tanh, layers.Linear(200), tf.nn.relu,
                                    layers.Linear(len(minimum), output=True), tf.tanh])

    def __call__(self, observation):
        return self._offset + self._scale * self._mlp(tf.cast(observation, self._dtype))


class Critic(snt.Module):
    """([N, D] observations, [N, A] actions) -> [N] values q(s, a)."""

    def __init__(self, precision: str = 'float32', name='dpg_critic'):
        super().__init__(name=name)
        self._dtype = layers.compute_dtype(precision)
        self._mlp = snt.Sequential([layers.Linear(400), tf.tanh, layers.Linear(300), tf.nn.relu,
                                    layers.Linear(1, output=True)])

    def __call__(self, observation, action):
        return self._mlp(tf.cast(tf.concat([observation, action], axis=1), self._dtype))[:, 0]


class ActorCritic(snt.Module):
    """Both networks as one module: what the learner checkpoints and pushes to the actors
    (they need the critic for initial priorities) and what evaluation restores."""

    def __init__(self, minimum: np.ndarray, maximum: np.ndarray, precision: str = 'float32',
                 name='dpg_actor_critic'):
        super().__init__(name=name)
        self.policy = Actor(np.asarray(minimum, np.float32), np.asarray(maximum, np.float32),
                            precision)
        self.critic = Critic(precision)
