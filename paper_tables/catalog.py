"""The per-game and per-level tables a run can be compared with (`--paper P --table T`)."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class PaperTable:
    """Where one paper's per-game (per-level) scores live and how the paper summarises them."""
    paper: str
    table: str
    torso: object       # 'shallow' | 'deep' where the table holds both (IMPALA experts); None
    filename: str
    column: object      # the score column of `filename`; None where the paper prints no
                        # per-level scores, only `printed` (its levels: the suite's references)
    protocol: str       # a name in paper_tables.protocols.PROTOCOLS
    frames: int         # frames the paper trained per game (per suite for DMLab-30)
    suite: str          # 'atari' (median and mean) | 'dmlab30' (mean capped)
    printed: dict       # the paper's own summary of this column, {statistic: percent}
    source: str         # where `printed` is, for the report


_TABLES = (
    PaperTable('impala', 'atari_experts', 'shallow', 'impala_table_c1_atari.csv',
               'impala_shallow', 'impala_atari_noop', 200_000_000, 'atari',
               {'median': 93.2, 'mean': 466.4}, 'IMPALA table 4'),
    PaperTable('impala', 'atari_experts', 'deep', 'impala_table_c1_atari.csv', 'impala_deep',
               'impala_atari_noop', 200_000_000, 'atari', {'median': 191.8, 'mean': 957.6},
               'IMPALA table 4'),
    PaperTable('impala', 'atari_multitask', None, 'impala_table_c1_atari.csv',
               'impala_deep_multitask', 'impala_atari_multitask_noop', 200_000_000, 'atari',
               {'median': 59.7, 'mean': 176.9}, 'IMPALA table 4'),
    # DMLab-30 frames are not stated in IMPALA's text; 10B is the budget at which LASER table 1
    # quotes the DMLab-30 agents of the same line of work.
    PaperTable('impala', 'dmlab30', None, 'impala_table_b1_dmlab30.csv', 'impala',
               'impala_dmlab30_test', 10_000_000_000, 'dmlab30', {'mean_capped': 49.4},
               'IMPALA tables 3 and B.1 (deep, PBT)'),
    PaperTable('impala', 'dmlab30_experts', None, 'impala_table_b1_dmlab30.csv', 'experts',
               'impala_dmlab30_test', 10_000_000_000, 'dmlab30', {'mean_capped': 44.5},
               'IMPALA tables 3 and B.1 (experts, deep)'),
    PaperTable('apex', 'atari_noop', None, 'apex_table_2_atari.csv', 'noop', 'apex_atari_noop',
               22_800_000_000, 'atari', {'median': 434.0}, 'Ape-X table 1'),
    PaperTable('apex', 'atari_human', None, 'apex_table_2_atari.csv', 'human',
               'apex_atari_human', 22_800_000_000, 'atari', {'median': 358.0}, 'Ape-X table 1'),
    PaperTable('laser', 'atari_50m', None, 'laser_table_2_atari.csv', 'laser_50m',
               'laser_atari_training', 50_000_000, 'atari', {'median': 233.0},
               'LASER table 1 (experience replay)'),
    PaperTable('laser', 'atari_shared_50m', None, 'laser_table_2_atari.csv', 'laser_shared_50m',
               'laser_atari_training', 50_000_000, 'atari', {'median': 370.0},
               'LASER table 1 (shared experience replay)'),
    PaperTable('laser', 'atari_shared_200m', None, 'laser_table_2_atari.csv',
               'laser_shared_200m', 'laser_atari_training', 200_000_000, 'atari',
               {'median': 448.0}, 'LASER table 1 (shared experience replay)'),
    # LASER prints DMLab-30 summaries only (table 1), of the best agent of a sweep (app. A.3).
    PaperTable('laser', 'dmlab30_shared', None, 'laser_table_1_summary.csv', None,
               'laser_dmlab30_training', 10_000_000_000, 'dmlab30',
               {'median': 97.2, 'mean_capped': 81.7}, 'LASER table 1 (shared experience replay)'),
    PaperTable('laser', 'dmlab30', None, 'laser_table_1_summary.csv', None,
               'laser_dmlab30_training', 10_000_000_000, 'dmlab30',
               {'median': 95.4, 'mean_capped': 79.6}, 'LASER table 1 (experience replay)'),
    PaperTable('reactor', 'atari_noop', None, 'reactor_table_5_atari_noop.csv', 'reactor',
               'reactor_atari_noop', 200_000_000, 'atari', {'median': 187.0}, 'Reactor table 2'),
    PaperTable('reactor', 'atari_noop_500m', None, 'reactor_table_5_atari_noop.csv',
               'reactor_500m', 'reactor_atari_noop', 500_000_000, 'atari', {'median': 230.0},
               'Reactor table 2'),
)

PAPER_TABLES = {(table.paper, table.table, table.torso): table for table in _TABLES}

# The table a run is compared with when none is named, by its config's "experiment".
DEFAULT_TABLES = {
    'impala_atari': ('impala', 'atari_experts'),
    'impala_atari57': ('impala', 'atari_multitask'),
    'impala_dmlab30': ('impala', 'dmlab30'),
    'apex_dqn_atari': ('apex', 'atari_noop'),
    'laser_atari': ('laser', 'atari_shared_200m'),
    'laser_dmlab30': ('laser', 'dmlab30_shared'),
    'reactor_atari': ('reactor', 'atari_noop'),
}


# Experiments whose paper results are not a per-game table, and where they are compared.
ELSEWHERE = {
    'impala_dmlab': 'IMPALA reports single-level runs as table 2, a grid of off-policy '
                    'corrections: launch/impala_correction_study.py --level=LEVEL sets runs '
                    'beside it',
}


def default_table(experiment):
    """(paper, table) for runs of `experiment`; one-line ValueError if it has none."""
    if experiment in ELSEWHERE:
        raise ValueError(f'no per-level paper table for {experiment}: {ELSEWHERE[experiment]}')
    if experiment not in DEFAULT_TABLES:
        raise ValueError(f'no default paper table for experiment {experiment!r}: pass --paper '
                         f'and --table (defaults exist for {", ".join(DEFAULT_TABLES)})')
    return DEFAULT_TABLES[experiment]


def get_table(paper, table, torso=None):
    """The table `table` of `paper` (for a run with `torso`); one-line ValueError otherwise."""
    found = PAPER_TABLES.get((paper, table, torso)) or PAPER_TABLES.get((paper, table, None))
    if found is None:
        known = sorted({f'{p} {t}' for p, t, _ in PAPER_TABLES})
        torsos = sorted(str(s) for p, t, s in PAPER_TABLES if (p, t) == (paper, table))
        detail = f' for torso {torso!r} (the table has {", ".join(torsos)})' if torsos else ''
        raise ValueError(f'unknown paper table {paper!r} {table!r}{detail}; known: '
                         + ', '.join(known))
    return found
