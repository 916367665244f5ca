"""Step 5 of docs/architecture.md's "Where a new agent plugs in": the builder of the guide's
one-step actor-critic on one Atari game. Actors write items of 2 steps, (o_t, a_t, r_{t+1},
discount) and o_{t+1}, one per step (overlap 1), into a queue read once by the learner; the
shared softmax policy acts (step 4: agents/core/softmax_policy.py fits, so no acting.py).
"""
import reverb
import sonnet as snt
import tensorflow as tf

from agents.core import adders
from agents.core import builders
from agents.core import datasets
from agents.core import softmax_policy
from agents.core import steps
from agents.networks import impala as impala_networks
from reverb_tables import tables
from tests.guide_agent import learning

ITEM_LENGTH = 2      # o_t and o_{t+1}


class OneStepActorCriticBuilder(builders.Builder):
    """Items of 2 steps through a queue; its registry entry composes it with an Atari game
    and `feed_forward_network`."""

    def make_step_spec(self) -> dict:
        observation_spec, action_spec = self.environments.environment_specs()
        num_actions = action_spec.num_values
        return steps.step_spec(
            observation=steps.tensor_specs(observation_spec),
            action=tf.TensorSpec([], tf.int32),
            extras={'behaviour_logits': tf.TensorSpec([num_actions], tf.float32)})

    def make_tables(self) -> list[builders.TableDeclaration]:
        signature = steps.trajectory_signature(self.step_spec(), ITEM_LENGTH)
        return [builders.TableDeclaration(tables.QUEUE, lambda name: tables.queue_table(
            signature, self.config.queue_size, name=name))]

    def learning_state(self) -> learning.OneStepLearning:
        c = self.config
        return learning.OneStepLearning(self.network(), c,
                                        jit_compile=builders.resolve_jit(c.runtime.jit_compile))

    def dataset(self, replay_address: str, learner_id: int):
        parts = [(self.table(tables.QUEUE, learner_id), self.config.batch_size)]
        return iter(datasets.batches(replay_address, parts).map(lambda sample: sample.data))

    def adder(self, client: reverb.Client, learner_id: int) -> adders.SequenceAdder:
        return adders.SequenceAdder(
            client, {self.table(tables.QUEUE, learner_id): adders.constant_priority()},
            length=ITEM_LENGTH, period=1)

    def policy(self, network: snt.Module, actor_id: int,
               seed: int) -> softmax_policy.SoftmaxPolicy:
        del actor_id, seed   # sampling is seeded through tf.random.set_seed
        return softmax_policy.SoftmaxPolicy(network)

    def evaluation_policy(self, network: snt.Module) -> softmax_policy.SoftmaxPolicy:
        return softmax_policy.SoftmaxPolicy(network)


def feed_forward_network(environment_specs, network: None, precision: str) -> snt.Module:
    """IMPALA's feed-forward network (figure 3, shallow) in float32: the guide's network
    factory (no settings of its own)."""
    del network, precision
    observation_spec, action_spec = environment_specs
    network = impala_networks.ImpalaFeedForwardNet(action_spec.num_values)
    network(tf.zeros((1, *observation_spec.shape), observation_spec.dtype))
    return network
