"""Ape-X DQN and Ape-X DPG as builders (agents/core/builders.py): the prioritized table,
N-step adders and policies; their registry entries compose them with an Atari game and
`dueling_network`, a control task and `actor_critic_network`."""
import numpy as np
import reverb
import sonnet as snt
import tensorflow as tf

from agents.apex import acting
from agents.apex import learning
from agents.core import builders
from agents.core import datasets
from agents.core import replay_feedback
from agents.core import steps
from agents.core import transitions
from agents.networks import dpg
from agents.networks import dqn
from reverb_tables import tables


class _ApexBuilder(builders.Builder):
    """What both Ape-X agents share; subclasses give the step spec, learning and policies."""

    learning_class = None
    # The prioritized replay (sec. 3) survives a restart: the learner checkpoints it with itself.
    replay_checkpointing = True

    def make_tables(self) -> list[builders.TableDeclaration]:
        r = self.config.replay
        signature = transitions.transition_signature(self.step_spec(), r.n_step, self.frame_stack)
        return [builders.TableDeclaration(tables.PRIORITIZED, lambda name: tables.prioritized_table(
            signature, max_size=r.replay_capacity, priority_exponent=r.priority_exponent,
            min_size_to_sample=r.min_replay_size,
            eviction_exponent=self.eviction_exponent(),
            samples_per_insert=r.samples_per_insert, name=name))]

    def eviction_exponent(self) -> float | None:
        """Removal from the full table by prioritized sampling at this exponent; None: FIFO
        (Ape-X DQN, sec. 4.1)."""
        return None

    def learning_state(self) -> tf.Module:
        c = self.config
        return self.learning_class(self.network(), self.network(), c.learning,
                                   c.replay.importance_sampling_exponent,
                                   jit_compile=builders.resolve_jit(c.runtime.jit_compile))

    def dataset(self, replay_address: str, learner_id: int):
        """Sec. 4.1: batches are sampled and decompressed in the background, in parallel with
        learning, and prefetched."""
        c = self.config
        return iter(datasets.batches(
            replay_address, [(self.table(tables.PRIORITIZED, learner_id), c.learning.batch_size)],
            prefetch=c.replay.prefetch_batches, readers=c.replay.replay_readers))

    def adder(self, client: reverb.Client, learner_id: int) -> transitions.NStepTransitionAdder:
        c = self.config
        return transitions.NStepTransitionAdder(
            client, self.table(tables.PRIORITIZED, learner_id), n_step=c.replay.n_step,
            discount=c.replay.discount, batch_size=c.replay.transition_batch_size,
            reward_clip=c.environment.reward_clip or None, stack=self.frame_stack)

    def actor_update_period(self) -> int:
        """Sec. 4.1: each environment's actor copies parameters every 400 frames."""
        c = self.config
        return max(1, c.replay.parameter_update_frames // c.environment.action_repeat)

    def replay_feedback(self, client: reverb.Client, state: tf.Module, learner_id: int):
        return replay_feedback.ReplayFeedback(
            client, self.table(tables.PRIORITIZED, learner_id), state.frames,
            frames_per_transition=self.config.environment.action_repeat)

    def _step_spec(self, observation: tf.TensorSpec, action: tf.TensorSpec) -> dict:
        """Steps carry the values the N-step adder's initial priorities need (appendix F)."""
        return steps.step_spec(observation=observation, action=action, extras={
            'q_value': tf.TensorSpec([], tf.float32),
            'bootstrap_value': tf.TensorSpec([], tf.float32)})


class ApexDQNBuilder(_ApexBuilder):
    """Ape-X DQN (sec. 3.1): epsilon_i-greedy actors of a discrete-action environment."""

    learning_class = learning.ApexDQNLearning

    def make_step_spec(self) -> dict[str, tf.TensorSpec]:
        observation_spec, _ = self.environments.environment_specs()
        return self._step_spec(steps.tensor_specs(observation_spec),
                               tf.TensorSpec([], tf.int32))

    def _epsilons(self):
        """Environment k of actor process j is paper actor i = j K + k of N = processes x K,
        acting with epsilon_i (sec. 4.1)."""
        c = self.config
        return acting.actor_epsilons(c.runtime.num_actors * c.runtime.envs_per_actor,
                                     c.acting.epsilon, c.acting.epsilon_alpha)

    def policy(self, network, actor_id: int, seed: int):
        start = actor_id * self.config.runtime.envs_per_actor
        return acting.EpsilonGreedyPolicy(
            network, self._epsilons()[start:start + self.config.runtime.envs_per_actor], seed=seed)

    def game_columns(self, game):
        """The epsilon_i the game was played with (results: RLlib reports the least-exploring
        third of its workers)."""
        i = int(game['actor']) * self.config.runtime.envs_per_actor + int(game['env'])
        return {'epsilon': float(self._epsilons()[i])}

    def evaluation_policy(self, network) -> acting.EpsilonGreedyPolicy:
        """Greedy; the protocol adds its own epsilon (paper_tables/protocols.py)."""
        return acting.EpsilonGreedyPolicy(network, np.zeros(1))


class ApexDPGBuilder(_ApexBuilder):
    """Ape-X DPG (sec. 3.2): Gaussian-noise actors of a continuous-action environment."""

    learning_class = learning.ApexDPGLearning

    def network_settings(self) -> str:
        """Which hidden layers (appendix D's or Acme D4PG's): the learning section's `network`."""
        return self.config.learning.network

    def eviction_exponent(self) -> float:
        """Appendix D: the full replay evicts by prioritized sampling at -0.4."""
        return self.config.replay.eviction_exponent

    def make_step_spec(self) -> dict[str, tf.TensorSpec]:
        observation_spec, action_spec = self.environments.environment_specs()
        return self._step_spec(tf.TensorSpec(observation_spec.shape, tf.float32),
                               tf.TensorSpec(action_spec.shape, tf.float32))

    def policy(self, network, actor_id: int, seed: int):
        del actor_id
        action_spec = self.environments.environment_specs()[1]
        return acting.GaussianNoisePolicy(network, self.config.acting.exploration_sigma,
                                          action_spec.minimum, action_spec.maximum, seed=seed)

    def evaluation_policy(self, network) -> acting.GaussianNoisePolicy:
        """Appendix D: the noiseless deterministic policy."""
        action_spec = self.environments.environment_specs()[1]
        return acting.GaussianNoisePolicy(network, 0.0, action_spec.minimum,
                                          action_spec.maximum)


def dueling_network(environment_specs, network: None, precision: str) -> snt.Module:
    """Ape-X DQN's dueling network (sec. 4.1) on stacked frames, computing in `precision`
    (no setting of its own: `network` is None)."""
    del network
    observation_spec, action_spec = environment_specs
    network = dqn.DuelingQNetwork(action_spec.num_values, precision=precision)
    network(tf.zeros((1, *observation_spec.shape), observation_spec.dtype))
    return network


def actor_critic_network(environment_specs, network: str, precision: str) -> snt.Module:
    """Ape-X DPG's actor and critic (appendix D) on a task's features, the actor's actions
    within the action spec's bounds, computing in `precision`; `network` picks their hidden
    layers (appendix D's or Acme D4PG's, agents/networks/dpg.py)."""
    observation_spec, action_spec = environment_specs
    network = dpg.ActorCritic(action_spec.minimum, action_spec.maximum, precision, network)
    observation = tf.zeros((1, *observation_spec.shape))
    network.critic(observation, network.policy(observation))
    return network
