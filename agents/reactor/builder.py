"""Reactor as a builder (agents/core/builders.py): lazily prioritized sequence replay (sec. 3.3)
paced at 5 acting steps per learning step (sec. 3.4) and the learner of
agents/reactor/learning.py; its registry entry composes it with an Atari game and
`reactor_network` (table 3)."""
from typing import Iterator

import reverb
import sonnet as snt
import tensorflow as tf

from agents.core import adders
from agents.core import builders
from agents.core import packing as packing_lib
from agents.core import replay_feedback
from agents.core import steps
from agents.networks import reactor as reactor_networks
from agents.reactor import acting
from agents.reactor import config as reactor_config
from agents.reactor import lazy_priorities
from agents.reactor import learning

PACE = 'reactor_pace'


class ReactorBuilder(builders.Builder):
    """Actors write every overlapping sequence of n steps, each with the core state at its
    start and its stream and position, into the two lazy-priority tables and, as a stub of
    its small fields, into the pace table; each step's frame once, its other fields packed
    into one column (agents/core/packing.py). The pace table's rate limiter holds the actors
    and the learner at `acting_steps_per_learning_step` (the learner draws one stub per
    update); the learner draws each batch with `LazyReplay` and writes priorities back."""

    # Replay and its bookkeeping survive a restart (Reverb checkpoint with the learner's).
    replay_checkpointing = True

    def __init__(self, config, environments: builders.Environments,
                 make_network: builders.NetworkFactory):
        super().__init__(config, environments, make_network)
        self._replays = {}

    def network_settings(self) -> reactor_config.ReactorNetwork:
        return self.config.network

    def make_step_spec(self) -> dict:
        observation_spec, action_spec = self.environments.environment_specs()
        network = reactor_networks.ReactorNet(action_spec.num_values,
                                              self.config.network.num_atoms)
        return steps.step_spec(
            observation=steps.tensor_specs(observation_spec),
            action=tf.TensorSpec([], tf.int32),
            extras={'behaviour_prob': tf.TensorSpec([], tf.float32),
                    lazy_priorities.STREAM: tf.TensorSpec([], tf.int64),
                    lazy_priorities.POSITION: tf.TensorSpec([], tf.int64)},
            core_state=steps.state_spec(network.initial_state(1)))

    def packing(self) -> packing_lib.StepPacking:
        """How steps are written: the frame and one column of every other field."""
        return packing_lib.StepPacking(self.step_spec())

    def make_tables(self) -> list[builders.TableDeclaration]:
        c = self.config
        packing = self.packing()
        signature = steps.trajectory_signature(packing.step_spec, c.learning.sequence_length)
        lazy = lazy_priorities.lazy_tables(signature, capacity=c.replay.replay_capacity,
                                           slack=c.replay.replay_slack, fields=packing.fields)
        pace = reverb.Table(
            name=PACE, sampler=reverb.selectors.Uniform(), remover=reverb.selectors.Fifo(),
            max_size=c.replay.replay_capacity + c.replay.replay_slack,
            rate_limiter=reverb.rate_limiters.SampleToInsertRatio(
                samples_per_insert=1.0 / c.learning.acting_steps_per_learning_step,
                min_size_to_sample=c.replay.min_replay_size,
                error_buffer=float(c.learning.rate_limiter_tolerance)),
            signature={packing_lib.PACKED: signature[packing_lib.PACKED]})
        made = lazy + [pace, *lazy_priorities.snapshot_tables()]
        return [builders.TableDeclaration(table.name, lambda name, t=table: t, shared=True)
                for table in made]

    def learning_state(self) -> learning.ReactorLearning:
        c = self.config
        return learning.ReactorLearning(self.network(), self.network(), c.learning,
                                        learning.loss_scalars(c),
                                        jit_compile=builders.resolve_jit(c.runtime.jit_compile))

    def lazy_replay(self, client: reverb.Client, learner_id: int
                    ) -> lazy_priorities.LazyReplay:
        """Learner `learner_id`'s LazyReplay, shared by its dataset, feedback and checkpoint."""
        if learner_id not in self._replays:
            c = self.config
            self._replays[learner_id] = lazy_priorities.LazyReplay(
                client, capacity=c.replay.replay_capacity, epsilon=c.replay.replay_epsilon,
                seed=builders.learner_seed(c, learner_id),
                snapshot_table=lazy_priorities.LAZY_SNAPSHOT, unpack=self.packing().unpack)
        return self._replays[learner_id]

    def dataset(self, replay_address: str, learner_id: int) -> Iterator[dict]:
        """Batches on the learner's thread: one pace stub (blocking while the actors are
        behind), then B sequences with their importance weights (sec. 3.3: beta = 1)."""
        client = reverb.Client(replay_address)
        replay = self.lazy_replay(client, learner_id)
        while True:
            next(iter(client.sample(PACE, 1, emit_timesteps=False)))
            sample = replay.sample(self.config.learning.batch_size)
            yield {**sample.data, 'keys': sample.info.key,
                   'weights': lazy_priorities.importance_weights(sample.info)}

    def replay_feedback(self, client: reverb.Client, state: tf.Module, learner_id: int):
        """Priorities go back through the lazy bookkeeping; frames are the actors' steps (one
        pace stub each) times the action repeat."""
        replay = self.lazy_replay(client, learner_id)
        return replay_feedback.ReplayFeedback(
            client, PACE, state.frames,
            frames_per_transition=self.config.environment.action_repeat, write=replay.update)

    def replay_checkpoint(self, client: reverb.Client, learner_id: int):
        """The bookkeeping goes into the snapshot table just before the server checkpoints, so
        that one Reverb checkpoint holds both."""
        replay = self.lazy_replay(client, learner_id)

        def checkpoint():
            replay.save()
            return client.checkpoint()
        return checkpoint

    def adder(self, client: reverb.Client, learner_id: int) -> acting.StreamAdder:
        c = self.config
        pending = lazy_priorities.adder_priorities()
        # Chunks of n // 2 steps, not Reverb's auto-tuned shorter ones: a sequence of n spans
        # three per column (benchmarks/README.md, "Replay memory per stored step").
        chunk = max(1, c.learning.sequence_length // 2)
        return acting.StreamAdder(adders.SequenceAdder(
            client, {**pending, PACE: adders.constant_priority()},
            length=c.learning.sequence_length, period=c.learning.sequence_period,
            columns={PACE: (packing_lib.PACKED,)},
            flush_period=chunk, chunk_length=chunk), self.packing())

    def policy(self, network: snt.Module, actor_id: int, seed: int) -> acting.ReactorPolicy:
        del actor_id, seed   # sampling is seeded through tf.random.set_seed
        return acting.ReactorPolicy(network)

    def evaluation_policy(self, network: snt.Module) -> acting.ReactorPolicy:
        """Sec. 4.1: evaluated acting by its policy (the 0.01 uniform is in the network)."""
        return acting.ReactorPolicy(network)

    def actor_update_period(self) -> int:
        """Not stated for the actors ("each worker downloads the newest network parameters
        before each learning step", sec. 3.4): every `acting_steps_per_learning_step` steps,
        i.e. once per learning step of the paper's pace."""
        return max(1, round(self.config.learning.acting_steps_per_learning_step))


def reactor_network(environment_specs, network: reactor_config.ReactorNetwork,
                    precision: str) -> snt.Module:
    """Table 3's dual-LSTM network with `num_atoms` atoms, its policy mixed with
    `policy_epsilon` of the uniform one, computing in `precision`."""
    observation_spec, action_spec = environment_specs
    settings = network
    network = reactor_networks.ReactorNet(action_spec.num_values, settings.num_atoms,
                                          settings.policy_epsilon, precision)
    network.unroll(tf.zeros((1, 1, *observation_spec.shape), observation_spec.dtype),
                   tf.ones((1, 1), tf.bool), network.initial_state(1))
    return network
