"""IMPALA's off-policy correction study (sec. 5.2.2, table 2): V-trace, 1-step importance
sampling, epsilon-correction and No-correction, each without and with experience replay.

  python -m launch.impala_correction_study --level=rooms_watermaze   # table 2's column 1
  python -m launch.impala_correction_study --level=seekavoid_arena_01 --preset=quick
  python -m launch.impala_correction_study --game=pong --preset=quick \\
      --config.total_frames=300000                      # an Atari game instead of DMLab
  python -m launch.impala_correction_study --level=rooms_watermaze --corrections=vtrace,none \\
      --replay=with

The paper runs the study on 5 DeepMind Lab tasks (rooms_watermaze, rooms_keys_doors_puzzle,
lasertag_three_opponents_small, explore_goal_locations_small, seekavoid_arena_01), one level
at a time: --level=LEVEL runs it on one of them (or any other DMLab level) through
launch/impala_dmlab.py, and its table sits beside table 2's column for that level. Without
--level, --game=GAME (default pong) runs it on an Atari game through launch/impala_atari.py,
beside all 5 of table 2's columns, and the table says it stands in for them. --game and
--level together are a one-line error.

Each cell of the grid is an ordinary run of that program in RUN_DIR/<correction>
(RUN_DIR/<correction>_replay with replay), one after the other, with
--config.off_policy_correction set (agents/ops/off_policy.py) and, with replay,
--config.replay_proportion=0.5: "we draw 50% of the items in each batch uniformly at random
from the replay buffer" (sec. 5.2.2), a uniform FIFO replay of 10,000 trajectories (table D.3,
--config.replay_capacity). Every other flag (--game or --level, --preset, --config.<field>
of that program's config, the launcher's) goes to every run. Re-running resumes: a finished
run (one with an evaluation.csv) is skipped, an unfinished one resumes from its checkpoint. At
the end the study prints each run's evaluation and final training return beside the paper's
table 2 and writes them to RUN_DIR/table_2.md and RUN_DIR/table_2.csv. A DMLab run's
"evaluation" is its training return too (protocol impala_dmlab_training): table 2 reports the
"average final return" of training. The paper's cells are the mean of the 3 best of 24
hyperparameter sets (sec. 5.2); each of ours is one set.
"""
import csv
import dataclasses
import os
import subprocess
import sys

from absl import app
from absl import flags

from agents.core.config_checks import ConfigError
from agents.ops import choices
from launch import configs
from launch import experiments
from launch import input_checks
from launch import program
from paper_tables import protocols
from paper_tables import runs
from paper_tables import tables


@dataclasses.dataclass(frozen=True)
class Environment:
    """Where the study runs: the experiment and program of its sub-runs, and their target."""
    name: str           # as the table names it
    experiment: str     # launch/experiments.py
    module: str         # the program each sub-run is
    flag: str           # the program's flag naming the game or level


ATARI = Environment('the Atari game', 'impala_atari', 'launch.impala_atari', 'game')
DMLAB = Environment('the DeepMind Lab level', 'impala_dmlab', 'launch.impala_dmlab', 'level')
PAPER_TABLE = 'impala_table_2_off_policy.csv'
REPLAY_SETTINGS = ('without', 'with')   # table 2's "Without Replay" and "With Replay"
REPLAY_PROPORTION = 0.5                 # sec. 5.2.2: "50% of the items in each batch"
LAST_TRAINING_EPISODES = 10             # the final training return: mean of the last 10 games
# Table 2's row labels (paper_tables/data/impala_table_2_off_policy.csv).
LABELS = choices.LABELS
# The config fields the study sets in each run; the user may not.
STUDY_FIELDS = ('off_policy_correction', 'replay_proportion')
OWN_FLAGS = ('run_dir', 'corrections', 'replay')


