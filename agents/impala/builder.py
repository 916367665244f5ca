"""IMPALA as a builder (agents/core/builders.py), composed by its registry entries with the
environment piece of one Atari game, Atari-57 or DMLab-30 (the multi-task agents of sec. 5.3)
and `unroll_network`. `UnrollBuilder` is what every agent learning from actors' unrolls with
behaviour logits shares: IMPALA's, and LASER's (agents/laser builds on it).
"""
import reverb
import sonnet as snt
import tensorflow as tf

from agents.core import adders
from agents.core import builders
from agents.core import datasets
from agents.core import packing as packing_lib
from agents.core import softmax_policy
from agents.core import steps
from agents.core import typed_config
from agents.impala import config as impala_config
from agents.impala import learning
from agents.networks import impala as impala_networks
from reverb_tables import tables


class UnrollBuilder(builders.Builder):
    """Tables, network, dataset, adder and policy of an agent that learns from unrolls."""

    def network_settings(self) -> impala_config.UnrollNetwork:
        return self.config.network

    def replay_capacity(self) -> int:
        """Unrolls the replay table holds (FIFO removal beyond)."""
        return self.config.learning.replay_capacity

    def make_step_spec(self) -> dict:
        observation_spec, action_spec = self.environments.environment_specs()
        core_state = None
        if self.config.network.core == 'lstm':
            core_state = steps.state_spec(impala_networks.ImpalaRecurrentNet(
                action_spec.num_values, use_instruction=False).initial_state(1))
        return steps.step_spec(
            observation=steps.tensor_specs(observation_spec),
            action=tf.TensorSpec([], tf.int32),
            extras={'behaviour_logits': tf.TensorSpec([action_spec.num_values], tf.float32)},
            core_state=core_state)

    def make_tables(self) -> list[builders.TableDeclaration]:
        c = self.config
        # Unrolls of T+1 steps: step T of one unroll is step 0 of the next (overlap 1), so the
        # learner bootstraps from V(x_T) and learns from every transition once (sec. 3).
        layout = self.sequence_layout()
        signature = layout['packing'].signature(steps.frame_signature(
            steps.trajectory_signature(self.step_spec(), layout['length']), layout['stack']))
        declared = [builders.TableDeclaration(
            tables.QUEUE,
            lambda name: tables.queue_table(signature, c.learning.queue_size, name=name))]
        if c.learning.replay_proportion:
            declared.append(builders.TableDeclaration(
                tables.REPLAY, lambda name: tables.uniform_replay_table(
                    signature, self.replay_capacity(), impala_config.replay_batch_size(c),
                    name=name),
                shared=c.learning.replay_shared))
        return declared

    @property
    def stored_stack(self) -> int:
        """The adder's `stack`: with a replay, each frame is stored once (the replay's memory:
        benchmarks/README.md, "Replay memory"); a queue alone keeps the stacks as the actors
        saw them, which costs the actors and the learner less CPU per frame
        (benchmarks/README.md, "Every CPU-second of a local run")."""
        return self.frame_stack if self.config.learning.replay_proportion else 1

    def dataset(self, replay_address: str, learner_id: int):
        c = self.config
        replayed = impala_config.replay_batch_size(c)
        parts = [(self.table(tables.QUEUE, learner_id), c.learning.batch_size - replayed)]
        if replayed:
            parts.append((self.table(tables.REPLAY, learner_id), replayed))
        layout = self.sequence_layout()
        return iter(datasets.batches(replay_address, parts).map(
            lambda sample: steps.stacked_observations(
                layout['packing'].unpack_tensors(sample.data), layout['stack'])))

    def adder(self, client: reverb.Client, learner_id: int) -> adders.SequenceAdder:
        priorities = {self.table(tables.QUEUE, learner_id): adders.constant_priority()}
        if self.config.learning.replay_proportion:
            priorities[self.table(tables.REPLAY, learner_id)] = adders.constant_priority()
        return adders.SequenceAdder(client, priorities, **self.sequence_layout())

    def sequence_layout(self) -> dict:
        """The adder's layout of the unrolls: T+1 steps every T, frames stored once with a
        replay (`stored_stack`), every step field but the observation and the core state in
        one column (`packing`), and chunks of one unroll per column, not Reverb's auto-tuned
        shorter ones: fewer, larger messages (benchmarks/README.md, "Every CPU-second of a
        local run")."""
        unroll = self.config.learning.unroll_length
        return dict(length=unroll + 1, period=unroll, stack=self.stored_stack,
                    chunk_length=unroll, packing=self.packing())

    def packing(self) -> packing_lib.StepPacking:
        """The steps as the adder writes them (with `stored_stack` > 1, the STACK_DEPTH its
        single frames come with) packed but for the observation and the core state (stored
        once per unroll)."""
        spec = self.step_spec()
        if self.stored_stack > 1:
            spec = {**spec, steps.STACK_DEPTH: tf.TensorSpec([], tf.uint8)}
        return packing_lib.StepPacking(spec, kept=('observation', steps.CORE_STATE))

    def actor_update_period(self) -> int:
        """IMPALA sec. 3: an actor takes the newest parameters before each unroll."""
        return self.config.learning.unroll_length

    def policy(self, network: snt.Module, actor_id: int,
               seed: int) -> softmax_policy.SoftmaxPolicy:
        del actor_id, seed   # sampling is seeded through tf.random.set_seed
        return softmax_policy.SoftmaxPolicy(network, jit_compile=False)

    def evaluation_policy(self, network: snt.Module) -> softmax_policy.SoftmaxPolicy:
        """Actor-critic agents are evaluated acting by their own stochastic policy."""
        return softmax_policy.SoftmaxPolicy(network)


