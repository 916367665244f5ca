"""Wires an IMPALA Atari config into the shared roles: tables, learner, actors, evaluation."""
import os

import reverb
import sonnet as snt
import tensorflow as tf

from agents.core import actor as actor_lib
from agents.core import adders
from agents.core import learner as learner_lib
from agents.core import variables
from agents.impala import acting
from agents.impala import learning
from agents.networks import impala as impala_networks
from environments import atari
from reverb_tables import tables


def resolve_jit(setting) -> bool:
    """`jit_compile`: True/False, or 'auto' = XLA on a GPU, off on CPU (slower there: see the
    learner figures in benchmarks/README.md)."""
    if setting == 'auto':
        return bool(tf.config.list_physical_devices('GPU'))
    if isinstance(setting, str):
        raise ValueError(f"jit_compile must be true, false or 'auto', got {setting!r}")
    return bool(setting)


class ImpalaAtariBuilder(atari.AtariExperiment):
    """Everything an IMPALA Atari role needs, built from one config."""

    def network(self) -> snt.Module:
        """The feed-forward Atari network of appendix G, with its variables created."""
        network = impala_networks.ImpalaFeedForwardNet(self.num_actions,
                                                       torso=self.config.torso)
        network(tf.zeros((1, *self.observation_shape), tf.uint8))
        return network

    def step_spec(self) -> dict[str, tf.TensorSpec]:
        """One step as the actor writes it (agents/core/actor.py)."""
        return {
            'observation': tf.TensorSpec(self.observation_shape, tf.uint8),
            'action': tf.TensorSpec([], tf.int32),
            'reward': tf.TensorSpec([], tf.float32),
            'discount': tf.TensorSpec([], tf.float32),
            'mask': tf.TensorSpec([], tf.float32),
            'behaviour_logits': tf.TensorSpec([self.num_actions], tf.float32),
        }

    def tables(self) -> list[reverb.Table]:
        c = self.config
        return [tables.queue_table(self.step_spec(), c.unroll_length, c.queue_size),
                tables.variables_table(), tables.episode_stats_table()]

    def learner(self, replay_address: str, run_dir: str) -> learner_lib.Learner:
        c = self.config
        tf.random.set_seed(c.seed)
        network = self.network()
        state = learning.ImpalaLearning(network, c, jit_compile=resolve_jit(c.jit_compile))
        dataset = reverb.TrajectoryDataset.from_table_signature(
            server_address=replay_address, table=tables.QUEUE,
            max_in_flight_samples_per_worker=2 * c.batch_size)
        dataset = dataset.map(lambda sample: sample.data)
        dataset = dataset.batch(c.batch_size, drop_remainder=True).prefetch(2)
        return learner_lib.Learner(
            update=state.update, iterator=iter(dataset), state=state, step=state.step,
            frames=state.frames, variables_to_push=network.trainable_variables,
            client=reverb.Client(replay_address), run_dir=run_dir,
            total_frames=c.total_frames, checkpoint_interval_s=c.checkpoint_interval_s,
            log_interval_s=c.log_interval_s)

    def actor(self, actor_id: int, replay_address: str, run_dir: str) -> actor_lib.Actor:
        c = self.config
        seed = c.seed * 10_000 + actor_id * c.envs_per_actor
        tf.random.set_seed(seed)
        network = self.network()
        policy = acting.ImpalaPolicy(network, jit_compile=False)
        client = reverb.Client(replay_address)
        envs = [self.environment(seed=seed + k) for k in range(c.envs_per_actor)]
        return actor_lib.Actor(
            envs=envs, policy=policy,
            adders=[adders.SequenceAdder(client, tables.QUEUE, length=c.unroll_length + 1,
                                         period=c.unroll_length) for _ in envs],
            parameters=variables.VariableClient(client, policy.variables),
            update_period=c.unroll_length, client=client, actor_id=actor_id,
            frames_per_step=c.action_repeat,
            log_path=os.path.join(run_dir, 'logs', f'actor_{actor_id}.csv'))

    def evaluation_policy(self, network: snt.Module) -> acting.ImpalaPolicy:
        """IMPALA is evaluated acting by its own stochastic policy (sec. 5.3.2)."""
        return acting.ImpalaPolicy(network)