def environment_of(argv) -> Environment:
    """DMLAB where `argv` gives --level, else ATARI: which program's --config the command line
    holds, needed to define that --config. absl parses `argv` for --level alone (all other
    flags are left to the full parse), since the study's flags are not defined yet."""
    level = flags.FlagValues()
    flags.DEFINE_string('level', None, 'DeepMind Lab level.', flag_values=level)
    level.set_gnu_getopt(True)      # past positional arguments, as the full parse goes
    level(list(argv), known_only=True)
    return DMLAB if level['level'].present else ATARI


def define_flags() -> dict:
    """The study's own flags and the runs' --game, --level and --config (launch/program.py
    defines the rest): --config is the paper config of the program --level or --game chooses.
    Defined when the program runs, not at import: tests import this module."""
    environment = environment_of(sys.argv)
    experiment = experiments.get(environment.experiment)
    paper = experiment.paper_config()
    return dict(
        environment=environment, experiment=experiment, paper=paper,
        game=flags.DEFINE_string('game', None, 'Atari game, any paper spelling (default: '
                                 'pong): the study on Atari, through launch/impala_atari.py.'),
        level=flags.DEFINE_string('level', None, 'DeepMind Lab level, any paper spelling '
                                  '(e.g. seekavoid_arena_01): the study on DMLab, through '
                                  'launch/impala_dmlab.py.'),
        config=program.define_config(experiment, paper, '--config.total_frames=300000'),
        corrections=flags.DEFINE_list(
            'corrections', list(choices.CORRECTIONS),
            'Off-policy corrections to run: ' + ', '.join(choices.CORRECTIONS)
            + ' (sec. 5.2.2).'),
        replay=flags.DEFINE_list('replay', list(REPLAY_SETTINGS),
                                 'without: no replay; with: half of each batch from replay.'))


@dataclasses.dataclass(frozen=True)
class SubRun:
    """One cell of table 2: a correction, without or with replay, and its run directory."""
    correction: str
    replay: str
    run_dir: str

    def overrides(self) -> list[str]:
        proportion = REPLAY_PROPORTION if self.replay == 'with' else 0.0
        return [f'--run_dir={self.run_dir}',
                f'--config.off_policy_correction={self.correction}',
                f'--config.replay_proportion={proportion}']

    def finished(self) -> bool:
        """Trained and evaluated: the launcher evaluates a run when its training ends."""
        return os.path.exists(os.path.join(self.run_dir, 'evaluation.csv'))


def sub_runs(run_dir: str, corrections, replay) -> list[SubRun]:
    """The grid in table 2's order (replay setting, then correction); a one-line ConfigError
    for an unknown name or a repeated one."""
    for name, given, known in (('corrections', corrections, choices.CORRECTIONS),
                               ('replay', replay, REPLAY_SETTINGS)):
        unknown = [value for value in given if value not in known]
        if unknown or not given or len(set(given)) < len(given):
            raise ConfigError(f'--{name}={",".join(given)}: give one or more of '
                              f'{", ".join(known)}, each once')
    return [SubRun(correction, setting, os.path.join(
                run_dir, correction + ('_replay' if setting == 'with' else '')))
            for setting in REPLAY_SETTINGS if setting in replay
            for correction in choices.CORRECTIONS if correction in corrections]


def forwarded_args(argv) -> list[str]:
    """`argv` without the program name and the study's own flags (`OWN_FLAGS`, in the
    --flag=value and --flag value forms): what every run is given."""
    kept, skip_next = [], False
    for arg in argv[1:]:
        if skip_next:
            skip_next = False
            continue
        name = arg.lstrip('-').split('=', 1)[0]
        if arg.startswith('-') and name in OWN_FLAGS:
            skip_next = '=' not in arg
            continue
        kept.append(arg)
    return kept


