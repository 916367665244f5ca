"""Human-normalised scores and the summaries the papers report.

human normalised: (s - r) / (h - r), with r and h the random and human reference scores
(IMPALA table 4, Ape-X table 1, Reactor tables 1-2, LASER appendix A.3).
capped: min(1, (s - r) / (h - r)), averaged over the suite (IMPALA appendix B, table B.1).
Scores are fractions here (1.0 = human); the papers print percent, except Reactor.
"""
import numpy as np

from environments import names
from paper_tables import tables


def human_normalised(score, random, human):
    """(score - random) / (human - random)."""
    return (score - random) / (human - random)


def capped_human_normalised(score, random, human):
    """min(1, (score - random) / (human - random)) (IMPALA appendix B)."""
    return min(1.0, human_normalised(score, random, human))


def median(values):
    """Median over a suite, as a float."""
    return float(np.median(values))


def mean(values):
    """Mean over a suite, as a float."""
    return float(np.mean(values))


def atari_references():
    """{ALE ROM id: (random, human)} under no-op starts (Reactor table 5)."""
    table = tables.load('atari_references.csv')
    return {row['game']: (row['random'], row['human']) for row in table.rows}


def dmlab30_references():
    """{DMLab-30 level: (random, human)} (IMPALA table B.1)."""
    table = tables.load('dmlab30_references.csv')
    return {row['level']: (row['random'], row['human']) for row in table.rows}


def references(suite):
    """The reference scores of 'atari' or 'dmlab30', keyed by the names of `environments.names`."""
    if suite == 'atari':
        return atari_references()
    if suite == 'dmlab30':
        return dmlab30_references()
    raise ValueError(f"unknown suite {suite!r}; known: 'atari', 'dmlab30'")


def canonical_name(suite, name):
    """A game or level name from any paper's spelling."""
    return names.atari_rom_id(name) if suite == 'atari' else names.dmlab_level_name(name)


def normalised_scores(suite, scores, capped=False):
    """{name: (capped) human-normalised score} for {name: raw score}, names in any spelling."""
    refs = references(suite)
    normalise = capped_human_normalised if capped else human_normalised
    result = {}
    for name, score in scores.items():
        key = canonical_name(suite, name)
        result[key] = normalise(score, *refs[key])
    return result


def mean_capped_human_normalised(suite, returns_by_task):
    """(sum_l min[1, (s_l - r_l) / (h_l - r_l)]) / N (IMPALA tables B.1 and G.1) for {task:
    raw scores}: s_l is the mean of task l's scores, so the cap applies to a task's mean, not to
    each score, and every task given weighs 1 / N however many scores it has."""
    means = {task: mean(values) for task, values in returns_by_task.items()}
    return mean(list(normalised_scores(suite, means, capped=True).values()))


def median_bounds(values, unknown):
    """(lowest, highest) median when `unknown` more values may lie anywhere.

    For a table with unreadable cells (LASER table 2): the median is pinned to this interval
    whatever the missing values are.
    """
    values = list(values)
    return (median(values + [-np.inf] * unknown), median(values + [np.inf] * unknown))


def mean_ranks(score_rows):
    """Mean rank of each column over games, rank 1 = best (Reactor tables 1-2).

    `score_rows` is a list of {algorithm: score}, one per game. Tied scores share the worst of
    their ranks, which reproduces Reactor table 2 for all but Reactor's two 200M/500M agents.
    """
    algorithms = list(score_rows[0])
    totals = dict.fromkeys(algorithms, 0.0)
    for row in score_rows:
        for algorithm in algorithms:
            totals[algorithm] += sum(row[other] >= row[algorithm] for other in algorithms)
    return {algorithm: total / len(score_rows) for algorithm, total in totals.items()}
