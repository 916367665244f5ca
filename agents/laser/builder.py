"""LASER as a builder (agents/core/builders.py): IMPALA's unroll builder
(agents/impala/builder.py) with a replay sized in observations, shared by a sweep, checkpointed
with the learners, and LASER's loss; composed by its registry entries with one Atari game or
DMLab-30 (sec. 5.1) and IMPALA's `unroll_network`. With the LSTM
core the replay holds whole episodes, which the learner replays from their first step carrying
the core state (app. A.2's full state correction, agents/laser/learning.py)."""
import functools

import reverb
import tensorflow as tf

from agents.core import adders
from agents.core import builders
from agents.core import datasets
from agents.core import steps
from agents.laser import config as laser_config
from agents.impala import builder as impala_builder
from agents.impala import config as impala_config
from agents.impala import learning as impala_learning
from agents.laser import learning
from reverb_tables import tables


class LaserBuilder(impala_builder.UnrollBuilder):
    """Each agent's actors write unrolls of T+1 steps into its own online queue, and into the
    replay either the same unrolls (feed-forward) or whole episodes (the LSTM core, sec. 5.1);
    with `replay_shared` every agent of the sweep writes to and samples from one replay table
    (sec. 5.4). Each batch: online unrolls, then replayed ones."""

    # The replay survives a restart of the run (Reverb checkpoint with the learners').
    replay_checkpointing = True

    def replay_capacity(self) -> int:
        return laser_config.replay_capacity(self.config)

    def learning_state(self) -> impala_learning.UnrollLearning:
        c = self.config
        return learning.laser_learning(self.network(), c,
                                       jit_compile=builders.resolve_jit(c.runtime.jit_compile),
                                       restarts=self.row_restarts)

    @functools.cached_property
    def row_restarts(self) -> tf.Variable:
        """The count of the replayed rows' restarts, which the learning state advances after
        PBT's copy and the dataset reads (`datasets.episode_rows`): one per builder, as
        `builders.make_learner` builds a builder's one learner."""
        return tf.Variable(0, dtype=tf.int64, trainable=False, name='row_restarts')

    @property
    def _episodes(self) -> bool:
        return learning.full_state_correction(self.config)

    def make_tables(self) -> list[builders.TableDeclaration]:
        declared = super().make_tables()
        if not self._episodes:
            return declared
        c = self.config
        spec = {name: value for name, value in self.step_spec().items()
                if name != steps.CORE_STATE}
        signature = self.packing().signature(steps.frame_signature(
            steps.trajectory_signature(spec, None), self.stored_stack))
        return [declaration for declaration in declared if declaration.name != tables.REPLAY] + [
            builders.TableDeclaration(
                tables.REPLAY, lambda name: tables.episode_replay_table(
                    signature, self.replay_capacity(), impala_config.replay_batch_size(c),
                    name=name),
                shared=c.learning.replay_shared)]

    def dataset(self, replay_address: str, learner_id: int):
        if not self._episodes:
            return super().dataset(replay_address, learner_id)
        c = self.config
        rows = impala_config.replay_batch_size(c)
        layout = self.sequence_layout()
        return iter(datasets.online_and_episode_rows(
            replay_address, (self.table(tables.QUEUE, learner_id), c.learning.batch_size - rows),
            (self.table(tables.REPLAY, learner_id), rows), layout['length'], layout['period'],
            self.row_restarts, layout['stack'], unpack=layout['packing'].unpack_tensors).map(
                lambda data: steps.stacked_observations(data, layout['stack'])))

    def adder(self, client: reverb.Client, learner_id: int) -> adders.SequenceAdder:
        if not self._episodes:
            return super().adder(client, learner_id)
        return adders.SequenceAdder(
            client, {self.table(tables.QUEUE, learner_id): adders.constant_priority()},
            episode_tables=(self.table(tables.REPLAY, learner_id),),
            max_episode_steps=self.max_episode_steps(), **self.sequence_layout())

    def max_episode_steps(self) -> int:
        """The longest episode the replay takes whole: `replay_episode_frames`, or the time
        limit where it is shorter, in agent steps, and the step holding the final observation
        (environments/atari.py)."""
        c = self.config
        frames = min(self.environments.max_episode_frames or c.learning.replay_episode_frames,
                     c.learning.replay_episode_frames)
        return frames // c.environment.action_repeat + 1
