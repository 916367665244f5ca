"""Reproduction results as data (issue 23): a folder per row in results/, one command to
regenerate each, and results/README.md (and the main README's table) generated from them.

  python -m benchmarks.results --row=impala_pong              # train (or resume), copy, draw
  python -m benchmarks.results --row=impala_pong --collect    # copy and draw, no training
  python -m benchmarks.results --row=impala_pong --plot_only  # redraw results/impala_pong
  python -m benchmarks.results --table                        # rewrite results/README.md, grid

A row trains in RUN_ROOT/<row> (--run_root, default runs/results); re-running resumes it. Its
folder holds episodes.csv and config.json (copied from the run), evaluation.csv (when the run
ended with an evaluation), run.json (command, commit, date, frames, training time, frames/s,
changes from the paper's config) and curve.png. One action per command: a mix of them, a flag
the action does not read, an unknown row or a path it cannot use is refused in one line before
anything is trained or written.
"""
import csv
import dataclasses
import datetime
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
from absl import app
from absl import flags

from benchmarks import carried_runs
from benchmarks import results_table
from benchmarks import runs as benchmark_runs
from launch import configs
from launch import input_checks
from paper_tables import plots
from paper_tables import runs

_ROW = flags.DEFINE_string('row', None, 'The row to regenerate (see ROWS).')
_PLOT_ONLY = flags.DEFINE_bool('plot_only', False, 'Only redraw the row\'s curve.png.')
_COLLECT = flags.DEFINE_bool('collect', False, 'Copy the row\'s run and draw, without training.')
_TABLE = flags.DEFINE_bool('table', False, 'Rewrite RESULTS_DIR/README.md, its grid and '
                           '--readme\'s table.')
_RUN_ROOT = flags.DEFINE_string('run_root', os.path.join('runs', 'results'),
                                'Where the rows\' runs are (RUN_ROOT/<row>).')
_RESULTS_DIR = flags.DEFINE_string('results_dir', 'results', 'Where the rows\' folders are.')
_README = flags.DEFINE_string('readme', 'README.md', 'The README whose Results table --table '
                              'rewrites (the headline rows at their marks).')
_SEED = flags.DEFINE_integer('seed', None, 'Train and collect this seed of the row only '
                             '(default: each of the row\'s seeds in turn).')

# One action per command: the flags each reads ('train': --row alone).
_READS = {'train': ('row', 'seed', 'run_root', 'results_dir'),
          'collect': ('row', 'collect', 'seed', 'run_root', 'results_dir'),
          'plot_only': ('row', 'plot_only', 'results_dir'),
          'table': ('table', 'results_dir', 'readme')}

SITTINGS = 'sittings.jsonl'   # RUN_DIR/: a line per sitting of training, with its commit
CARRY_INTERVAL_S = 20 * 60    # how often a carried row's copy is refreshed while it trains
# Config fields about logging, not about what is trained, left out of the changes.
_NOT_TRAINING = ('checkpoint_interval_s', 'log_interval_s')

M = 1_000_000
SOURCES = {
    'PolyBeast': "the TorchBeast paper's PolyBeast runs (Kuttler et al. 2019, figure of Pong: "
                 "3 runs, figure 3's deep residual network, training return), read from "
                 "results/paper/paper.data.processed.pkl as aluscher/torchbeastpopart redraws "
                 "them (the torchbeast README's figure)",
    'RLlib IMPALA Pong': 'RLlib IMPALA, 128, 64 or 32 workers x 5 environments, 42x42 input, '
                         '2 GPUs (ray-project/rl-experiments, pong-speedrun/'
                         'pong-impala-fast.yaml and its results); training return',
    'RLlib IMPALA Breakout': 'RLlib IMPALA, 32 workers x 5 environments, learning rate '
                             'annealed over 20M agent steps = 80M frames (ray-project/'
                             'rl-experiments, atari-impala/atari-impala.yaml and its results); '
                             'training return (mean of the last 100 episodes)',
    'RLlib Ape-X Breakout': 'RLlib Ape-X DQN, 8 workers x 8 environments (ray-project/'
                            'rl-experiments, atari-apex/atari-apex.yaml and apex-results/); '
                            'the training return of its 3 of 8 workers with the lowest '
                            'epsilon (<= 0.004), nearly greedy',
    'D4PG': "D4PG on DeepMind Control from proprioceptive states, 10 seeds (danijar/dreamerv3, "
            "scores/dmc_proprio-d4pg.json.gz: DreamerV3's baselines, x in environment steps, "
            "one logged episode per 1,000 steps); each value the mean of the points within "
            "+-5% of the mark",
    'IMPALA table C.1': "IMPALA's paper (Espeholt et al. 2018), table C.1, column IMPALA "
                        "(shallow): one expert per game trained to 200M frames, scored as the "
                        "mean of 200 evaluation episodes from up to 30 no-op starts "
                        "(paper_tables/data/impala_table_c1_atari.csv; `python -m "
                        "paper_tables.compare` sets a run's evaluation by that protocol beside it)",
}

# The SOURCES that are a paper's own table (the others are another project's published curve).
PAPER_TABLE_SOURCES = ('IMPALA table C.1',)


@dataclasses.dataclass(frozen=True)
class Published:
    """A published score at `frames`, from SOURCES[source], which says its statistic (a row
    sets ours beside it computed the same way: Row.statistic)."""
    frames: int
    score: float
    source: str


@dataclasses.dataclass(frozen=True)
class Crossing:
    """A published first crossing of the row's threshold, between `first` and `last` frames."""
    first: int
    last: int
    source: str


@dataclasses.dataclass(frozen=True)
class Target:
    """`score` by `frames`, `factor` x the best score of the rows `relative_to` at `frames`, or
    the lowest seed of the row `spread_of` at `frames` (within its seeds' spread, or above)."""
    frames: int
    score: float | None = None
    relative_to: tuple[str, ...] = ()
    factor: float = 1.0
    spread_of: str | None = None


@dataclasses.dataclass(frozen=True)
class Row:
    """A row of results/README.md: the command that trains it and what it is held to."""
    name: str
    agent: str
    program: str                 # the launch module
    flags: tuple[str, ...]       # its flags but --run_dir
    marks: tuple[int, ...]       # frames at which the last-100 mean is reported
    target: Target
    published: tuple[Published, ...] = ()
    published_crossing: Crossing | None = None
    stop_frames: int | None = None  # stopped (checkpointed) here instead of at total_frames
    note: str = ''               # said while the row has no folder
    seeds: tuple[int, ...] = (0,)   # the config's `seed` of each run; the table: their mean
    statistic: str = 'last_100'  # how a run is scored at a mark (results_table.STATISTICS)
    experiment: bool = False     # a side row that tests one cause, not a documented command
    carried: bool = False        # its run carried in its folder across sittings (carried_runs)
    # A headline row's causes in at most 80 words, each claim naming the row whose data shows
    # it: every figure a placeholder (results_table.render), rendered from the folders.
    causes: str = ''
    # A sweep (`--sweep`): one run, whose learners (RUN_DIR/learner_<i>) are the folder's
    # members 0..members-1, in the place of seeds.
    members: int = 0

    @property
    def preset(self):
        return next(f.split('=', 1)[1] for f in self.flags if f.startswith('--preset='))

    @property
    def runs(self) -> tuple[int, ...]:
        """What the folder holds a run of: the seeds, or a sweep's members."""
        return tuple(range(self.members)) if self.members else self.seeds

    def command(self, run_dir, seed=0):
        """The row's command for the run of `seed` (the paper config's seed, 0, unnamed); a
        sweep's one run for every member."""
        seeded = (f'--config.seed={seed}',) if seed and not self.members else ()
        return ['python', '-m', self.program, *self.flags, *seeded, f'--run_dir={run_dir}']

    def command_line(self, run_dir, seed=0):
        stop = f'  # stopped at {self.stop_frames:,} frames' if self.stop_frames else ''
        return shlex.join(self.command(run_dir, seed)) + stop

    def run_dir(self, run_root, seed):
        """Where the run of `seed` trains: RUN_ROOT/<row>/seed_<seed>; a sweep's, in
        RUN_ROOT/<row>/seed_0."""
        return os.path.join(run_root, self.name, f'seed_{0 if self.members else seed}')

    def logs_dir(self, run_root, run):
        """Where the run's learner writes its logs and config: the run's directory, or a
        sweep member's, RUN_DIR/learner_<run>."""
        run_dir = self.run_dir(run_root, run)
        return os.path.join(run_dir, f'learner_{run}') if self.members else run_dir


