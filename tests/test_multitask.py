"""The multi-task agents (IMPALA sec. 5.3): the fixed assignment of environments to tasks, a
tiny real run of the Atari-57 agent over 3 games that logs and evaluates every game and reports
against table C.1's multi-task column, and bad input (unknown games or levels in a task list,
DeepMind Lab missing): one line each, before any process starts."""
import collections
import csv
import importlib.util
import os
import subprocess
import sys

from agents.core import builders
from agents.impala import config as impala_config
from launch import experiments
from launch import fitness
from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import finish_beside_refusals
from paper_tables import scores

GAMES = ('asterix', 'berzerk', 'qbert')

# (program, arguments, the start of the one error line).
BAD_INPUT = [
    ('launch.impala_atari57', ['--tasks=asterix,berzerkk,qbert'],
     "error: --tasks: unknown Atari game 'berzerkk'; did you mean: berzerk?"),
    ('launch.impala_dmlab30', ['--tasks=rooms_watermase,rooms_keys_doors_puzzle'],
     "error: --tasks: unknown DMLab-30 level 'rooms_watermase'; did you mean: rooms_watermaze?"),
]
if importlib.util.find_spec('deepmind_lab') is None:     # unless a real one is installed
    BAD_INPUT.append((
        'launch.impala_dmlab30', [],
        'error: DeepMind Lab is not installed (the Python module deepmind_lab has no wheel); '
        'build it from https://github.com/deepmind/lab'))


def test_every_task_gets_the_same_fixed_environments():
    tasks = ('a', 'b', 'c')
    played = [builders.assigned_task(tasks, 3, actor, env) for actor in range(2)
              for env in range(3)]
    assert played == ['a', 'b', 'c', 'a', 'b', 'c']
    paper = experiments.get('impala_atari57').builder(impala_config.ImpalaAtari57())
    counts = collections.Counter(
        builders.assigned_task(paper.environments.tasks(), 1, actor, 0) for actor in range(57))
    assert len(counts) == 57 and set(counts.values()) == {1}
    assert paper.environments.num_actions == 18                                   # appendix G
    skiing = paper.environments.environment(seed=0, task='skiing')
    assert skiing.num_actions == 18   # ALE's legal set: 9
    game = {'actor': 1, 'env': 2, 'episode_return': 3.0}
    quick = experiments.get('impala_atari57').builder(
        impala_config.multitask_quick(impala_config.ImpalaAtari57()))
    assert builders.game_task(quick, game) == quick.environments.tasks()[19 + 2]
    # PBT's fitness scores each game against its own game's references (appendix F).
    random, human = scores.atari_references()[quick.environments.tasks()[21]]
    value = fitness.fitness(quick, quick.config.tasks)
    assert value([dict(game, episode_return=human)]) == 1.0
    assert value([dict(game, episode_return=random)]) == 0.0


def _start(program, args, run_dir, env=ENV):
    return subprocess.Popen(
        [sys.executable, '-m', program, f'--run_dir={run_dir}', '--preset=tiny', *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_tiny_run_logs_and_evaluates_every_game(tmp_path):
    run_dir = str(tmp_path / 'run')
    launcher = _start('launch.impala_atari57', ['--config.total_frames=3000',
                                                '--config.max_episode_frames=800'], run_dir)
    bad = [_start(program, args, str(tmp_path / f'bad_{i}'),
                  env=dict(ENV, PYTHONPATH=ROOT))      # no fake deepmind_lab on the path
           for i, (program, args, _) in enumerate(BAD_INPUT)]
    output, errors = finish_beside_refusals(
        launcher, [(process, message) for process, (_, _, message) in zip(bad, BAD_INPUT)], 400)
    assert launcher.returncode == 0, output + errors
    for i in range(len(BAD_INPUT)):
        assert not os.path.exists(tmp_path / f'bad_{i}' / 'config.json')

    # Training: every game's whole-game returns are in the episode log, each game with its
    # task, the one the environment that played it was assigned.
    with open(os.path.join(run_dir, 'logs', 'episodes.csv'), newline='') as f:
        games = list(csv.DictReader(f))
    builder = experiments.get('impala_atari57').builder(
        impala_config.atari57_tiny(impala_config.ImpalaAtari57()))
    trained = {builders.game_task(builder, game) for game in games}
    assert trained == set(GAMES), games
    assert all(game['task'] == builders.game_task(builder, game) for game in games)
    assert '| task | games | mean return, last 100 |' in output
    for game in GAMES:
        assert f'| {game} |' in output

    # Evaluation: each game under the multi-task protocol (full action set), and the report
    # against table C.1's multi-task column and table 4's summary.
    with open(os.path.join(run_dir, 'evaluation.csv'), newline='') as f:
        rows = list(csv.DictReader(f))
    assert {row['game'] for row in rows} == set(GAMES)
    assert {row['protocol'] for row in rows} == {'impala_atari_multitask_noop'}
    assert 'column `impala_deep_multitask`' in output
    assert '| median (3 / 57) |' in output and '59.7%' in output     # table 4
