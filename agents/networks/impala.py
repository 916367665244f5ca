"""IMPALA networks (Figure 3): shallow and deep-residual torsos, LSTM core, policy/value heads.

`ImpalaRecurrentNet` is the DMLab agent of Figure 3; `ImpalaFeedForwardNet` is the Atari agent
of sec. 5.3.2 and app. G (the same torsos, 4 stacked frames, no LSTM). Their torsos compute in
the nets' `precision`; the LSTMs and output layers in float32 (agents/networks/layers.py).
"""
import collections
import math

import sonnet as snt
import tensorflow as tf

from agents.networks import layers

PolicyValue = collections.namedtuple('PolicyValue', ['logits', 'value'])


def lstm(hidden_size: int, input_size: int, initializer: str = 'sonnet2') -> snt.LSTM:
    """An LSTM whose weights start as `initializer` says, its forget gate's bias at 1 either
    way: 'sonnet2' is snt.LSTM's (truncated normals of std 1/sqrt(fan-in), for w_i and w_h
    apart); 'lstm_block_cell' is the TF1 cell IMPALA's released agent uses
    (tf.contrib.rnn.LSTMBlockCell): one Glorot-uniform kernel over [input, state] -> 4 gates,
    so every weight in +-sqrt(6 / (input_size + 5 * hidden_size))."""
    if initializer == 'sonnet2':
        return snt.LSTM(hidden_size)
    if initializer != 'lstm_block_cell':
        raise ValueError(f'unknown LSTM initializer {initializer!r}')
    limit = math.sqrt(6.0 / (input_size + hidden_size + 4 * hidden_size))
    uniform = snt.initializers.RandomUniform(-limit, limit)
    return snt.LSTM(hidden_size, w_i_init=uniform, w_h_init=uniform)


def frames_to_float(observation, dtype: tf.DType = tf.float32):
    """uint8 frames -> [0, 1] in `dtype`, where a network starts computing in it. Divided in
    float32: a bfloat16 division on the CPU cost the deep torso's forward pass 15%."""
    return tf.cast(tf.cast(observation, tf.float32) / 255.0, dtype)


class Torso(snt.Module):
    """What figure 3's two torsos share: their convolutions end in a Linear 256. They compute
    in `dtype` (layers.compute_dtype), from the frames on."""

    def __init__(self, name, dtype: tf.DType):
        super().__init__(name=name)
        self._dtype = dtype
        self._to_vector = snt.Flatten()  # `_flatten` would hide tf.Module's own
        self._linear = layers.Linear(256)

    @property
    def linear(self):
        """The final Linear 256."""
        return self._linear

    def _head(self, x):
        """The convolutions' output x -> ReLU(Linear 256(x)), flattened."""
        return tf.nn.relu(self._linear(self._to_vector(x)))


class ShallowTorso(Torso):
    """Figure 3 (left), as in A3C: Conv 16 8x8/4, Conv 32 4x4/2 (VALID), Linear 256; ReLUs."""

    def __init__(self, dtype: tf.DType = tf.float32, name='shallow_torso'):
        super().__init__(name, dtype)
        self._convs = [layers.Conv2D(16, 8, stride=4, padding='VALID'),
                       layers.Conv2D(32, 4, stride=2, padding='VALID')]

    @property
    def convs(self):
        """The two convolutions, the first applied first."""
        return tuple(self._convs)

    def __call__(self, observation):
        x = frames_to_float(observation, self._dtype)
        for conv in self._convs:
            x = tf.nn.relu(conv(x))
        return self._head(x)


class DeepTorso(Torso):
    """Figure 3 (right): 3 sections of [Conv 3x3, MaxPool 3x3/2, 2 residual blocks], Linear 256.

    Channels (16, 32, 32); SAME padding; residual block = x + Conv(ReLU(Conv(ReLU(x)))).
    15 conv layers in all.
    """

    def __init__(self, channels=(16, 32, 32), dtype: tf.DType = tf.float32, name='deep_torso'):
        super().__init__(name, dtype)
        self._sections = []
        for i, depth in enumerate(channels):
            conv = layers.Conv2D(depth, 3, padding='SAME', name=f'section_{i}_conv')
            blocks = [[layers.Conv2D(depth, 3, padding='SAME',
                                     name=f'section_{i}_res_{j}_conv_{k}')
                       for k in range(2)] for j in range(2)]
            self._sections.append((conv, blocks))

    @property
    def sections(self):
        """Each section's (convolution, its two residual blocks' two convolutions each)."""
        return tuple(self._sections)

    def __call__(self, observation):
        x = frames_to_float(observation, self._dtype)
        for conv, blocks in self._sections:
            x = conv(x)
            x = tf.nn.max_pool2d(x, ksize=3, strides=2, padding='SAME')
            for block in blocks:
                skip = x
                for block_conv in block:
                    x = block_conv(tf.nn.relu(x))
                x += skip
        return self._head(tf.nn.relu(x))


def make_torso(torso, channel_multiplier=1, dtype: tf.DType = tf.float32):
    """'shallow' or 'deep' -> the Figure 3 torso module, computing in `dtype`.
    `channel_multiplier` widens the deep torso's convolutions (LASER sec. 5.1: "increased the
    number of channels 4x")."""
    if torso == 'shallow' and channel_multiplier == 1:
        return ShallowTorso(dtype)
    if torso == 'deep':
        return DeepTorso(tuple(channel_multiplier * c for c in (16, 32, 32)), dtype)
    raise ValueError(f"torso must be 'shallow' or 'deep' (channel_multiplier only for 'deep'), "
                     f"got {torso!r} with channel_multiplier={channel_multiplier}.")


