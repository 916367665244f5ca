"""The Reactor network (sec. 3.4.1, app. 6.4: Table 3 and Figure 7).

A shared torso (3 convolutions and a linear layer, ConcatReLU after each) feeds two separate
LSTMs of 128: the policy LSTM, with its head (Linear 32, ConcatReLU, Linear #actions, softmax
mixed with a uniform distribution), and the Q LSTM, with dueling distributional heads (value
logits over #bins atoms, advantage logits over #actions x #bins).

Reading decisions:
- Input channels: Table 3's Conv 1 input is [84, 84, 1], and sec. 3.4.1 uses an LSTM instead
  of frame stacking ("We chose the latter over the former"), so the paper implies C = 1 (one
  grayscale frame, i.e. an Atari environment with `frame_stack=1`). Any C is accepted; only
  Conv 1's kernel depends on it.
- LSTM inputs: Table 3 gives both LSTMs an input of [256], the shared ConcatReLU output, and
  Figure 7 is not in our text of the paper, so no previous action or reward is fed.
- Dueling logits, stated by app. 6.5: l_i(x, a) = l_i(x) + l_i(x, a) - 1/|A| sum_b l_i(x, b)
  (sec. 3.4.1: "summing state- and action-specific logits, as in Wang et al. (2015)"), i.e.
  value + advantage - mean_a' advantage, per atom, then a softmax over atoms for each action
  ("a softmax layer on top for each action").
- Gradient blocking: "Gradients coming from the policy LSTM are blocked and only gradients
  originating from the Q-network LSTM are allowed to back-propagate into the convolutional
  neural network." Both LSTMs read the shared linear layer ("Both LSTMs are connected to a
  shared linear layer which is connected to a shared convolutional neural network"), so the
  policy LSTM reads tf.stop_gradient of the shared features: neither the convolutions nor the
  shared linear layer get gradients from the policy.
- Precision: the torso computes in the network's `precision`; the LSTMs, and the heads after
  them (their hidden layers too: a layer computes in its input's dtype, here the LSTMs'
  float32 output), in float32 (agents/networks/layers.py).
- Uniform mixing: "The value of eps = 0.01 is the minimum probability of choosing a random
  action and it is hard-coded into the policy network" (app. 6.4); Table 3's last policy row is
  x (1 - eps) + eps / #actions.
"""
import collections

import sonnet as snt
import tensorflow as tf

from agents.networks import impala
from agents.networks import layers

ReactorState = collections.namedtuple('ReactorState', ['policy', 'q'])
ReactorOutput = collections.namedtuple('ReactorOutput', ['policy', 'q_logits', 'q_distribution'])


def concat_relu(x):
    """ConcatReLU (Table 3): concat(relu(x), relu(-x)) on the last axis, doubling it."""
    return tf.concat([tf.nn.relu(x), tf.nn.relu(-x)], axis=-1)