def _atari(program, game, preset, frames, *changes):
    """An Atari row's command: `game` at `preset` to `frames`, with `changes`."""
    return program, (f'--game={game}', f'--preset={preset}', f'--config.total_frames={frames}',
                     *changes)


def _control(task, frames, *changes):
    """An Ape-X DPG row's command: `task` at the quick preset to `frames`, with `changes`."""
    return 'launch.apex_dpg_control', (f'--task={task}', '--preset=quick',
                                       f'--config.total_frames={frames}', *changes)


SEEDS = (0, 1, 2)
_PONG_MARKS = (2 * M, 5 * M, 10 * M, 12 * M, 16 * M, 20 * M)
_POLYBEAST_PONG = (Published(12 * M, 17.6, 'PolyBeast'), Published(16 * M, 19.5, 'PolyBeast'),
                   Published(20 * M, 19.8, 'PolyBeast'))
_PONG_PUBLISHED = dict(published=_POLYBEAST_PONG,
                       published_crossing=Crossing(18_900_000, 22 * M, 'RLlib IMPALA Pong'))
_BREAKOUT_MARKS = (2 * M, 5 * M, 10 * M)
_RLLIB_BREAKOUT = (Published(2 * M, 11, 'RLlib IMPALA Breakout'),
                   Published(5 * M, 26, 'RLlib IMPALA Breakout'),
                   Published(10 * M, 72, 'RLlib IMPALA Breakout'))
_RLLIB_APEX = (Published(2 * M, 9, 'RLlib Ape-X Breakout'),
               Published(5 * M, 15, 'RLlib Ape-X Breakout'),
               Published(10 * M, 37, 'RLlib Ape-X Breakout'))
_D4PG_WALKER = (Published(100_000, 371, 'D4PG'), Published(250_000, 909, 'D4PG'),
                Published(500_000, 968, 'D4PG'))
_D4PG_CARTPOLE = (Published(100_000, 668, 'D4PG'), Published(250_000, 867, 'D4PG'))
_DPG_MARKS = (100_000, 250_000, 500_000)
# LASER's rows: marks at 2M and 5M, held to 1.5x impala_breakout's mean at 5M (issue 36).
_LASER_MARKS = dict(marks=(2 * M, 5 * M),
                    target=Target(5 * M, relative_to=('impala_breakout',), factor=1.5))
# Walker walk's rows to 500k steps: D4PG's three points by D4PG's statistic, held to 0.95 of its
# 968 at 500k (issue 36).
_WALKER_500K = dict(marks=_DPG_MARKS, target=Target(500_000, 0.95 * 968), published=_D4PG_WALKER,
                    statistic='window')
# RLlib Ape-X's three marks, on its own statistic (issue 36).
_APEX_10M = dict(marks=_BREAKOUT_MARKS, target=Target(10 * M, 37.0), published=_RLLIB_APEX,
                 statistic='least_exploring_third')
_UNTHROTTLED = '--config.samples_per_insert=0'   # the quick preset before it held a ratio
_REPLAY_100K = '--config.replay_capacity=100000'   # Ape-X DQN's quick preset before its 1M
_LASER_200M = '--config.anneal_frames=200000000'   # LASER's quick preset before it annealed at 5M
# LASER's Pong rows, set beside impala_pong (the same net on its own quick preset) at 5M.
_LASER_PONG = dict(marks=(2 * M, 5 * M), target=Target(5 * M, relative_to=('impala_pong',)),
                   experiment=True)
# Issue 57's candidates for the LSTM's collapse: one change from `laser_breakout` each, its first
# 2M frames (the 5M-frame schedule), three seeds, probed at their checkpoints
# (benchmarks/probed_runs.py); held to the feed-forward agent's 2M.
_LASER_2M = dict(marks=(1 * M, 2 * M), seeds=SEEDS, experiment=True,
                 target=Target(2 * M, relative_to=('laser_breakout_feed_forward',)))


def _laser_before_57(frames, *changes, preset='quick'):
    """A LASER Breakout row trained before issue 57 changed its presets: its command with the
    flags that give them as they stood (a lost life ended the episode; the quick preset's
    RMSProp epsilon was 1e-3), so that it still trains what its folder holds."""
    then = ['--config.life_loss_ends_episode=true']
    if preset == 'quick' and not any(c.startswith('--config.rmsprop_epsilon=') for c in changes):
        then.append('--config.rmsprop_epsilon=0.001')
    return _atari('launch.laser_atari', 'breakout', preset, frames, *changes, *then)

