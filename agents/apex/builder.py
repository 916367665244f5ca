"""Wires an Ape-X config into the shared roles: the prioritized table, learner, actors and
evaluation, for Ape-X DQN on Atari and Ape-X DPG on the DeepMind Control Suite."""
import functools
import os

import ml_collections
import numpy as np
import reverb
import sonnet as snt
import tensorflow as tf

from agents.apex import acting
from agents.apex import learning
from agents.core import actor as actor_lib
from agents.core import adders
from agents.core import learner as learner_lib
from agents.core import variables
from agents.impala.builder import resolve_jit
from agents.networks import dpg
from agents.networks import dqn
from environments import atari
from environments import control
from reverb_tables import tables


class _ApexBuilder:
    """What both Ape-X agents share; subclasses give the environment, networks and policies."""

    learning_class = None
    # The prioritized replay (sec. 3) survives a restart: the learner checkpoints it with itself.
    replay_checkpointing = True

    def __init__(self, config: ml_collections.ConfigDict):
        self.config = config

    def tables(self) -> list[reverb.Table]:
        c = self.config
        signature = tables.transition_signature(self.step_spec(), c.n_step)
        replay = tables.prioritized_table(
            signature, max_size=c.replay_capacity, priority_exponent=c.priority_exponent,
            min_size_to_sample=c.min_replay_size,
            eviction_exponent=c.get('eviction_exponent'))
        return [replay, tables.variables_table(), tables.episode_stats_table()]

    def learner(self, replay_address: str, run_dir: str) -> learner_lib.Learner:
        c = self.config
        tf.random.set_seed(c.seed)
        network, target_network = self.network(), self.network()
        state = self.learning_class(network, target_network, c,
                                    jit_compile=resolve_jit(c.jit_compile))
        # Sec. 4.1: batches are sampled (and decompressed) in the background and prefetched.
        dataset = reverb.TrajectoryDataset.from_table_signature(
            server_address=replay_address, table=tables.PRIORITIZED,
            max_in_flight_samples_per_worker=2 * c.batch_size)
        dataset = dataset.batch(c.batch_size, drop_remainder=True).prefetch(c.prefetch_batches)
        client = reverb.Client(replay_address)
        return learner_lib.Learner(
            update=state.update, iterator=iter(dataset), state=state, step=state.step,
            frames=state.frames, variables_to_push=network.trainable_variables,
            client=client, run_dir=run_dir, total_frames=c.total_frames,
            checkpoint_interval_s=c.checkpoint_interval_s, log_interval_s=c.log_interval_s,
            after_update=learning.ReplayFeedback(client, tables.PRIORITIZED, state.frames,
                                                 frames_per_transition=c.action_repeat),
            on_checkpoint=client.checkpoint)

    def actor(self, actor_id: int, replay_address: str, run_dir: str) -> actor_lib.Actor:
        c = self.config
        seed = c.seed * 10_000 + actor_id * c.envs_per_actor
        tf.random.set_seed(seed)
        policy = self.behaviour_policy(self.network(), actor_id, seed)
        client = reverb.Client(replay_address)
        envs = [self.environment(seed=seed + k) for k in range(c.envs_per_actor)]
        return actor_lib.Actor(
            envs=envs, policy=policy,
            adders=[adders.NStepTransitionAdder(
                client, tables.PRIORITIZED, n_step=c.n_step, discount=c.discount,
                batch_size=c.transition_batch_size, reward_clip=c.reward_clip or None)
                for _ in envs],
            parameters=variables.VariableClient(client, policy.variables),
            # Sec. 4.1: each environment's actor copies parameters every 400 frames.
            update_period=max(1, c.parameter_update_frames // c.action_repeat),
            client=client, actor_id=actor_id, frames_per_step=c.action_repeat,
            log_path=os.path.join(run_dir, 'logs', f'actor_{actor_id}.csv'))


class ApexDQNAtariBuilder(_ApexBuilder, atari.AtariExperiment):
    """Ape-X DQN on one Atari game."""

    learning_class = learning.ApexDQNLearning

    def network(self) -> snt.Module:
        network = dqn.DuelingQNetwork(self.num_actions)
        network(tf.zeros((1, *self.observation_shape), tf.uint8))
        return network

    def step_spec(self) -> dict[str, tf.TensorSpec]:
        return {'observation': tf.TensorSpec(self.observation_shape, tf.uint8),
                'action': tf.TensorSpec([], tf.int32)}

    def behaviour_policy(self, network, actor_id: int, seed: int):
        """Environment k of actor process j is paper actor i = j K + k of N = processes x K."""
        c = self.config
        epsilons = acting.actor_epsilons(c.num_actors * c.envs_per_actor, c.epsilon,
                                         c.epsilon_alpha)
        start = actor_id * c.envs_per_actor
        return acting.EpsilonGreedyPolicy(network, epsilons[start:start + c.envs_per_actor],
                                          seed=seed)

    def evaluation_policy(self, network) -> acting.EpsilonGreedyPolicy:
        """Greedy; the protocol adds its own epsilon (paper_tables/protocols.py)."""
        return acting.EpsilonGreedyPolicy(network, np.zeros(1))


class ApexDPGControlBuilder(_ApexBuilder):
    """Ape-X DPG on one DeepMind Control Suite task."""

    learning_class = learning.ApexDPGLearning

    def environment(self, seed: int, *, evaluation=None) -> control.ControlEnvironment:
        del evaluation   # the task's own episodes (apex_control_noiseless)
        return control.ControlEnvironment(self.config.task, seed=seed)

    @functools.cached_property
    def _specs(self):
        env = self.environment(seed=0)
        try:
            return env.observation_spec(), env.action_spec()
        finally:
            env.close()

    def network(self) -> snt.Module:
        observation_spec, action_spec = self._specs
        network = dpg.ActorCritic(action_spec.minimum, action_spec.maximum)
        observation = tf.zeros((1, *observation_spec.shape))
        network.critic(observation, network.policy(observation))
        return network

    def step_spec(self) -> dict[str, tf.TensorSpec]:
        observation_spec, action_spec = self._specs
        return {'observation': tf.TensorSpec(observation_spec.shape, tf.float32),
                'action': tf.TensorSpec(action_spec.shape, tf.float32)}

    def behaviour_policy(self, network, actor_id: int, seed: int):
        del actor_id
        action_spec = self._specs[1]
        return acting.GaussianNoisePolicy(network, self.config.exploration_sigma,
                                          action_spec.minimum, action_spec.maximum, seed=seed)

    def evaluation_policy(self, network) -> acting.GaussianNoisePolicy:
        """Appendix D: the noiseless deterministic policy."""
        action_spec = self._specs[1]
        return acting.GaussianNoisePolicy(network, 0.0, action_spec.minimum,
                                          action_spec.maximum)