class Stack(snt.Module):
    """Layers applied in order; `layers` is public so that tests can walk Table 3 row by row."""

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        self.layers = tuple(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@snt.allow_empty_variables
class MixWithUniform(snt.Module):
    """Table 3's last policy row: probabilities x -> x (1 - eps) + eps / #actions."""

    def __init__(self, epsilon, name='mix_with_uniform'):
        super().__init__(name=name)
        self.epsilon = epsilon

    def __call__(self, probabilities):
        num_actions = tf.cast(tf.shape(probabilities)[-1], probabilities.dtype)
        return (1.0 - self.epsilon) * probabilities + self.epsilon / num_actions


def make_torso():
    """Table 3, convolutional and fully connected blocks: [N, 84, 84, C] floats -> [N, 256].

    VALID padding gives the table's sizes: 84 -> 20 (8x8/4) -> 9 (4x4/2) -> 7 (3x3/1).
    """
    return Stack([
        layers.Conv2D(16, 8, stride=4, padding='VALID', name='conv_1'), concat_relu,
        layers.Conv2D(32, 4, stride=2, padding='VALID', name='conv_2'), concat_relu,
        layers.Conv2D(32, 3, stride=1, padding='VALID', name='conv_3'), concat_relu,
        snt.Flatten(), layers.Linear(128, name='linear'), concat_relu], name='torso')


def make_head(output_size, name):
    """Table 3's heads: Linear 32, ConcatReLU (64), Linear `output_size` (float32 out)."""
    return Stack([layers.Linear(32, name='linear_1'), concat_relu,
                  layers.Linear(output_size, output=True, name='linear_2')], name=name)


class ReactorNet(snt.Module):
    """Table 3 / Figure 7: shared torso, policy LSTM and head, Q LSTM and dueling C51 heads.

    The torso and heads run on all T * B steps at once; only the LSTMs step through time, their
    states reset to the initial state where `first`.
    """

    def __init__(self, num_actions, num_atoms=51, policy_epsilon=0.01, precision='float32',
                 name='reactor_net'):
        super().__init__(name=name)
        self._num_actions = num_actions
        self._num_atoms = num_atoms
        self._dtype = layers.compute_dtype(precision)
        self.torso = make_torso()
        self.policy_lstm = snt.LSTM(128, name='policy_lstm')
        self.policy_head = Stack([
            layers.Linear(32, name='linear_1'), concat_relu,
            layers.Linear(num_actions, output=True, name='linear_2'), tf.nn.softmax,
            MixWithUniform(policy_epsilon)], name='policy_head')
        self.q_lstm = snt.LSTM(128, name='q_lstm')
        self.value_head = make_head(num_atoms, 'value_logit_head')
        self.advantage_head = make_head(num_actions * num_atoms, 'advantage_logit_head')

    def initial_state(self, batch_size):
        return ReactorState(policy=self.policy_lstm.initial_state(batch_size),
                            q=self.q_lstm.initial_state(batch_size))

    def q_logits(self, q_core):
        """Q LSTM outputs [..., 128] -> dueling logits [..., A, num_atoms]."""
        value = self.value_head(q_core)[..., None, :]                               # [.., 1, N]
        advantage = tf.reshape(
            self.advantage_head(q_core),
            tf.concat([tf.shape(q_core)[:-1], [self._num_actions, self._num_atoms]], axis=0))
        return value + advantage - tf.reduce_mean(advantage, axis=-2, keepdims=True)

    def unroll(self, observation, first, state):
        """Runs T steps for B sequences.

        Args:
          observation: [T, B, 84, 84, C] uint8 frames (C = 1 in the paper, see module doc).
          first: [T, B] bool, True where an episode starts; both LSTM states are reset to the
            initial state before that step.
          state: ReactorState at the start of the unroll, from `initial_state` or an earlier
            unroll.

        Returns:
          (ReactorOutput(policy [T, B, A] probabilities, q_logits and q_distribution
          [T, B, A, num_atoms]), the ReactorState after step T - 1).
        """
        t, b = observation.shape[0], observation.shape[1]
        frames = tf.reshape(impala.frames_to_float(observation, self._dtype),
                            [t * b, *observation.shape[2:]])
        features = tf.reshape(tf.cast(self.torso(frames), tf.float32), [t, b, -1])  # [T, B, 256]
        initial_state = self.initial_state(tf.shape(first)[1])

        def reset_then_step(inputs_t, state_t):
            x_t, first_t = inputs_t
            state_t = tf.nest.map_structure(
                lambda init, s: tf.where(first_t[:, None], init, s), initial_state, state_t)
            # Sec. 3.4.1: gradients from the policy LSTM are blocked from the shared layers.
            policy_t, policy_state = self.policy_lstm(tf.stop_gradient(x_t), state_t.policy)
            q_t, q_state = self.q_lstm(x_t, state_t.q)
            return (policy_t, q_t), ReactorState(policy=policy_state, q=q_state)

        # Static, as in impala.py: T is known when traced.
        (policy_core, q_core), new_state = snt.static_unroll(
            reset_then_step, (features, first), state)
        policy = self.policy_head(policy_core)
        q_logits = self.q_logits(q_core)
        return ReactorOutput(policy=policy, q_logits=q_logits,
                             q_distribution=tf.nn.softmax(q_logits, axis=-1)), new_state


def expected_q(q_distribution, support):
    """[..., A, num_atoms] probabilities and the [num_atoms] support -> [..., A] mean values."""
    return tf.reduce_sum(q_distribution * support, axis=-1)