# The headline rows' causes (Row.causes): no figure typed, each a placeholder that
# results_table.render fills from the folders, each claim naming the row that shows it.
_CAUSES = {
    'impala_breakout': (
        "Level with RLlib's one run, the seeds spread wider than the gap. The learning rate "
        "anneals over the paper's horizon: annealed to zero at the budget, "
        '{impala_breakout_anneal_10m} reached {impala_breakout_anneal_10m@10M}; on the '
        "paper's horizon, {impala_breakout_lr_200m} reached {impala_breakout_lr_200m@10M}. A "
        'batch of eight, {impala_breakout_batch8}, is faster in wall time and behind per frame: '
        '{impala_breakout_batch8@10M}. With `bfloat16` networks, {impala_breakout_bfloat16} is '
        'at {impala_breakout_bfloat16@10M}.'),
    'impala_breakout_paper': (
        "The settings of table G.1 on two cores, trained across sittings to table C.1's frames and "
        "then evaluated with its protocol; the quick row {impala_breakout} reached "
        '{impala_breakout@10M} by its budget.'),
    'impala_pong': (
        "Level by the table's rule, under the target. The seeds leave random play together and "
        "are far apart at PolyBeast's first point: {impala_pong@12M}. PolyBeast trains the "
        "paper's deep network; with it, {impala_pong_deep_bfloat16} is at "
        '{impala_pong_deep_bfloat16@12M|published}. The small batch is not what holds the row '
        'back: {impala_pong_batch8}, batch eight, is at {impala_pong_batch8@12M} and '
        '{impala_pong_batch8@20M}.'),
    'apex_dqn_breakout': (
        "Trained with RLlib's replay of a million transitions, which the quick preset took after "
        '{apex_dqn_breakout_replay100k}, with the smaller one, fell from '
        '{apex_dqn_breakout_replay100k@5M} to {apex_dqn_breakout_replay100k@10M}. The first '
        "mark turns on RLlib's statistic: a third of the environments, its share of workers, "
        'gives {apex_dqn_breakout@2M|published}; its epsilon bound (`<= 0.004`) gives '
        '{apex_dqn_breakout@2M/rllib_epsilon_bound|published}. The table keeps the share, '
        "independent of the epsilon schedule's size."),
    'apex_dpg_walker_walk': (
        "Behind at every mark. With Acme D4PG's LayerNorm networks and nothing else changed, "
        '{apex_dpg_walker_walk_d4pg_network} is at '
        '{apex_dpg_walker_walk_d4pg_network@100k|published}; '
        '{apex_dpg_walker_walk_d4pg_network@250k|published}. That row stops there, so the last '
        "mark is untested. D4PG's settings tried alone are below this row's "
        '{apex_dpg_walker_walk@250k}: `--config.batch_size=256`, '
        '{apex_dpg_walker_walk_batch256}, {apex_dpg_walker_walk_batch256@250k}; '
        '`--config.n_step=5`, {apex_dpg_walker_walk_nstep5}, {apex_dpg_walker_walk_nstep5@250k}; '
        'uniform sampling, {apex_dpg_walker_walk_uniform}, {apex_dpg_walker_walk_uniform@250k}.'),
    'apex_dpg_cartpole_swingup': (
        "Level at the target's mark, behind D4PG's first point. Trained at "
        '`--config.samples_per_insert=32` before the quick preset took it, as it did because '
        'unthrottled, {apex_dpg_cartpole_swingup_unthrottled} was at '
        "{apex_dpg_cartpole_swingup_unthrottled@250k}. Which of D4PG's other differences "
        '(distributional critic, batch, networks) would close the first mark is not run on '
        'cartpole.'),
    'laser_breakout': (
        'Whole games (appendix C), so that a lost life no longer resets the LSTM, whose value '
        'learnt the steps since the reset in place of the frame, and RMSProp epsilon `1e-4`. '
        'Before them, {laser_breakout_life_episodes} reached {laser_breakout_life_episodes@5M}. '
        "Between the marks every seed's policy still turned deterministic for a while and its "
        "cells ran away after it, each time coming back (the row's notes); gradient clipping "
        "is the next candidate, {laser_breakout_grad_norm_40}. The study: "
        "`laser_breakout_anneal_5m`'s notes."),
    'laser_pong': (
        "Behind {impala_pong} ({impala_pong@5M}): the LSTM's gates saturated by the first "
        "checkpoint, so the agent never left random play. Short screens saturated every "
        "recurrent agent on Pong, without replay and IMPALA's own included, at every epsilon, "
        "clip and batch tried: Pong's grey frame feeds the torso a constant (the row's notes). "
        "LASER's feed-forward agent, {laser_pong_feed_forward}, is behind too "
        "({laser_pong_feed_forward@5M}); its cause is not found yet."),
    'reactor_breakout': (
        "Ahead of its target, the best of this project's rows at the mark: {impala_breakout}, "
        '{impala_breakout@2M}; {apex_dqn_breakout}, {apex_dqn_breakout@2M}. One seed held to '
        "this project's small-preset rows, not to a published figure: it does not test the "
        "paper's sample-efficiency claim. Replay reuses each acted step many times, which buys "
        'frames, not time: its frames/s are the lowest of the headline rows.'),
}

