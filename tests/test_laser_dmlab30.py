"""LASER on DMLab-30 (sec. 5.1, 5.3, 5.4; table 1): the paper config and its sweeps, a tiny
sweep of 2 agents sharing one replay through the fake `deepmind_lab` (tests/fakes; real Reverb,
real TF learners), evaluated on its training games and set beside table 1, and bad input in
one line each, before any process starts."""
import csv
import importlib.util
import os
import subprocess
import sys

from agents.core import population
from agents.impala import config as impala_config
from agents.laser import config as laser_config
from launch import configs
from launch import experiments
from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import finish_beside_refusals
from paper_tables import catalog
from paper_tables import tables

FAKES = os.path.join(ROOT, 'tests', 'fakes')
LEVELS = ('rooms_collect_good_objects_test', 'language_select_described_object',
          'rooms_watermaze')

# (arguments, the start of the one error line); the fake is not on the path.
BAD_INPUT = [
    (['--tasks=rooms_watermase,rooms_keys_doors_puzzle'],
     "error: --tasks: unknown DMLab-30 level 'rooms_watermase'; did you mean: rooms_watermaze?"),
    (['--preset=fast'], "error: unknown --preset='fast'; choose one of: paper, quick, tiny"),
    (['--sweep=large'], "error: unknown sweep 'large': name one of paper, quick"),
    (['--sweep=quick', '--config.pbt_population=2'],
     'error: --sweep and --config.pbt_population both choose the learners'),
    (['--config.pbt_population=2', '--config.pbt_adapted=rmsprop_epsilon,max_grad_nrm'],
     "error: --config.pbt_adapted names 'max_grad_nrm', which this agent cannot adapt"),
]
if importlib.util.find_spec('deepmind_lab') is None:     # unless a real one is installed
    BAD_INPUT.append(([], 'error: DeepMind Lab is not installed (the Python module '
                          'deepmind_lab has no wheel); build it from '
                          'https://github.com/deepmind/lab'))


def test_paper_config_is_sections_5_1_and_5_3():
    c = laser_config.LaserDmLab30()
    assert (c.unroll_length, c.batch_size, c.replay_proportion) == (79, 128, 0.875)
    assert impala_config.replay_batch_size(c) == 112                 # 7 replayed per online
    assert c.replay_capacity_observations == 10_000_000 and c.replay_shared and c.trust_region
    assert (c.rmsprop_epsilon, c.max_grad_norm, c.total_frames) == (0.1, 0.0, 10_000_000_000)
    assert (c.tasks, c.core, c.eval_protocol) == ('dmlab30', 'lstm', 'laser_dmlab30_training')
    assert c.pbt_population == 0 and population.adapted(c) == ('entropy_cost', 'learning_rate')
    # Sec. 5.1: sweeps of 10 agents drawn as IMPALA's (table D.1), RMSProp epsilon fixed.
    experiment = experiments.get('laser_dmlab30')
    c = c.replace(sweep='paper')
    members = experiment.sweeps.members(c)
    assert len(members) == 10 and len({m['learning_rate'] for m in members}) == 10
    for member in members:
        assert set(member) == {'entropy_cost', 'learning_rate'}
        assert 5e-5 <= member['entropy_cost'] <= 1e-2 and 5e-6 <= member['learning_rate'] <= 5e-3
    assert experiment.sweeps.members(c) == members                  # the same in every process
    assert catalog.default_table('laser_dmlab30') == ('laser', 'dmlab30_shared')
    for name, agent in (('dmlab30_shared', 'LASER: Shared Experience Replay'),
                        ('dmlab30', 'LASER: Experience Replay')):
        spec = catalog.get_table('laser', name)
        (row,) = [r for r in tables.load(spec.filename).rows if r['agent'] == agent]
        assert spec.printed == {'median': row['dmlab30_median_pct'],
                                'mean_capped': row['dmlab30_mean_capped_pct']}


def _start(args, run_dir, env):
    return subprocess.Popen(
        [sys.executable, '-m', 'launch.laser_dmlab30', f'--run_dir={run_dir}', '--preset=tiny',
         *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_tiny_sweep_shares_one_replay_and_is_set_beside_table_1(tmp_path):
    run_dir = str(tmp_path / 'run')
    fake = dict(ENV, PYTHONPATH=os.pathsep.join(filter(None, [FAKES, ENV.get('PYTHONPATH')])),
                DEEPMIND_LAB_FAKE_EPISODE_FRAMES='40')
    launcher = _start(['--sweep=quick', '--config.total_frames=400'], run_dir, fake)
    bad = [_start(args, str(tmp_path / f'bad_{i}'), dict(ENV, PYTHONPATH=ROOT))
           for i, (args, _) in enumerate(BAD_INPUT)]
    output, errors = finish_beside_refusals(
        launcher, [(process, message) for process, (_, message) in zip(bad, BAD_INPUT)], 600)
    assert launcher.returncode == 0, output + errors
    for i in range(len(BAD_INPUT)):
        assert not os.path.exists(tmp_path / f'bad_{i}' / 'config.json')
    # Two agents drawn from table D.1, each with its own learner, on one replay table.
    members = experiments.get('laser_dmlab30').sweeps.members(configs.load(run_dir).config)
    assert len(members) == 2
    for i in range(2):
        learner_dir = os.path.join(run_dir, f'learner_{i}')
        assert configs.load(learner_dir).config.learning_rate == members[i]['learning_rate']
        assert f'[learner_{i} entropy_cost=' in output
        with open(os.path.join(learner_dir, 'evaluation.csv'), newline='') as f:
            rows = list(csv.DictReader(f))
        assert {row['game'] for row in rows} == set(LEVELS)       # each level's training games
        assert {row['protocol'] for row in rows} == {'laser_dmlab30_training'}
    assert '| learner_0' in output and '| entropy_cost | learning_rate | score |' in output
    assert 'Paper: no per-level scores, only the summary of laser table 1' in output
    assert '| median (3 / 30) |' in output and '| 97.2% |' in output and '| 81.7% |' in output


def test_a_pbt_population_starts_where_the_sweep_does(monkeypatch):
    """Figure 3 (right): a PBT population's members are the run's learners, drawn from table
    D.1 as the sweep's are (and then adapted: agents/core/pbt.py)."""
    fake = importlib.util.spec_from_file_location('deepmind_lab',
                                                  os.path.join(FAKES, 'deepmind_lab.py'))
    module = importlib.util.module_from_spec(fake)
    fake.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, 'deepmind_lab', module)
    experiment = experiments.get('laser_dmlab30')
    spec = configs.resolve(experiment, paper=experiment.paper_config(), run_dir='/nonexistent',
                           preset='tiny', fields={'pbt_population': 2, 'pbt_burn_in_frames': 0,
                                                  'pbt_fitness_episodes': 3})
    assert spec.config.num_learners == 2
    sweep = configs.resolve(experiment, paper=experiment.paper_config(), run_dir='/nonexistent',
                            preset='tiny', sweep='quick')
    assert experiment.sweeps.members(spec.config) == experiment.sweeps.members(sweep.config)
