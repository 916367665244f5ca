"""IMPALA as builders (agents/core/builders.py): the unroll machinery of agents/core/unrolls.py
with IMPALA's loss, on one Atari game, on Atari-57 or on DMLab-30 (the multi-task agents of
sec. 5.3)."""
import ml_collections
import tensorflow as tf

from agents.core import builders
from agents.core import unrolls
from agents.impala import learning
from agents.networks import impala as impala_networks
from environments import atari
from environments import dmlab
from environments import names


class _ImpalaLearning:
    """The learner of every IMPALA builder."""

    def learning_state(self) -> unrolls.UnrollLearning:
        c = self.config
        return learning.impala_learning(self.network(), c,
                                        jit_compile=builders.resolve_jit(c.jit_compile))


class ImpalaAtariBuilder(_ImpalaLearning, atari.AtariExperiment, unrolls.UnrollBuilder):
    """Actors write unrolls of T+1 steps into a queue, and into a uniform replay when
    `replay_proportion` > 0 (sec. 5.2.2); the learner's batches mix the two."""


class ImpalaAtari57Builder(ImpalaAtariBuilder):
    """The multi-task agent on Atari-57 (sec. 5.3.2, appendix G): the experts' builder with one
    network for every game of `config.tasks`; each environment plays the game
    `builders.assigned_task` gives it, on the full 18-action set."""
    suite = 'atari'      # whose references score its games (PBT's fitness: launch/fitness.py)

    def tasks(self) -> tuple[str, ...]:
        return names.task_list(self.config.tasks, names.atari_rom_id)

    def environment(self, seed: int, *, evaluation=None, task=None) -> atari.AtariEnvironment:
        """Game `task` (default: the first) for training, or under an evaluation protocol."""
        one_game = ml_collections.ConfigDict(self.config.to_dict())
        one_game.game = task or self.tasks()[0]
        return atari.from_config(one_game, seed, evaluation)


class ImpalaDmLab30Builder(_ImpalaLearning, dmlab.DmLabExperiment, unrolls.UnrollBuilder):
    """The multi-task agent on DMLab-30 (sec. 5.3.1): figure 3's network with the LSTM core
    and the instruction encoder, one for every level of `config.tasks`. A step's observation
    is the frame and the instruction's word ids (environments/dmlab.py)."""
    suite = 'dmlab30'    # whose references score its games (PBT's fitness: launch/fitness.py)

    def step_spec(self) -> dict:
        spec = super().step_spec()
        spec['observation'] = {
            'pixels': spec['observation'],
            'instruction': tf.TensorSpec([self.config.instruction_length], tf.int32)}
        return spec

    def network(self) -> impala_networks.ImpalaRecurrentNet:
        c = self.config
        network = impala_networks.ImpalaRecurrentNet(
            self.num_actions, torso=c.torso, channel_multiplier=c.channel_multiplier,
            vocabulary_size=c.instruction_vocabulary)
        observation = tf.nest.map_structure(lambda s: tf.zeros((1, 1, *s.shape), s.dtype),
                                            self.step_spec()['observation'])
        network.unroll(observation, tf.zeros((1, 1), tf.int32), tf.zeros((1, 1)), None,
                       tf.ones((1, 1), tf.bool), network.initial_state(1))
        return network