ROWS = {row.name: row for row in (
    # The headline rows: each agent's documented command with its budget (a run trained under
    # another override, which the preset took since, says so in its run.json's `note`).
    Row('impala_breakout', 'IMPALA, shallow net',
        *_atari('launch.impala_atari', 'breakout', 'quick', 10 * M), marks=_BREAKOUT_MARKS,
        target=Target(10 * M, 72.0), published=_RLLIB_BREAKOUT, seeds=SEEDS,
        causes=_CAUSES['impala_breakout']),
    Row('impala_pong', 'IMPALA, shallow net',
        *_atari('launch.impala_atari', 'pong', 'quick', 20 * M), marks=_PONG_MARKS,
        target=Target(20 * M, 18.0), seeds=SEEDS, causes=_CAUSES['impala_pong'],
        **_PONG_PUBLISHED),
    # Issue 58: a cell of the paper's own table at its frames. Table G.1 with nothing changed
    # but what two cores force: the actors, not stated for the experts, are the paper preset's
    # 2 processes of 16 games each. Trained across sittings, carried in its folder
    # (benchmarks/carried_runs.py).
    Row('impala_breakout_paper', "IMPALA, shallow net, table G.1 to the paper's 200M",
        'launch.impala_atari', ('--game=breakout', '--preset=paper'),
        marks=(10 * M, 25 * M, 50 * M, 100 * M, 200 * M), target=Target(200 * M, 640.43),
        published=(*_RLLIB_BREAKOUT[2:], Published(200 * M, 640.43, 'IMPALA table C.1')),
        carried=True,
        note="(trains across sittings; table C.1's impala_shallow: 640.43 at 200M)",
        causes=_CAUSES['impala_breakout_paper']),
    Row('apex_dqn_breakout', 'Ape-X DQN',
        *_atari('launch.apex_dqn_atari', 'breakout', 'quick', 10 * M),
        causes=_CAUSES['apex_dqn_breakout'], **_APEX_10M),
    Row('apex_dpg_walker_walk', 'Ape-X DPG', *_control('walker_walk', 500_000),
        seeds=SEEDS, causes=_CAUSES['apex_dpg_walker_walk'], **_WALKER_500K),
    Row('apex_dpg_cartpole_swingup', 'Ape-X DPG', *_control('cartpole_swingup', 250_000),
        marks=_DPG_MARKS[:2], target=Target(250_000, 0.95 * 867), published=_D4PG_CARTPOLE,
        statistic='window', causes=_CAUSES['apex_dpg_cartpole_swingup']),
    Row('laser_breakout', 'LASER, shallow net with LSTM, full state correction',
        *_atari('launch.laser_atari', 'breakout', 'quick', 5 * M),
        seeds=SEEDS, causes=_CAUSES['laser_breakout'], **_LASER_MARKS),
    Row('laser_pong', 'LASER, shallow net with LSTM, full state correction',
        *_atari('launch.laser_atari', 'pong', 'quick', 5 * M), marks=(2 * M, 5 * M),
        target=Target(5 * M, relative_to=('impala_pong',)), causes=_CAUSES['laser_pong']),
    Row('reactor_breakout', 'Reactor', *_atari('launch.reactor_atari', 'breakout', 'quick', 2 * M),
        marks=(2 * M,), target=Target(2 * M, relative_to=('impala_breakout',
                                                          'apex_dqn_breakout')),
        causes=_CAUSES['reactor_breakout']),

    # Experiments: each names by one change a cause of an earlier row's lag (its notes:
    # results/<row>/NOTES.md).
    # The quick preset as it was: the learning rate annealed to 0 at the row's budget.
    Row('impala_breakout_anneal_10m', 'IMPALA, shallow net, annealed to 0 at its 10M frames',
        *_atari('launch.impala_atari', 'breakout', 'quick', 10 * M,
                '--config.anneal_frames=10000000'),
        marks=_BREAKOUT_MARKS, target=Target(10 * M, 72.0), published=_RLLIB_BREAKOUT,
        experiment=True),
    Row('impala_breakout_lr_200m', 'IMPALA, shallow net, learning rate annealed over 200M',
        *_atari('launch.impala_atari', 'breakout', 'quick', 200 * M), marks=_BREAKOUT_MARKS,
        target=Target(10 * M, 72.0), stop_frames=10 * M, published=_RLLIB_BREAKOUT,
        experiment=True),
    Row('impala_pong_anneal_20m', 'IMPALA, shallow net, annealed to 0 at its 20M frames',
        *_atari('launch.impala_atari', 'pong', 'quick', 20 * M,
                '--config.anneal_frames=20000000'),
        marks=_PONG_MARKS, target=Target(20 * M, 18.0), experiment=True, **_PONG_PUBLISHED),
    Row('impala_pong_lr_200m', 'IMPALA, shallow net, learning rate annealed over 200M',
        *_atari('launch.impala_atari', 'pong', 'quick', 200 * M), marks=_PONG_MARKS,
        target=Target(20 * M, 18.0), stop_frames=20 * M, experiment=True, **_PONG_PUBLISHED),
    # Issue 36: whether `impala_pong`'s setbacks between 9M and 13M come from the quick preset's
    # batch of 4 (table G.1: 32): one change from the row, an update averaging twice the frames.
    Row('impala_pong_batch8', 'IMPALA, shallow net, batch 8',
        *_atari('launch.impala_atari', 'pong', 'quick', 20 * M, '--config.batch_size=8'),
        marks=_PONG_MARKS, target=Target(20 * M, 18.0), seeds=SEEDS, experiment=True,
        **_PONG_PUBLISHED),
    # Whether the batch of 8, 1.65x the frames/s of 4 on Pong, holds Breakout's 72 at 10M.
    Row('impala_breakout_batch8', 'IMPALA, shallow net, batch 8',
        *_atari('launch.impala_atari', 'breakout', 'quick', 10 * M, '--config.batch_size=8'),
        marks=_BREAKOUT_MARKS, target=Target(10 * M, 72.0), published=_RLLIB_BREAKOUT,
        experiment=True),
    # Table G.1 as it ran, before IMPALA's Atari experts stepped 16 games per actor (c1b631b).
    Row('impala_pong_paper', 'IMPALA, shallow net, table G.1 exactly', 'launch.impala_atari',
        ('--game=pong', '--preset=paper', '--config.envs_per_actor=8'), marks=_PONG_MARKS,
        target=Target(20 * M, 18.0), stop_frames=21_500_000, experiment=True, **_PONG_PUBLISHED),
    # The quick preset as it was: an unthrottled learner (0.73 sampled per inserted).
    Row('apex_dqn_breakout_unthrottled', 'Ape-X DQN, unthrottled learner',
        *_atari('launch.apex_dqn_atari', 'breakout', 'quick', 10 * M, _UNTHROTTLED, _REPLAY_100K),
        **_APEX_10M, experiment=True),
    Row('apex_dqn_breakout_spi8', 'Ape-X DQN, 8 sampled per inserted transition',
        *_atari('launch.apex_dqn_atari', 'breakout', 'quick', 2 * M,
                '--config.samples_per_insert=8', _REPLAY_100K),
        marks=(2 * M,), target=Target(2 * M, 9.0), published=_RLLIB_APEX[:1],
        statistic='least_exploring_third', experiment=True),
    # The quick preset as it was (issue 36): a replay of 100k transitions, the last 400k frames;
    # it fell from 27 at 5M to 19 at 10M where RLlib Ape-X's 1M (the row's now) went on rising.
    Row('apex_dqn_breakout_replay100k', 'Ape-X DQN, a replay of 100k transitions',
        *_atari('launch.apex_dqn_atari', 'breakout', 'quick', 10 * M, _REPLAY_100K),
        **_APEX_10M, experiment=True),
    # Control has no action repeat (agents/apex/config.py): frames are environment steps.
    Row('apex_dpg_walker_walk_unthrottled', 'Ape-X DPG, unthrottled learner',
        *_control('walker_walk', 500_000, _UNTHROTTLED), **_WALKER_500K, experiment=True),
    Row('apex_dpg_cartpole_swingup_unthrottled', 'Ape-X DPG, unthrottled learner',
        *_control('cartpole_swingup', 500_000, _UNTHROTTLED), marks=_DPG_MARKS,
        target=Target(250_000, 0.95 * 867), published=_D4PG_CARTPOLE, statistic='window',
        experiment=True),
    Row('apex_dpg_walker_walk_spi32', 'Ape-X DPG, 32 sampled per inserted transition',
        *_control('walker_walk', 250_000, '--config.samples_per_insert=32'),
        marks=_DPG_MARKS[:2], target=Target(250_000, 0.95 * 909), published=_D4PG_WALKER[:2],
        statistic='window', experiment=True),
    # Issue 36: what would name the cause of `apex_dpg_walker_walk`'s lag behind D4PG, one change
    # from the row each: the paper's batch of 256 (sec. 4.2; the quick preset's 64), and the
    # 5-step returns of Acme's D4PG (Ape-X's 3, sec. 4.1).
    Row('apex_dpg_walker_walk_batch256', "Ape-X DPG, the paper's batch of 256",
        *_control('walker_walk', 500_000, '--config.batch_size=256'), **_WALKER_500K,
        experiment=True),
    Row('apex_dpg_walker_walk_nstep5', 'Ape-X DPG, 5-step returns (Acme D4PG)',
        *_control('walker_walk', 500_000, '--config.n_step=5'), **_WALKER_500K,
        experiment=True),
    Row('apex_dpg_walker_walk_uniform', 'Ape-X DPG, uniform replay sampling (Acme D4PG)',
        *_control('walker_walk', 500_000, '--config.priority_exponent=0'), **_WALKER_500K,
        experiment=True),
    # ...and Acme D4PG's networks (LayerNorm MLPs, actor 256-256-256, critic 512-512-256;
    # appendix D's are 300-200 and 400-300), to 250k steps, where the row lags most.
    Row('apex_dpg_walker_walk_d4pg_network', "Ape-X DPG, Acme D4PG's LayerNorm networks",
        *_control('walker_walk', 250_000, '--config.network=d4pg'), marks=_DPG_MARKS[:2],
        target=Target(250_000, 0.95 * 909), published=_D4PG_WALKER[:2], statistic='window',
        seeds=SEEDS, experiment=True),
    # Issue 37: bfloat16 networks learn as float32 ones at equal frames, within the spread of
    # the float32 seeds of the same command.
    Row('impala_breakout_bfloat16', 'IMPALA, shallow net, bfloat16 networks',
        *_atari('launch.impala_atari', 'breakout', 'quick', 10 * M, '--config.precision=bfloat16'),
        marks=_BREAKOUT_MARKS, target=Target(10 * M, spread_of='impala_breakout'),
        published=_RLLIB_BREAKOUT, seeds=SEEDS, experiment=True),
    Row('apex_dpg_walker_walk_bfloat16', 'Ape-X DPG, bfloat16 networks',
        *_control('walker_walk', 250_000, '--config.precision=bfloat16'), marks=_DPG_MARKS[:2],
        target=Target(250_000, spread_of='apex_dpg_walker_walk'), published=_D4PG_WALKER[:2],
        statistic='window', experiment=True),
    # Issue 37, item 5: figure 3's deep network, the network of the PolyBeast curves, which the
    # float32 learner makes too slow for this machine (20M frames in ~13 h). To 12M frames, the
    # issue's least and PolyBeast's first mark. 20M in bfloat16 would take 2.5 h at the 2,259
    # frames/s measured with AMX (benchmarks/README.md), and longer without AMX. That leaves no
    # room in a 3-hour session, and a fresh machine cannot resume the run. The schedule anneals
    # over 200M whatever the budget, so these are the first 12M frames of a 20M run.
    Row('impala_pong_deep_bfloat16', 'IMPALA, deep net, bfloat16 networks',
        *_atari('launch.impala_atari', 'pong', 'quick', 12 * M, '--config.torso=deep',
                '--config.precision=bfloat16'),
        marks=_PONG_MARKS[:4], target=Target(12 * M, 17.6), experiment=True,
        published=_POLYBEAST_PONG[:1]),
    # LASER's quick preset before it annealed at its budget: table G.1's 200M-frame schedule
    # (run as the `laser_breakout` row at 3ab5bd6, when the preset did not anneal at 5M).
    Row('laser_breakout_lr_200m', 'LASER, LSTM, learning rate annealed over 200M',
        *_laser_before_57(5 * M, _LASER_200M),
        **_LASER_MARKS, experiment=True),
    # The quick preset's annealing to 0 at 5M, run by this override before the preset took it.
    Row('laser_breakout_anneal_5m', 'LASER, LSTM, annealed to 0 at its 5M frames',
        *_laser_before_57(5 * M,
                '--config.anneal_frames=5000000'),
        seeds=SEEDS, **_LASER_MARKS, experiment=True),
    # LASER on the paper's 200M-frame schedule with the paper config's RMSProp epsilon (0.01,
    # where the quick preset's 1e-3 let the LSTM collapse at that schedule).
    Row('laser_breakout_paper_epsilon', "LASER, LSTM, the paper config's RMSProp epsilon 0.01",
        *_laser_before_57(5 * M, _LASER_200M,
                '--config.rmsprop_epsilon=0.01'),
        **_LASER_MARKS, experiment=True),
    # The same schedule at the low end of sec. 5.1's learning-rate sweep (3e-4, where the
    # preset takes its middle, 6e-4): the annealed-to-5M run's mean rate over its 5M frames.
    Row('laser_breakout_lr_3e-4', 'LASER, LSTM, learning rate 3e-4 (sec. 5.1 sweep)',
        *_laser_before_57(5 * M, _LASER_200M,
                '--config.learning_rate=0.0003'),
        **_LASER_MARKS, experiment=True),
    # The same schedule with more online data per update: the preset's batch of 8 at 75% replay
    # holds 2 online unrolls, the paper's 128 at 96% about 5 (sec. 5.1), IMPALA's quick preset
    # 4; 32 holds 8 (and 24 replayed).
    Row('laser_breakout_batch32', 'LASER, LSTM, batch 32 (8 online unrolls)',
        *_laser_before_57(5 * M, _LASER_200M,
                '--config.batch_size=32'),
        seeds=SEEDS, **_LASER_MARKS, experiment=True),
    # Both: batch 32 learnt on the 200M schedule, then its policy turned deterministic at ~3.8M
    # frames, where the annealed runs' rate is low.
    Row('laser_breakout_batch32_anneal_5m', 'LASER, LSTM, batch 32, annealed to 0 at its 5M',
        *_laser_before_57(5 * M, '--config.batch_size=32',
                '--config.anneal_frames=5000000'),
        seeds=SEEDS, **_LASER_MARKS, experiment=True),
    # The preset (annealed at 5M) with RMSProp epsilon between its 1e-3, where a third to a half
    # of the runs' LSTM cells run away, and the paper config's 0.01, which held them in three
    # runs that then barely learnt by 2M (results/laser_breakout_anneal_5m/NOTES.md).
    Row('laser_breakout_epsilon_3e-3', 'LASER, LSTM, RMSProp epsilon 3e-3',
        *_laser_before_57(5 * M, '--config.rmsprop_epsilon=0.003'),
        seeds=SEEDS, **_LASER_MARKS, experiment=True),
    # The learning rate scaled to the batch: the paper's 6e-4 is for batches of 128 (sec.
    # 5.1); RMSProp's steps scale with the square root of a batch's size (Malladi et al. 2022),
    # 6e-4 * sqrt(8 / 128).
    Row('laser_breakout_lr_1.5e-4', 'LASER, LSTM, learning rate 1.5e-4, first 2M',
        *_laser_before_57(2 * M,
                '--config.learning_rate=0.00015'), **_LASER_2M),
    # The paper config's RMSProp epsilon (0.01, IMPALA table G.1) with the paper's learning rate
    # scaled per frame to the preset's batch: at 8 rows a summed gradient is a sixteenth of 128
    # rows', and eps 0.01 puts nearly every weight in RMSProp's damped regime, where a step is
    # proportional to it; so that a frame moves the weights as the paper's batch does (128
    # rows per 5 online unrolls; the preset 8 per 2), 6e-4 * (128 / 5) / (8 / 2) = 3.84e-3.
    Row('laser_breakout_epsilon_0.01_lr_3.84e-3', "LASER, LSTM, epsilon 0.01, the paper's rate "
        'scaled per frame, first 2M',
        *_laser_before_57(2 * M,
                '--config.rmsprop_epsilon=0.01', '--config.learning_rate=0.00384'), **_LASER_2M),
    # The value term's weight scaled to LASER's discount: the baseline loss's gradient is most
    # of the torso's and the LSTM's (benchmarks/gradient_scale.py), and the value scales with
    # 1 / (1 - discount): IMPALA's 0.5 at its 0.99 is 0.25 at LASER's 0.995 (sec. 5.1).
    Row('laser_breakout_baseline_cost_0.25', 'LASER, LSTM, baseline cost 0.25, first 2M',
        *_laser_before_57(2 * M,
                '--config.baseline_cost=0.25'), **_LASER_2M),
    # More replay per online unroll, toward the paper's 96% (sec. 5.1: 123 replayed rows to 5
    # online): 14 replayed rows to the preset's 2 online ones, twice the rows learnt per frame
    # at the same updates per frame (the preset: 6 to 2).
    Row('laser_breakout_batch16_replay_0.875', 'LASER, LSTM, batch 16 at 87.5% replay, first 2M',
        *_laser_before_57(2 * M, '--config.batch_size=16',
                '--config.replay_proportion=0.875'), **_LASER_2M),
    # The fourth candidate with each update's step held at the preset's: the loss sums over the
    # batch (IMPALA table G.1), so 16 rows double the gradient, and TF1's RMSProp (epsilon
    # inside the square root) steps the same for g and epsilon as for 2g and 4 epsilon; the
    # replayed rows then halve the gradient's variance, not double the step.
    Row('laser_breakout_batch16_replay_0.875_epsilon_4e-3',
        'LASER, LSTM, batch 16 at 87.5% replay, epsilon 4e-3, first 2M',
        *_laser_before_57(2 * M, '--config.batch_size=16',
                '--config.replay_proportion=0.875', '--config.rmsprop_epsilon=0.004'),
        **_LASER_2M),
    # The control: the same LSTM agent and updates per frame with no replay (the preset's 2
    # online rows alone, no carried states, no trust region at work), to tell whether the
    # replayed rows drive the torso's runaway.
    Row('laser_breakout_online_only', 'LASER, LSTM, no replay (2 online rows), first 2M',
        *_laser_before_57(2 * M, '--config.batch_size=2',
                '--config.replay_proportion=0'), **_LASER_2M),
    # The LSTM fed the torso's output alone, without figure 3's last action and reward: in the
    # control's probes the torso went silent while the state's share of the gates' input held,
    # as if the value term (most of the gradient, benchmarks/gradient_scale.py) were met from
    # the reward and action inputs the state integrates, and the frame were noise to it.
    Row('laser_breakout_no_last_action_reward',
        'LASER, LSTM fed the torso alone (no last action or reward), first 2M',
        *_laser_before_57(2 * M,
                '--config.core_last_action_reward=false'), **_LASER_2M),
    # The LSTM initialised as IMPALA's released agent's (scalable_agent: TF1's LSTMBlockCell,
    # one Glorot-uniform kernel over [input, state]): weights of std 0.036 where Sonnet 2's are
    # 0.062, so each gate's recurrent matrix starts with a gain of about 0.6, not 1.
    Row('laser_breakout_lstm_block_cell_init',
        "LASER, LSTM initialised as IMPALA's released agent's, first 2M",
        *_laser_before_57(2 * M,
                '--config.core_lstm_init=lstm_block_cell'), **_LASER_2M),
    # The two before together: neither ran away in three seeds, and each left random play
    # between 1M and 1.5M; whether their effects add.
    Row('laser_breakout_lstm_block_cell_init_no_last_action_reward',
        "LASER, LSTM fed the torso alone and initialised as IMPALA's released agent's, "
        'first 2M',
        *_laser_before_57(2 * M,
                '--config.core_last_action_reward=false',
                '--config.core_lstm_init=lstm_block_cell'), **_LASER_2M),
    # The inputs change (no runaway in six seeds) at a smaller RMSProp epsilon, where the
    # torso's updates leave the damped regime of 1e-3 (benchmarks/gradient_scale.py): 1e-4 is
    # TF1's form of TorchBeast's Atari LSTM agent's (PyTorch's eps 0.01 outside the square
    # root, a denominator floor of 0.01), a small-batch LSTM agent known to learn.
    Row('laser_breakout_no_last_action_reward_epsilon_1e-4',
        'LASER, LSTM fed the torso alone, RMSProp epsilon 1e-4, first 2M',
        *_laser_before_57(2 * M,
                '--config.core_last_action_reward=false', '--config.rmsprop_epsilon=0.0001'),
        **_LASER_2M),
    # The eighth candidate with half the replay: 4 replayed rows to 4 online ones (LASER app.
    # A.2's figure 4 runs "use 50% replay ratio"). In the runs above, more replayed rows per
    # online one ran away sooner (none: 1-2M; 6 to 2: 0.3-0.6M; 14 to 2: 0.44-1M), each
    # update's drift of the torso's and convolutions' all-weights-together directions
    # (results/laser_breakout_no_last_action_reward_epsilon_1e-4/NOTES.md).
    Row('laser_breakout_no_last_action_reward_epsilon_1e-4_replay_0.5',
        'LASER, LSTM fed the torso alone, RMSProp epsilon 1e-4, 50% replay, first 2M',
        *_laser_before_57(2 * M,
                '--config.core_last_action_reward=false', '--config.rmsprop_epsilon=0.0001',
                '--config.replay_proportion=0.5'),
        **_LASER_2M),
    # The eighth candidate with the paper's deep torso (sec. 5.1: "we use the IMPALA deep
    # network", at its own channels, not 4x): in the runaways above one first-layer filter of
    # the shallow torso, 8x8 over 4 frames, rose to answer the frame's brightness
    # (benchmarks/weight_drift.py); the deep torso's first convolution is 3x3.
    Row('laser_breakout_no_last_action_reward_epsilon_1e-4_deep',
        'LASER, LSTM fed the torso alone, RMSProp epsilon 1e-4, deep torso, first 2M',
        *_laser_before_57(2 * M,
                '--config.core_last_action_reward=false', '--config.rmsprop_epsilon=0.0001',
                '--config.torso=deep'),
        **_LASER_2M),
    # The eighth candidate at IMPALA's quick preset's and the feed-forward agent's RMSProp
    # epsilon, 1e-5: in the eighth's runaways the LSTM's weights never left their
    # initialisation, as if damped under the floor sqrt(1e-4). They stayed there at 1e-5 too
    # (results/laser_breakout_no_last_action_reward_epsilon_1e-5/NOTES.md).
    Row('laser_breakout_no_last_action_reward_epsilon_1e-5',
        'LASER, LSTM fed the torso alone, RMSProp epsilon 1e-5, first 2M',
        *_laser_before_57(2 * M,
                '--config.core_last_action_reward=false', '--config.rmsprop_epsilon=0.00001'),
        **_LASER_2M),
    # Issue 57's twelfth candidate: a lost life zeroes the discount inside the episode instead
    # of ending it (DeepMind's DQN Zoo and Acme: `zero_discount_on_life_loss`), so the LSTM
    # keeps its state across lives, where a reset every life (about 30 steps of random play)
    # hands the value a clock, the steps since the reset, that needs no frame; the replay holds
    # whole games (app. C). Run as `--config.life_loss_ends_episode=false
    # --config.life_loss_zero_discount=true` before the presets took both.
    Row('laser_breakout_life_loss_zero_discount',
        'LASER, LSTM, whole-game episodes (a lost life zeroes the discount), first 2M',
        *_atari('launch.laser_atari', 'breakout', 'quick', 2 * M,
                '--config.rmsprop_epsilon=0.001'), **_LASER_2M),
    # The thirteenth: the same at the feed-forward agent's RMSProp epsilon, 1e-5, where the
    # LSTM's cells ran away while lives ended episodes
    # (`laser_breakout_no_last_action_reward_epsilon_1e-5`).
    Row('laser_breakout_life_loss_zero_discount_epsilon_1e-5',
        'LASER, LSTM, whole-game episodes, RMSProp epsilon 1e-5, first 2M',
        *_atari('launch.laser_atari', 'breakout', 'quick', 2 * M,
                '--config.rmsprop_epsilon=0.00001'), **_LASER_2M),
    # Issue 57's fourteenth and fifteenth candidates: whole games at RMSProp epsilons between
    # the preset's 1e-5, where one of the two seeds run with whole games counted the steps
    # since the game's start in its cells by 0.25M frames (`laser_breakout`'s first seed), and
    # 1e-3, where the body's gradients sit under the denominator floor and it learns slowly.
    Row('laser_breakout_epsilon_1e-4', 'LASER, LSTM, whole games, RMSProp epsilon 1e-4, '
        'first 2M', *_atari('launch.laser_atari', 'breakout', 'quick', 2 * M,
                            '--config.rmsprop_epsilon=0.0001'), **_LASER_2M),
    Row('laser_breakout_epsilon_3e-4', 'LASER, LSTM, whole games, RMSProp epsilon 3e-4, '
        'first 2M', *_atari('launch.laser_atari', 'breakout', 'quick', 2 * M,
                            '--config.rmsprop_epsilon=0.0003'), **_LASER_2M),
    # The sixteenth: the fix's preset with IMPALA's gradient clipping (table G.1: global norm
    # 40), which LASER drops (sec. 5.1) at batches of 160 where the preset's are 8. At the fix,
    # `laser_breakout`'s seeds fell into a deterministic policy losing every life at 0 points
    # (seed 0 twice near 2M for about 50k frames; seed 1 at 3.3M, its cells then running away
    # and counting the steps), after updates of gradient norm above 100.
    Row('laser_breakout_grad_norm_40', 'LASER, LSTM, whole games, RMSProp epsilon 1e-4, '
        "gradients clipped at IMPALA's global norm 40",
        *_atari('launch.laser_atari', 'breakout', 'quick', 5 * M, '--config.max_grad_norm=40'),
        seeds=SEEDS, experiment=True, **_LASER_MARKS),
    # LASER's figure 3 at a small machine's scale: the quick sweep's three learning rates
    # (sec. 5.1's 3e-4, 6e-4, 1.2e-3) sharing one replay with the trust region on, each member
    # to 5M frames, set beside the single agent.
    Row('laser_breakout_sweep', "LASER's quick sweep: 3 agents (learning rates 3e-4, 6e-4, "
        '1.2e-3) sharing one replay, trust region on',
        *_atari('launch.laser_atari', 'breakout', 'quick', 5 * M, '--sweep=quick'),
        marks=(2 * M, 5 * M), target=Target(5 * M, relative_to=('laser_breakout',)),
        members=3, experiment=True),
    # The headline row's three seeds at `a582ba8`, the quick preset before issue 57.
    Row('laser_breakout_life_episodes',
        'LASER, LSTM, the quick preset before issue 57: a lost life ended the episode, '
        'RMSProp epsilon 1e-3',
        *_laser_before_57(5 * M), seeds=SEEDS, **_LASER_MARKS, experiment=True),
    # Run at 0ee41db as `--preset=quick`, which was this feed-forward agent until the LSTM
    # with full state correction became LASER's default (the row's run.json says so).
    Row('laser_breakout_feed_forward', 'LASER, feed-forward shallow net',
        *_laser_before_57(5 * M, '--config.anneal_frames=5000000', preset='quick_feed_forward'),
        **_LASER_MARKS, experiment=True),
    # Pong with LASER's feed-forward net, beside impala_pong's (the same net): on Pong every
    # recurrent agent screened, IMPALA's own included, saturated its LSTM (laser_pong's notes),
    # so this row asks the paper's question of replay and the trust region on a second game.
    Row('laser_pong_feed_forward', 'LASER, feed-forward shallow net',
        *_atari('launch.laser_atari', 'pong', 'quick_feed_forward', 5 * M), **_LASER_PONG),
    # One change each to the row above, to name why it trails impala_pong (its notes). The
    # learning rate on IMPALA's quick schedule, annealed over 200M frames: LASER's quick preset
    # anneals to 0 at 5M, so at 4M, where Pong's climb began, its rate is a fifth of IMPALA's.
    Row('laser_pong_feed_forward_anneal_200m',
        "LASER, feed-forward, the learning rate annealed over IMPALA's 200M frames",
        *_atari('launch.laser_atari', 'pong', 'quick_feed_forward', 5 * M,
                '--config.anneal_frames=200000000'), **_LASER_PONG),
    # No replay (`replay_proportion=0`, figure 3's no-replay baseline): every row online, so
    # whether replay and the trust region or LASER's other settings hold the agent back.
    Row('laser_pong_feed_forward_replay_0', 'LASER, feed-forward, no replay (online rows only)',
        *_atari('launch.laser_atari', 'pong', 'quick_feed_forward', 5 * M,
                '--config.replay_proportion=0'), **_LASER_PONG),
    # IMPALA's discount (table G.1: 0.99) where LASER's is 0.995 (sec. 5.1).
    Row('laser_pong_feed_forward_discount_0.99', "LASER, feed-forward, IMPALA's discount 0.99",
        *_atari('launch.laser_atari', 'pong', 'quick_feed_forward', 5 * M,
                '--config.discount=0.99'), seeds=(0, 1), **_LASER_PONG),
    # IMPALA's gradient clipping (table G.1: global norm 40), which LASER drops (sec. 5.1): the
    # feed-forward row logged norms of 58-156 (means over 0.5M frames) throughout.
    Row('laser_pong_feed_forward_grad_norm_40',
        "LASER, feed-forward, gradients clipped at IMPALA's global norm 40",
        *_atari('launch.laser_atari', 'pong', 'quick_feed_forward', 5 * M,
                '--config.max_grad_norm=40'), **_LASER_PONG),
)}


