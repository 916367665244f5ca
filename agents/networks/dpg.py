"""Ape-X DPG's actor and critic (appendix D), learning from state features.

Appendix D gives the hidden sizes and the first activation only: critic Linear 400, tanh,
Linear 300; actor Linear 300, tanh, Linear 200. Assumptions (docs/fidelity.md): ReLU after the
second hidden layer; the action enters the critic with the observation at its input; the actor
ends in tanh scaled to the action bounds; observations are the flattened, concatenated
dm_control features.
"""
import numpy as np
import sonnet as snt
import tensorflow as tf


class Actor(snt.Module):
    """[N, D] observations -> [N, A] actions within [minimum, maximum]."""

    def __init__(self, minimum: np.ndarray, maximum: np.ndarray, name='dpg_actor'):
        super().__init__(name=name)
        self._scale = tf.constant((maximum - minimum) / 2.0, tf.float32)
        self._offset = tf.constant((maximum + minimum) / 2.0, tf.float32)
        self._mlp = snt.Sequential([snt.Linear(300), tf.tanh, snt.Linear(200), tf.nn.relu,
                                    snt.Linear(len(minimum)), tf.tanh])

    def __call__(self, observation):
        return self._offset + self._scale * self._mlp(observation)


class Critic(snt.Module):
    """([N, D] observations, [N, A] actions) -> [N] values q(s, a)."""

    def __init__(self, name='dpg_critic'):
        super().__init__(name=name)
        self._mlp = snt.Sequential([snt.Linear(400), tf.tanh, snt.Linear(300), tf.nn.relu,
                                    snt.Linear(1)])

    def __call__(self, observation, action):
        return self._mlp(tf.concat([observation, action], axis=1))[:, 0]


class ActorCritic(snt.Module):
    """Both networks as one module: what the learner checkpoints and pushes to the actors
    (they need the critic for initial priorities) and what evaluation restores."""

    def __init__(self, minimum: np.ndarray, maximum: np.ndarray, name='dpg_actor_critic'):
        super().__init__(name=name)
        self.policy = Actor(np.asarray(minimum, np.float32), np.asarray(maximum, np.float32))
        self.critic = Critic()