class ImpalaBuilder(UnrollBuilder):
    """Actors write unrolls of T+1 steps into a queue, and into a uniform replay when
    `replay_proportion` > 0 (sec. 5.2.2); the learner's batches mix the two. On one Atari
    game (the experts, sec. 5.2), Atari-57 or DMLab-30 (the multi-task agents of sec. 5.3), as
    its registry entry composes it."""

    def learning_state(self) -> learning.UnrollLearning:
        c = self.config
        return learning.impala_learning(self.network(), c,
                                        jit_compile=builders.resolve_jit(c.runtime.jit_compile))


def unroll_network(environment_specs, network: impala_config.UnrollNetwork,
                   precision: str) -> snt.Module:
    """Figure 3's net, computing in `precision`: feed-forward (IMPALA's Atari experts) or with
    the LSTM core fed the last action and clipped reward (`core='lstm'`; the torso's
    output alone without `core_last_action_reward`); on DMLab, whose
    observation holds the instruction's words (their spec bounds the vocabulary), always with
    the core and the instruction encoder (figure 3, right). The network factory of IMPALA's and
    LASER's entries."""
    observation_spec, action_spec = environment_specs
    n = network
    num_actions = action_spec.num_values
    instruction = isinstance(observation_spec, dict) and 'instruction' in observation_spec
    if instruction or n.core == 'lstm':
        words = (dict(vocabulary_size=int(observation_spec['instruction'].maximum) + 1)
                 if instruction else dict(use_instruction=False))
        net = impala_networks.ImpalaRecurrentNet(
            num_actions, torso=n.torso, channel_multiplier=n.channel_multiplier,
            precision=precision, last_action_reward=n.core_last_action_reward,
            lstm_init=n.core_lstm_init, **words)
        observation = tf.nest.map_structure(lambda s: tf.zeros((1, 1, *s.shape), s.dtype),
                                            observation_spec)
        net.unroll(observation, tf.zeros((1, 1), tf.int32), tf.zeros((1, 1)), None,
                   tf.ones((1, 1), tf.bool), net.initial_state(1))
        return net
    net = impala_networks.ImpalaFeedForwardNet(num_actions, torso=n.torso,
                                               channel_multiplier=n.channel_multiplier,
                                               precision=precision)
    net(tf.zeros((1, *observation_spec.shape), observation_spec.dtype))
    return net