def _learner_frames(learner_csv):
    rows = runs.read_csv(learner_csv) if os.path.exists(learner_csv) else []
    return int(rows[-1]['frames']) if rows else 0


def train(row, run_dir, seed):
    """Runs the row's command for `seed` in `run_dir` (resuming it there), recording each
    sitting's commit in RUN_DIR/sittings.jsonl; a row with `stop_frames` is stopped with
    SIGTERM, which checkpoints, once its learner has logged them. A `carried` row's run starts
    from the copy in its folder when `run_dir` holds none, and that copy is refreshed every
    CARRY_INTERVAL_S and at the end (benchmarks/carried_runs.py); SIGTERM to this process
    stops the run the same way, the copy refreshed after its last checkpoint."""
    learner_csv = os.path.join(run_dir, 'learner_0' if row.members else '', 'logs',
                               'learner.csv')
    carried = carried_runs.carried_dir(os.path.join(_RESULTS_DIR.value, row.name), seed)
    if row.carried and carried_runs.carry_in(carried, run_dir):
        print(f'{run_dir}: restored from the run carried in {carried}', flush=True)
    if row.stop_frames and _learner_frames(learner_csv) >= row.stop_frames:
        return
    print(row.command_line(run_dir, seed), flush=True)
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, SITTINGS), 'a') as f:
        f.write(json.dumps({'commit': _commit(_RESULTS_DIR.value), 'date': _now(),
                            'from_frames': _learner_frames(learner_csv)}) + '\n')
    process = subprocess.Popen([sys.executable, *row.command(run_dir, seed)[1:]])
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: (stopped.append(True),
                                              process.send_signal(signal.SIGTERM)))
    carried_at = time.monotonic()
    while process.poll() is None:
        time.sleep(5)
        if row.stop_frames and _learner_frames(learner_csv) >= row.stop_frames:
            process.send_signal(signal.SIGTERM)
            process.wait()
        if row.carried and time.monotonic() - carried_at > CARRY_INTERVAL_S:
            carried_runs.carry_out(run_dir, carried)
            carried_at = time.monotonic()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if row.carried:
        carried_runs.carry_out(run_dir, carried)
    if stopped:
        raise SystemExit(f'stopped: {row.command_line(run_dir, seed)}; the same command '
                         f'resumes it')
    if process.returncode != 0:
        raise SystemExit(f'failed: {row.command_line(run_dir, seed)}')