class ImpalaFeedForwardNet(snt.Module):
    """Atari network (sec. 5.3.2, app. G): torso on 4 stacked frames, then policy and value."""

    def __init__(self, num_actions, torso='shallow', channel_multiplier=1, precision='float32',
                 name='impala_feed_forward_net'):
        super().__init__(name=name)
        self._torso = make_torso(torso, channel_multiplier, layers.compute_dtype(precision))
        self._policy = layers.Linear(num_actions, output=True, name='policy_logits')
        self._baseline = layers.Linear(1, output=True, name='baseline')

    def __call__(self, observation):
        """observation [N, 84, 84, 4] uint8 -> PolicyValue(logits [N, A], value [N])."""
        features = self._torso(observation)
        return PolicyValue(logits=self._policy(features),
                           value=tf.squeeze(self._baseline(features), axis=-1))


class InstructionEncoder(snt.Module):
    """Figure 3's language input: word embeddings (20) into an LSTM (64), its last output.

    Instructions are word ids [N, L] from a vocabulary of 1000, padded at the end with 0; the
    output is the LSTM output at the last non-padding word (zeros for an empty instruction).
    """

    def __init__(self, vocab_size=1000, embed_dim=20, hidden_size=64, lstm_init='sonnet2',
                 name='instruction_encoder'):
        super().__init__(name=name)
        self._embed = snt.Embed(vocab_size=vocab_size, embed_dim=embed_dim)
        self._lstm = lstm(hidden_size, embed_dim, lstm_init)
        self.output_size = hidden_size

    def __call__(self, instruction):
        lengths = tf.reduce_sum(tf.cast(tf.not_equal(instruction, 0), tf.int32), axis=-1)
        words = tf.transpose(self._embed(instruction), [1, 0, 2])           # [L, N, E]
        _, final_state = snt.dynamic_unroll(
            self._lstm, words, self._lstm.initial_state(tf.shape(instruction)[0]),
            sequence_length=lengths)
        return final_state.hidden


class ImpalaRecurrentNet(snt.Module):
    """DMLab network (Figure 3): torso, last action and reward, instruction -> LSTM 256 -> heads.

    The torso and heads run on all T * B steps at once (time folded into batch, sec. 3.1);
    only the LSTM steps through time, its state reset to the initial state where `first`.
    """

    def __init__(self, num_actions, torso='shallow', use_instruction=True, channel_multiplier=1,
                 vocabulary_size=1000, precision='float32', last_action_reward=True,
                 lstm_init='sonnet2', name='impala_recurrent_net'):
        super().__init__(name=name)
        self._num_actions = num_actions
        self._last_action_reward = last_action_reward
        self._torso = snt.BatchApply(make_torso(torso, channel_multiplier,
                                                layers.compute_dtype(precision)))
        encoder = (InstructionEncoder(vocab_size=vocabulary_size, lstm_init=lstm_init)
                   if use_instruction else None)
        self._instruction = snt.BatchApply(encoder) if encoder is not None else None
        core_input_size = (256 + (1 + num_actions if last_action_reward else 0)
                           + (encoder.output_size if encoder is not None else 0))
        self._core = lstm(256, core_input_size, lstm_init)
        self._policy = snt.BatchApply(layers.Linear(num_actions, output=True,
                                                    name='policy_logits'))
        self._baseline = snt.BatchApply(layers.Linear(1, output=True, name='baseline'))

    @property
    def core(self) -> snt.LSTM:
        """The LSTM 256, fed [torso output, clipped reward, one-hot last action(, instruction)];
        the torso output alone (and the instruction) without `last_action_reward`."""
        return self._core

    def initial_state(self, batch_size):
        return self._core.initial_state(batch_size)

    def unroll(self, observation, last_action, last_reward, instruction, first, state):
        """Runs T steps for B sequences.

        Args:
          observation: [T, B, 72, 96, 3] uint8 frames, or a dict of them ('pixels') and the
            instruction's word ids ('instruction'), as environments/dmlab.py gives them; the
            dict's instruction is used in place of `instruction`.
          last_action: [T, B] int32, the action taken before each frame.
          last_reward: [T, B] float32, the reward received before each frame; clipped to
            [-1, 1] here.
          instruction: [T, B, L] int32 word ids, 0 for padding; ignored (may be None) without
            `use_instruction`.
          first: [T, B] bool, True where an episode starts; the state is reset before that step.
          state: the LSTM state at the start of the unroll, from `initial_state` or an earlier
            unroll.

        Returns:
          (PolicyValue(logits [T, B, A], value [T, B]), the LSTM state after step T - 1).
        """
        if isinstance(observation, dict):
            observation, instruction = observation['pixels'], observation['instruction']
        inputs = [self._torso(observation)]
        if self._last_action_reward:
            inputs += [tf.clip_by_value(last_reward, -1.0, 1.0)[..., None],
                       tf.one_hot(last_action, self._num_actions)]
        if self._instruction is not None:
            inputs.append(self._instruction(instruction))
        core_input = tf.concat([tf.cast(x, tf.float32) for x in inputs], axis=-1)  # layers.py
        initial_state = self._core.initial_state(tf.shape(first)[1])

        def reset_then_step(inputs_t, state_t):
            x_t, first_t = inputs_t
            state_t = tf.nest.map_structure(
                lambda init, s: tf.where(first_t[:, None], init, s), initial_state, state_t)
            return self._core(x_t, state_t)

        # Static: T is known when traced (1 when acting, T+1 when learning), and a Python loop
        # runs several times faster on CPU than the while_loop of snt.dynamic_unroll.
        core_output, new_state = snt.static_unroll(reset_then_step, (core_input, first), state)
        logits = self._policy(core_output)
        value = tf.squeeze(self._baseline(core_output), axis=-1)
        return PolicyValue(logits=logits, value=value), new_state
