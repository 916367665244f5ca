"""The fitness of population-based training (IMPALA appendix F): "the mean capped human
normalised score" of a member's finished games, each scored against its task's random and
human references (appendix B). The references are paper data (paper_tables), which agents do
not import, so the launch layer gives the learner its score:
`builders.make_learner(..., episode_score=fitness.episode_score(builder))`.
"""
from typing import Mapping

from agents.core import builders
from agents.core import pbt
from paper_tables import scores


def episode_score(builder: builders.Builder) -> pbt.Score:
    """A finished game (its actor, env and episode_return, as the learner drains it) -> its
    capped human-normalised score, min(1, (s - r) / (h - r)): on `config.game` for a
    single-task builder; for a multi-task one on the task `builders.game_task` says the game
    was played on (by its reported name), in the builder's `suite` ('atari' or 'dmlab30')."""
    suite = getattr(builder, 'suite', 'atari')
    references = scores.references(suite)
    multi_task = bool(builder.tasks())

    def score(game: Mapping) -> float:
        task = builders.game_task(builder, game) if multi_task else builder.config.game
        random, human = references[scores.canonical_name(suite, task)]
        return scores.capped_human_normalised(game['episode_return'], random, human)
    return score