def changes_from_paper(spec):
    """{field: [paper value, this run's]} where the config of the run `spec`
    (launch/configs.load) differs from its experiment's paper config (the target game or task,
    the seed and the logging intervals left out)."""
    paper = json.loads(json.dumps(spec.experiment.paper_config().to_dict()))
    config = json.loads(json.dumps(spec.config.to_dict()))
    return {field: [paper.get(field), value] for field, value in config.items()
            if field not in (spec.experiment.target_field, 'seed', *_NOT_TRAINING)
            and paper.get(field) != value}


def _commit(results_dir):
    """HEAD, '-dirty' when tracked files other than the rows' folders in `results_dir` (which
    collecting rewrites) have changed; 'unknown' outside a git checkout."""
    def git(*args):
        return subprocess.run(['git', *args], capture_output=True, text=True).stdout.strip()
    head = git('rev-parse', 'HEAD') or 'unknown'
    changed = git('status', '--porcelain', '--untracked-files=no', '--', '.',
                  f':(exclude){results_dir}')
    return head + ('-dirty' if changed else '')


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')


def _merge_csv(source, seed, destination):
    """`destination` := its rows of other seeds and `source`'s rows with a `seed` column, by
    seed, each seed's in log order."""
    kept, fields = [], ['seed']
    if os.path.exists(destination):
        with open(destination, newline='') as f:
            reader = csv.DictReader(f)
            fields += [c for c in reader.fieldnames if c not in fields]
            kept = [row for row in reader if int(row['seed']) != seed]
    with open(source, newline='') as f:
        reader = csv.DictReader(f)
        fields += [c for c in reader.fieldnames if c not in fields]
        new = [{**row, 'seed': seed} for row in reader]
    with open(destination, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=fields, restval='')
        writer.writeheader()
        writer.writerows(sorted(kept + new, key=lambda row: int(row['seed'])))