def check_plan(plan, *, experiment, paper, preset, fields, target, role='local',
               sweep=None) -> None:
    """Every run's spec resolved and checked as its program will (launch/program.py), so that
    bad input is one line before any process starts. `experiment` and `paper`: the program's
    (ATARI's or DMLAB's experiment and its paper config); `fields`: the user's
    `--config.<field>`s; `target`: the --game or --level given."""
    overridden = [field for field in fields if field in STUDY_FIELDS]
    if overridden:
        raise ConfigError(f'--config.{overridden[0]} is what the study varies: use '
                          f'--corrections and --replay')
    if role != 'local' or sweep is not None:
        raise ConfigError('the study launches each of its runs here: --role and --sweep are '
                          'not for it')
    for sub_run in plan:
        spec = configs.resolve(
            experiment, paper=paper, run_dir=sub_run.run_dir, preset=preset, target=target,
            fields={**fields, 'off_policy_correction': sub_run.correction,
                    'replay_proportion': REPLAY_PROPORTION if sub_run.replay == 'with' else 0.0},
            resume_hint=False)
        if spec.config.num_learners != 1:
            raise ConfigError(f'--config.num_learners={spec.config.num_learners}: each run of '
                              f'the study is one learner')


def run_sub_run(sub_run: SubRun, forwarded, environment=ATARI) -> None:
    """Trains and evaluates one run, its output on this console; a ConfigError if it fails."""
    if sub_run.finished():
        print(f'[study] {sub_run.run_dir}: finished before, skipped', flush=True)
        return
    command = [sys.executable, '-m', environment.module, *forwarded, *sub_run.overrides()]
    print(f'[study] {" ".join(command[1:])}', flush=True)
    code = subprocess.run(command, check=False).returncode
    if code != 0:
        raise ConfigError(f'{sub_run.run_dir} exited with code {code} (its output is above); '
                          f're-run the study to resume it')


@dataclasses.dataclass(frozen=True)
class Result:
    """What one run reached: its evaluation and its final training return."""
    game: str
    frames: int
    evaluation: float
    episodes: int
    protocol: str
    training: object    # the mean of the last training games; None if it finished none


def result(sub_run: SubRun) -> Result:
    """The run's latest evaluation (paper_tables/runs.py) and its last training games."""
    run = runs.read_run(sub_run.run_dir)
    evaluation = run.evaluations[0]
    last = [episode_return for _, episode_return in run.curve[-LAST_TRAINING_EPISODES:]]
    return Result(evaluation.game, evaluation.checkpoint_frames,
                  evaluation.mean_score, len(evaluation.scores), evaluation.protocol,
                  sum(last) / len(last) if last else None)


def results_of(plan) -> dict:
    """{sub-run: Result} of the runs that can be read; a line for each that cannot."""
    found = {}
    for sub_run in plan:
        try:
            found[sub_run] = result(sub_run)
        except ValueError as e:
            print(f'[study] {sub_run.run_dir}: no result ({e})', flush=True)
    if not found:
        raise ConfigError('no run of the study has an evaluation to report')
    return found


