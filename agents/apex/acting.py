"""Ape-X behaviour policies (sec. 3.1, 4.1, appendix D) and what they hand the N-step adder.

Both return, per environment, `q_value` = q(o_t, a_t) and `bootstrap_value` = the value of o_t
a target bootstraps from, so that the adder computes initial priorities from the actor's own
values without another forward pass (appendix F).
"""
import numpy as np
import sonnet as snt
import tensorflow as tf


def actor_epsilons(num_actors: int, epsilon: float, alpha: float) -> np.ndarray:
    """Sec. 4.1: epsilon_i = epsilon^(1 + alpha i / (N - 1)), i = 0..N-1, fixed in training."""
    if num_actors == 1:
        return np.array([epsilon])
    i = np.arange(num_actors)
    return epsilon ** (1.0 + alpha * i / (num_actors - 1))


class _FeedForwardPolicy:
    """What both Ape-X policies share: a feed-forward network, its variables and a seeded
    random generator for exploration."""

    def __init__(self, network: snt.Module, seed: int | None):
        self._network = network
        self._rng = np.random.default_rng(seed)

    @property
    def variables(self):
        return self._network.trainable_variables

    def initial_state(self, num_envs: int):
        del num_envs   # feed-forward
        return ()


class EpsilonGreedyPolicy(_FeedForwardPolicy):
    """Ape-X DQN acting: environment k acts epsilon_k-greedily on the dueling network's Q."""

    def __init__(self, network: snt.Module, epsilons: np.ndarray, seed: int | None = None):
        super().__init__(network, seed)
        self._epsilons = np.asarray(epsilons)
        self._q = tf.function(network, autograph=False)

    def select_actions(self, inputs, state):
        q = self._q(inputs.observation).numpy()
        actions = q.argmax(axis=1).astype(np.int32)
        explore = self._rng.random(len(q)) < self._epsilons[:len(q)]
        actions[explore] = self._rng.integers(q.shape[1], size=int(explore.sum()))
        return actions, {'q_value': q[np.arange(len(q)), actions],
                         'bootstrap_value': q.max(axis=1)}, state


class GaussianNoisePolicy(_FeedForwardPolicy):
    """Ape-X DPG acting: pi(o) + N(0, sigma^2) per action dimension, clipped to the bounds
    (appendix D); sigma = 0 is the noiseless policy used for evaluation."""

    def __init__(self, network: snt.Module, sigma: float, minimum: np.ndarray,
                 maximum: np.ndarray, seed: int | None = None):
        super().__init__(network, seed)
        self._sigma = sigma
        self._minimum = np.asarray(minimum, np.float32)
        self._maximum = np.asarray(maximum, np.float32)
        self._policy = tf.function(network.policy, autograph=False)
        self._values = tf.function(lambda o, a, pi: (network.critic(o, a),
                                                     network.critic(o, pi)), autograph=False)

    def select_actions(self, inputs, state):
        observations = inputs.observation.astype(np.float32)
        greedy = self._policy(observations).numpy()
        actions = greedy
        if self._sigma:
            noise = self._rng.normal(0.0, self._sigma, greedy.shape).astype(np.float32)
            actions = np.clip(greedy + noise, self._minimum, self._maximum)
        q_value, bootstrap_value = self._values(observations, actions, greedy)
        return actions, {'q_value': q_value.numpy(),
                         'bootstrap_value': bootstrap_value.numpy()}, state