def _sittings(run_dir, results_dir):
    """The commits of the run's sittings (RUN_DIR/sittings.jsonl, written by `train`); the
    checkout's HEAD for a run trained otherwise."""
    path = os.path.join(run_dir, SITTINGS)
    if not os.path.exists(path):
        return [{'commit': _commit(results_dir), 'date': _now(), 'from_frames': 0}]
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _with_rates(sittings, learner):
    """Each sitting with the frames/s its learner logged (training time, pauses left out)."""
    starts = [s['from_frames'] for s in sittings] + [float('inf')]
    rated = []
    for sitting, start, end in zip(sittings, starts, starts[1:]):
        rows = [r for r in learner if start <= int(r['frames']) <= end]
        seconds, frames = benchmark_runs.training_time(rows)
        rated.append({**sitting, 'frames_per_second': round(frames / max(seconds, 1e-9), 1)})
    return rated


def collect(row, run_root, seed, folder):
    """Copies the training games (and evaluation) of seed `seed`'s run (a sweep's member
    `seed`) under `run_root` into `folder`'s, with a `seed` column beside the other seeds'
    rows, and records the run in run.json."""
    command_dir, run_dir = row.run_dir(run_root, seed), row.logs_dir(run_root, seed)
    if not os.path.exists(os.path.join(run_dir, 'logs', 'learner.csv')):
        raise SystemExit(f'{run_dir}: no logs/learner.csv (train the row first)')
    os.makedirs(folder, exist_ok=True)
    _merge_csv(os.path.join(run_dir, 'logs', 'episodes.csv'), seed,
               os.path.join(folder, 'episodes.csv'))
    if os.path.exists(os.path.join(run_dir, 'evaluation.csv')):
        _merge_csv(os.path.join(run_dir, 'evaluation.csv'), seed,
                   os.path.join(folder, 'evaluation.csv'))
    spec = configs.load(run_dir)
    if seed == row.runs[0] or not os.path.exists(os.path.join(folder, 'config.json')):
        shutil.copyfile(os.path.join(run_dir, 'config.json'), os.path.join(folder, 'config.json'))
    learner = runs.read_csv(os.path.join(run_dir, 'logs', 'learner.csv'))
    seconds, frames_timed = benchmark_runs.training_time(learner)
    record = os.path.join(folder, 'run.json')
    run = {'row': row.name, 'changes_from_paper': changes_from_paper(spec),
           **({'unit': 'member'} if row.members else {}), 'seeds': {}}
    if os.path.exists(record):
        with open(record) as f:
            run['seeds'] = json.load(f)['seeds']
    sittings = _sittings(command_dir, os.path.dirname(folder))
    run['seeds'][str(seed)] = {
        'command': row.command_line(command_dir, seed),
        'commit': sittings[0]['commit'],
        **({'sittings': _with_rates(sittings, learner)} if len(sittings) > 1 else {}),
        'date': _now(),
        'frames': int(learner[-1]['frames']),
        'wall_time_s': round(seconds),
        'frames_per_second': round(frames_timed / max(seconds, 1e-9), 1)}
    run['seeds'] = dict(sorted(run['seeds'].items(), key=lambda item: int(item[0])))
    with open(record, 'w') as f:
        json.dump(run, f, indent=1)
        f.write('\n')