def table_2(plan, results, environment=ATARI) -> str:
    """Markdown in table 2's layout: our runs beside the paper's column for our DMLab level, or
    beside all five DMLab tasks when ours is an Atari game (or a level table 2 does not have)."""
    paper = tables.load(PAPER_TABLE)
    tasks = paper.columns[2:]
    ours = sorted({r.game for r in results.values()})
    first = next(iter(results.values()))
    where = f'{environment.name} {", ".join(ours)}'
    shown = [task for task in tasks if task in ours]
    if environment is not DMLAB:
        shown, where = tasks, f'{where}, standing in for the paper\'s DMLab tasks'
    elif shown:
        where += ', beside table 2\'s column for it'
    else:
        shown, where = tasks, f'{where}, which is not one of table 2\'s tasks'
    if protocols.get_protocol(first.protocol).from_training:
        evaluation = (f'"evaluation": mean return of the last {first.episodes} training games '
                      f'(protocol {first.protocol}: table 2 reports training returns)')
    else:
        evaluation = (f'"evaluation": mean score of the evaluation (protocol {first.protocol}, '
                      f'{first.episodes} episodes) of the final checkpoint')
    lines = [
        '# IMPALA table 2 (sec. 5.2.2): off-policy corrections without and with replay', '',
        f'Ours: {where}; one hyperparameter set per cell. {evaluation}; "training": mean '
        f'return of the last {LAST_TRAINING_EPISODES} training games. Paper: average final '
        f'return over the 3 best of 24 hyperparameter sets on 5 DMLab tasks '
        f'(`paper_tables/data/{PAPER_TABLE}`).', '',
        '| replay | correction | frames | ours, evaluation | ours, training | '
        + ' | '.join(f'paper, {task}' for task in shown) + ' |',
        '|---|---|---|---|---|' + '---|' * len(shown)]
    for sub_run in plan:
        label = LABELS[sub_run.correction]
        row = next(r for r in paper.rows
                   if (r['replay'], r['correction']) == (sub_run.replay, label))
        found = results.get(sub_run)
        cells = (['-', 'no evaluation', '-'] if found is None else
                 [f'{found.frames:,}', f'{found.evaluation:.1f}',
                  _number(found.training)])
        lines.append(f'| {sub_run.replay} | {label} | ' + ' | '.join(cells) + ' | '
                     + ' | '.join(_number(row[task]) for task in shown) + ' |')
    return '\n'.join(lines) + '\n'


def _number(value) -> str:
    return '-' if value is None else f'{value:.1f}'


def write_results(run_dir: str, plan, results, environment=ATARI) -> str:
    """Prints table 2's layout and writes it to RUN_DIR/table_2.md and table_2.csv."""
    markdown = table_2(plan, results, environment)
    print(markdown, end='', flush=True)
    with open(os.path.join(run_dir, 'table_2.md'), 'w') as f:
        f.write(markdown)
    with open(os.path.join(run_dir, 'table_2.csv'), 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['replay', 'correction', 'environment', 'game', 'frames',
                         'evaluation', 'protocol', 'episodes', 'training'])
        for sub_run, ours in results.items():
            writer.writerow([sub_run.replay, LABELS[sub_run.correction], environment.flag,
                             ours.game, ours.frames, ours.evaluation, ours.protocol,
                             ours.episodes, ours.training])
    return markdown


def study(argv, own: dict) -> None:
    """Checks the whole grid, runs what is not finished, one run at a time, and reports."""
    given = flags.FLAGS
    input_checks.command_line(argv, given['role'].value, given['launcher'].value)
    environment = own['environment']
    if own['game'].value and own['level'].value:
        raise ConfigError('--game and --level both given: the study runs on an Atari game '
                          '(--game) or on a DeepMind Lab level (--level), not both')
    target = own[environment.flag].value
    name = target or own['experiment'].target(own['paper'])
    run_dir = given['run_dir'].value or os.path.join('runs', f'impala_correction_study_{name}')
    plan = sub_runs(run_dir, own['corrections'].value, own['replay'].value)
    check_plan(plan, experiment=own['experiment'], paper=own['paper'],
               preset=given['preset'].value, fields=configs.overrides(own['config']),
               target=target, role=given['role'].value, sweep=given['sweep'].value)
    if input_checks.check_only('launch.impala_correction_study'):
        return
    os.makedirs(run_dir, exist_ok=True)
    forwarded = forwarded_args(argv)
    for sub_run in plan:
        run_sub_run(sub_run, forwarded, environment)
    write_results(run_dir, plan, results_of(plan), environment)


def main(argv, own: dict):
    del argv   # absl's copy holds only positional arguments (refused); the flags: sys.argv
    try:
        study(sys.argv, own)
    except ConfigError as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)


if __name__ == '__main__':
    _OWN = define_flags()
    app.run(lambda argv: main(argv, _OWN))
