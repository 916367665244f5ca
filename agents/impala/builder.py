"""IMPALA on Atari as a builder (agents/core/builders.py): its tables, network, loss and policy."""
import reverb
import sonnet as snt
import tensorflow as tf

from agents.core import adders
from agents.core import builders
from agents.core import datasets
from agents.core import steps
from agents.impala import acting
from agents.impala import config as impala_config
from agents.impala import learning
from agents.networks import impala as impala_networks
from environments import atari
from reverb_tables import tables


class ImpalaAtariBuilder(atari.AtariExperiment, builders.Builder):
    """Actors write unrolls of T+1 steps into a queue, and into a uniform replay when
    `replay_proportion` > 0 (sec. 5.2.2); the learner's batches mix the two."""

    def network(self) -> snt.Module:
        """Appendix G's feed-forward net, or figure 3's LSTM net (`core='lstm'`)."""
        c = self.config
        if c.core == 'lstm':
            network = impala_networks.ImpalaRecurrentNet(self.num_actions, torso=c.torso,
                                                         use_instruction=False)
            network.unroll(tf.zeros((1, 1, *self.observation_shape), tf.uint8),
                           tf.zeros((1, 1), tf.int32), tf.zeros((1, 1)), None,
                           tf.ones((1, 1), tf.bool), network.initial_state(1))
            return network
        network = impala_networks.ImpalaFeedForwardNet(self.num_actions, torso=c.torso)
        network(tf.zeros((1, *self.observation_shape), tf.uint8))
        return network

    def step_spec(self) -> dict:
        core_state = None
        if self.config.core == 'lstm':
            core_state = steps.state_spec(impala_networks.ImpalaRecurrentNet(
                self.num_actions, use_instruction=False).initial_state(1))
        return steps.step_spec(
            observation=tf.TensorSpec(self.observation_shape, tf.uint8),
            action=tf.TensorSpec([], tf.int32),
            extras={'behaviour_logits': tf.TensorSpec([self.num_actions], tf.float32)},
            core_state=core_state)

    def tables(self) -> list[builders.TableDeclaration]:
        c = self.config
        spec = self.step_spec()
        declared = [builders.TableDeclaration(
            tables.QUEUE, lambda name: tables.queue_table(spec, c.unroll_length, c.queue_size,
                                                          name=name))]
        if c.replay_proportion:
            declared.append(builders.TableDeclaration(
                tables.REPLAY, lambda name: tables.uniform_replay_table(
                    spec, c.unroll_length + 1, c.replay_capacity,
                    impala_config.replay_batch_size(c), name=name),
                shared=c.replay_shared))
        return declared

    def learning_state(self) -> learning.ImpalaLearning:
        c = self.config
        return learning.ImpalaLearning(self.network(), c,
                                       jit_compile=builders.resolve_jit(c.jit_compile))

    def dataset(self, replay_address: str, learner_id: int):
        c = self.config
        replayed = impala_config.replay_batch_size(c)
        parts = [(self.table(tables.QUEUE, learner_id), c.batch_size - replayed)]
        if replayed:
            parts.append((self.table(tables.REPLAY, learner_id), replayed))
        return iter(datasets.batches(replay_address, parts).map(lambda sample: sample.data))

    def adder(self, client: reverb.Client, learner_id: int) -> adders.SequenceAdder:
        priorities = {self.table(tables.QUEUE, learner_id): adders.constant_priority()}
        if self.config.replay_proportion:
            priorities[self.table(tables.REPLAY, learner_id)] = adders.constant_priority()
        return adders.SequenceAdder(client, priorities, length=self.config.unroll_length + 1,
                                    period=self.config.unroll_length)

    def actor_update_period(self) -> int:
        """Sec. 3: an actor takes the newest parameters before each unroll."""
        return self.config.unroll_length

    def policy(self, network: snt.Module, actor_id: int, seed: int) -> acting.ImpalaPolicy:
        del actor_id, seed   # sampling is seeded through tf.random.set_seed
        return acting.ImpalaPolicy(network, jit_compile=False)

    def evaluation_policy(self, network: snt.Module) -> acting.ImpalaPolicy:
        """IMPALA is evaluated acting by its own stochastic policy (sec. 5.3.2)."""
        return acting.ImpalaPolicy(network)