def _panel(row, results_dir):
    """curve_with_points' arguments (but the path) for `row`, from its folder (and those its
    target refers to): each seed's score by the row's statistic, their mean, and the published
    points."""
    folders = results_table.read_folders(
        [row, *(ROWS[name] for name in row.target.relative_to)], results_dir)
    folder = folders[row.name]
    if folder is None:
        raise SystemExit(f'{os.path.join(results_dir, row.name)}: no run.json (collect the row '
                         f'first)')
    threshold, text = results_table.target(row, folders)
    points = [(p.frames, p.frames, p.score, p.source) for p in row.published]
    if row.published_crossing and threshold is not None:
        c = row.published_crossing
        points.append((c.first, c.last, threshold, f'{c.source}: first reaches {threshold:g}'))
    lines = []
    for seed, games in sorted(folder.games.items()):
        frames, scores, _ = results_table.curve(games, row.statistic, folder.config)
        lines.append((f'ours, seed {seed}', frames, scores, False))
    if len(folder.games) > 1:
        grid = np.linspace(0, min(folder.frames(s) for s in folder.games), 200)[1:]
        mean = [results_table.score_at(folder, f) for f in grid]
        lines.append((f'ours, mean of {len(folder.games)} seeds', grid, mean, True))
    repeat = folder.config['action_repeat']
    x_label = ('environment steps (no action repeat)' if repeat == 1
               else f'emulator frames ({repeat} per agent step)')
    title = (f'{row.name}: {row.agent} on {folder.config.get("game", folder.config.get("task"))},'
             f' {row.preset} preset; statistic: {row.statistic.replace("_", " ")}')
    return dict(title=title, lines=lines, points=points, x_label=x_label,
                threshold=(threshold, f'target: {text}') if threshold is not None else None)


def plot(row, results_dir):
    """RESULTS_DIR/<row>/curve.png: the row's panel (_panel)."""
    plots.curve_with_points(os.path.join(results_dir, row.name, 'curve.png'),
                            **_panel(row, results_dir))


def plot_headline(rows, results_dir):
    """RESULTS_DIR/HEADLINE_CURVES: the panel of every headline row with a folder."""
    panels = [_panel(row, results_dir) for row in rows if not row.experiment
              and os.path.exists(os.path.join(results_dir, row.name, 'run.json'))]
    plots.curve_grid(os.path.join(results_dir, results_table.HEADLINE_CURVES), panels)


def _not_a_directory(path) -> str | None:
    """The nearest of `path` and its parents that exists, if it is not a directory."""
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    return None if os.path.isdir(existing) else existing


def flag_problem() -> str | None:
    """What makes the flags unusable, in one line; None if nothing: one action per command
    (`_READS`), a flag it does not read, a row that does not exist, or a path it cannot read
    or write. Checked before anything is trained or written."""
    given = flags.FLAGS
    actions = [a for a in ('collect', 'plot_only', 'table') if given[a].value] or (
        ['train'] if _ROW.value else [])
    if len(actions) != 1:
        return (f'--{actions[0]} and --{actions[1]} are two actions: give one per command'
                if actions else 'name a --row (to train it, --collect or --plot_only), or --table')
    action = actions[0]
    label = '--row alone (training)' if action == 'train' else f'--{action}'
    for name in ('row', 'seed', 'run_root', 'readme'):
        if given[name].present and name not in _READS[action]:
            return f'--{name} is not read by {label}: leave it out (one action per command)'
    if action == 'table':
        if not os.path.isdir(_RESULTS_DIR.value):
            return (f"--results_dir={_RESULTS_DIR.value} is not a directory: name the one "
                    f"holding the rows' folders (results/ in a checkout)")
        for flag, readme in (('results_dir', os.path.join(_RESULTS_DIR.value, 'README.md')),
                             ('readme', _README.value)):
            problem = results_table.section_problem(readme)
            if problem:
                return f'--{flag}: {problem}'
        return None
    if not _ROW.value:
        return f'--{action} needs a --row'
    if _ROW.value not in ROWS:
        return f'unknown --row={_ROW.value}; rows: {", ".join(ROWS)}'
    for flag in (_RUN_ROOT, _RESULTS_DIR):
        found = action != 'plot_only' and _not_a_directory(flag.value)
        if found:
            return (f'--{flag.name}={flag.value}: {found} is not a directory; name one (it is '
                    f'made if missing)')
    return None


def main(argv):
    del argv
    problem = flag_problem()
    if problem:
        raise SystemExit(f'error: {problem}')
    if input_checks.check_only('benchmarks.results'):
        return
    if _TABLE.value:
        rows = list(ROWS.values())
        results_table.rewrite(os.path.join(_RESULTS_DIR.value, 'README.md'),
                              results_table.section(rows, SOURCES, _RESULTS_DIR.value,
                                                    PAPER_TABLE_SOURCES))
        results_table.rewrite(_README.value, results_table.summary(rows, _RESULTS_DIR.value,
                                                                   PAPER_TABLE_SOURCES))
        plot_headline(rows, _RESULTS_DIR.value)
        return
    row = ROWS[_ROW.value]
    seeds = row.runs if _SEED.value is None else (_SEED.value,)
    if not _PLOT_ONLY.value:
        if not _COLLECT.value:
            for seed in seeds[:1] if row.members else seeds:   # a sweep: one run
                train(row, row.run_dir(_RUN_ROOT.value, seed), seed)
        for seed in row.runs if row.members else seeds:
            collect(row, _RUN_ROOT.value, seed, os.path.join(_RESULTS_DIR.value, row.name))
    plot(row, _RESULTS_DIR.value)


if __name__ == '__main__':
    app.run(main)
