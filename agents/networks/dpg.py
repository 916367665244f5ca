"""Ape-X DPG's actor and critic (appendix D), learning from state features.

Appendix D gives the hidden sizes and the first activation only: critic Linear 400, tanh,
Linear 300; actor Linear 300, tanh, Linear 200. Assumptions (docs/fidelity.md): ReLU after the
second hidden layer; the action enters the critic with the observation at its input; the actor
ends in tanh scaled to the action bounds; observations are the flattened, concatenated
dm_control features. Both compute in their `precision` up to their output layers, which give
float32 (agents/networks/layers.py).

`network='d4pg'` swaps the hidden layers for those of Acme's D4PG on control
(acme/agents/tf/d4pg/networks.py, acme/tf/networks/continuous.py), the agent behind the D4PG
curves results/ compares with: LayerNorm MLP torsos (Linear, LayerNorm, tanh, then Linear and
ELU), actor 256-256-256 with a near-zero output layer, critic 512-512-256. The critic keeps
Ape-X DPG's one value (D4PG's head is a 51-atom distribution): an experiment, not the paper.
"""
import numpy as np
import sonnet as snt
import tensorflow as tf

from agents.networks import layers

# The config's `network` -> (the actor's hidden sizes, the critic's).
HIDDEN_SIZES = {'appendix_d': ((300, 200), (400, 300)),
                'd4pg': ((256, 256, 256), (512, 512, 256))}


class _LayerNorm(snt.Module):
    """snt.LayerNorm over the features, computed in float32 whatever its input's dtype."""

    def __init__(self):
        super().__init__(name='layer_norm')
        self._norm = snt.LayerNorm(axis=-1, create_scale=True, create_offset=True)

    def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
        return tf.cast(self._norm(tf.cast(inputs, tf.float32)), inputs.dtype)


def _acme_uniform() -> tf.initializers.Initializer:
    """Acme's LayerNormMLP weights: uniform within +-sqrt(3 x 0.333 / fan_out)."""
    return tf.initializers.VarianceScaling(0.333, 'fan_out', 'uniform')


def _torso(network: str, sizes: tuple[int, ...]) -> list:
    """The hidden layers of `network` with `sizes`: appendix D's (tanh, then ReLU) or Acme's
    LayerNormMLP."""
    if network == 'appendix_d':
        return [layers.Linear(sizes[0]), tf.tanh, layers.Linear(sizes[1]), tf.nn.relu]
    torso = [layers.Linear(sizes[0], w_init=_acme_uniform()), _LayerNorm(), tf.tanh]
    for size in sizes[1:]:
        torso += [layers.Linear(size, w_init=_acme_uniform()), tf.nn.elu]
    return torso


def _sizes(network: str) -> tuple:
    if network not in HIDDEN_SIZES:
        raise ValueError(f'network must be one of {sorted(HIDDEN_SIZES)}, got {network!r}')
    return HIDDEN_SIZES[network]


class Actor(snt.Module):
    """[N, D] observations -> [N, A] actions within [minimum, maximum]."""

    def __init__(self, minimum: np.ndarray, maximum: np.ndarray, precision: str = 'float32',
                 network: str = 'appendix_d', name='dpg_actor'):
        super().__init__(name=name)
        self._dtype = layers.compute_dtype(precision)
        self._scale = tf.constant((maximum - minimum) / 2.0, tf.float32)
        self._offset = tf.constant((maximum + minimum) / 2.0, tf.float32)
        # Acme's NearZeroInitializedLinear: initial actions near the middle of their bounds.
        w_init = tf.initializers.VarianceScaling(1e-4) if network == 'd4pg' else None
        self._mlp = snt.Sequential([
            *_torso(network, _sizes(network)[0]),
            layers.Linear(len(minimum), output=True, w_init=w_init), tf.tanh])

    def __call__(self, observation):
        return self._offset + self._scale * self._mlp(tf.cast(observation, self._dtype))


class Critic(snt.Module):
    """([N, D] observations, [N, A] actions) -> [N] values q(s, a)."""

    def __init__(self, precision: str = 'float32', network: str = 'appendix_d',
                 name='dpg_critic'):
        super().__init__(name=name)
        self._dtype = layers.compute_dtype(precision)
        self._mlp = snt.Sequential([*_torso(network, _sizes(network)[1]),
                                    layers.Linear(1, output=True)])

    def __call__(self, observation, action):
        return self._mlp(tf.cast(tf.concat([observation, action], axis=1), self._dtype))[:, 0]


class ActorCritic(snt.Module):
    """Both networks as one module: what the learner checkpoints and pushes to the actors
    (they need the critic for initial priorities) and what evaluation restores."""

    def __init__(self, minimum: np.ndarray, maximum: np.ndarray, precision: str = 'float32',
                 network: str = 'appendix_d', name='dpg_actor_critic'):
        super().__init__(name=name)
        self.policy = Actor(np.asarray(minimum, np.float32), np.asarray(maximum, np.float32),
                            precision, network)
        self.critic = Critic(precision, network)
