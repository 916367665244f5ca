"""IMPALA on Atari as a builder (agents/core/builders.py): the unroll machinery of
agents/core/unrolls.py with IMPALA's loss."""
from agents.core import builders
from agents.core import unrolls
from agents.impala import learning
from environments import atari


class ImpalaAtariBuilder(atari.AtariExperiment, unrolls.UnrollBuilder):
    """Actors write unrolls of T+1 steps into a queue, and into a uniform replay when
    `replay_proportion` > 0 (sec. 5.2.2); the learner's batches mix the two."""

    def learning_state(self) -> unrolls.UnrollLearning:
        c = self.config
        return learning.impala_learning(self.network(), c,
                                        jit_compile=builders.resolve_jit(c.jit_compile))
