"""LASER as builders (agents/core/builders.py): IMPALA's unroll builder
(agents/impala/builder.py) with a replay sized in observations, shared by a sweep, checkpointed
with the learners, and LASER's loss; on one Atari game or on DMLab-30 (sec. 5.1)."""
from agents.core import builders
from agents.laser import config as laser_config
from agents.impala import builder as impala_builder
from agents.impala import learning as impala_learning
from agents.laser import learning
from environments import atari


class LaserBuilder(impala_builder.UnrollBuilder):
    """Each agent's actors write unrolls of T+1 steps into its own online queue and into the
    replay (sec. 5.1); with `replay_shared` every agent of the sweep writes to and samples from
    one replay table (sec. 5.4). Each batch: online unrolls, then replayed ones."""

    # The replay survives a restart of the run (Reverb checkpoint with the learners').
    replay_checkpointing = True

    def replay_capacity(self) -> int:
        return laser_config.replay_capacity(self.config)

    def learning_state(self) -> impala_learning.UnrollLearning:
        c = self.config
        return learning.laser_learning(self.network(), c,
                                       jit_compile=builders.resolve_jit(c.jit_compile))


class LaserAtariBuilder(LaserBuilder):
    """On one Atari game (sec. 5.1, 5.5)."""

    def __init__(self, config):
        super().__init__(config, atari.AtariGames(config))


class LaserDmLab30Builder(impala_builder.DmLab30Unrolls, LaserBuilder):
    """On DMLab-30, every agent on all levels at once (sec. 5.1, 5.3, 5.4)."""
