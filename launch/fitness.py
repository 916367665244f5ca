"""The fitness of population-based training: table G.1's mean capped human-normalised score,
(sum_l min[1, (s_l - r_l) / (h_l - r_l)]) / N over the N tasks l (IMPALA appendix F: "after
collecting 5,000 episode rewards in total, the mean capped human normalised score is
calculated"), of the games in a member's window. The references are paper data
(paper_tables), which agents do not import, so the launch layer gives the learner the function:
`builders.make_learner(..., fitness=fitness.fitness(builder, spec.target))`.
"""
from typing import Mapping, Sequence

from agents.core import builders
from agents.core import logging as run_logging
from agents.core import pbt
from paper_tables import scores


def fitness(builder: builders.Builder, target: str) -> pbt.Fitness | None:
    """Finished games (each with its actor, env and episode_return, as the learner drains
    them) -> table G.1's fitness: the games grouped by task (`target`, the run spec's game,
    for a single-task builder; for a multi-task one the task `builders.game_task` says, by its
    reported name),
    s_l the mean raw return of task l's games, capped human-normalised against its references
    in the `suite` of the builder's environments ('atari' or 'dmlab30'), then averaged over the
    tasks that have a game in the window (a task with none has no s_l; docs/fidelity.md).
    None for environments without references (no PBT: the control tasks)."""
    suite = builder.environments.suite
    if suite is None:
        return None
    scores.references(suite)    # an unknown suite fails when the learner is made
    multi_task = bool(builder.environments.tasks())

    def task_of(game: Mapping) -> str:
        return builders.game_task(builder, game) if multi_task else target

    def value(games: Sequence[Mapping]) -> float:
        return scores.mean_capped_human_normalised(
            suite, run_logging.returns_by_task(games, task_of))
    return value
