"""Population-based training (IMPALA appendix F): the initial population of table D.1, the
one-line checks, hyperparameters changed without retracing, the ancestry of copies, and a real
population of two IMPALA learners on Pong in which a member copies the other's checkpoint and
perturbs its hyperparameters."""
import csv
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from agents.core import pbt
from agents.core.config_checks import ConfigError
from agents.impala import config as impala_config
from launch import experiments
from launch import fitness
from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import wait_for
from paper_tables import scores
from tiny_learner import batch

ADAPTED = ('entropy_cost', 'learning_rate', 'rmsprop_epsilon', 'max_grad_norm')


def _config(**overrides):
    return impala_config.tiny(impala_config.ImpalaAtari()).replace(
        **{**dict(pbt_population=2, pbt_burn_in_frames=800, pbt_fitness_episodes=2),
           **overrides})


def test_the_initial_population_is_drawn_from_table_d1():
    c = impala_config.check(impala_config.ImpalaAtari().replace(pbt_population=24))   # table D.1
    assert c.num_learners == 24                     # the members are the run's learners
    sweeps = experiments.get('impala_atari').sweeps
    members = sweeps.members(c)
    assert len(members) == 24 and members == sweeps.members(c)   # the same in every process
    for field, (low, high) in [('entropy_cost', (5e-5, 1e-2)),
                               ('learning_rate', (5e-6, 5e-3))]:
        values = np.array([m[field] for m in members])
        assert low <= values.min() and values.max() <= high
        assert values.max() / values.min() > 10          # spread over the log range
    assert {m['rmsprop_epsilon'] for m in members} <= {1e-1, 1e-3, 1e-5, 1e-7}
    member = sweeps.member_config(c, 5)
    assert (member.learning_rate, member.entropy_cost) == (
        members[5]['learning_rate'], members[5]['entropy_cost'])
    assert member.max_grad_norm == 40.0     # not in table D.1: table G.1's, then adapted


@pytest.mark.parametrize('overrides, message', [
    (dict(pbt_population=1), '--config.pbt_population=1: a population needs at least 2'),
    (dict(pbt_fitness_episodes=5_000), '--config.pbt_fitness_episodes=5000 is a window larger '
                                       'than the run'),
    (dict(pbt_burn_in_frames=20_000), '--config.pbt_burn_in_frames=20000 is the whole run'),
    (dict(num_learners=3), '--config.num_learners=3 differs from --config.pbt_population=2'),
    (dict(pbt_adapted='discount'), "--config.pbt_adapted names 'discount', which this agent "
                                   "cannot adapt"),
])
def test_bad_populations_are_one_line_errors(overrides, message):
    with pytest.raises(ConfigError) as error:
        impala_config.check(_config(**overrides))
    assert str(error.value).startswith(message) and '\n' not in str(error.value)


def test_a_population_of_one_stops_the_program_before_any_process_starts(tmp_path):
    run_dir = tmp_path / 'run'
    result = subprocess.run(
        [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
         f'--run_dir={run_dir}', '--config.pbt_population=1'],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        'error: --config.pbt_population=1: a population needs at least 2 members to compare '
        '(0 turns population-based training off)'], result.stderr
    assert not run_dir.exists()


def test_adapted_hyperparameters_take_effect_without_retracing():
    c = _config(learning_rate=1e-3)
    c = impala_config.check(c)
    builder = experiments.get('impala_atari').builder(c)
    state = builder.learning_state()
    data = batch(builder, np.random.default_rng(0), 1.0)
    before = state.update(data)
    traced = state.update.experimental_get_tracing_count()
    for name in ADAPTED:
        state.hyperparameters[name].assign(state.hyperparameters[name] * 1.2)
    after = state.update(data)
    assert state.update.experimental_get_tracing_count() == traced
    # Under PBT the learning rate is PBT's own, not annealed (figure F.1).
    np.testing.assert_allclose(float(after['learning_rate']), 1.2e-3, rtol=1e-6)
    # The loss's entropy term is weighed by the adapted cost: the weights moved between the
    # two updates, so compare each update's own terms.
    for metrics, cost in ((before, c.entropy_cost), (after, 1.2 * c.entropy_cost)):
        np.testing.assert_allclose(
            float(metrics['loss']),
            float(metrics['policy_gradient_loss']) + c.baseline_cost
            * float(metrics['baseline_loss']) + cost * float(metrics['entropy_loss']),
            rtol=1e-5)


# Reactor table 5's random and human scores of the games below (checked against the data).
REFERENCES = {'asterix': (210.0, 8503.3), 'berzerk': (123.7, 2630.4), 'qbert': (163.9, 13455.0),
              'breakout': (1.7, 30.5)}


def _games(env, game, normalised):
    """Finished games of environment `env` (actor 0) with these human-normalised scores."""
    random, human = REFERENCES[game]
    return [{'actor': 0, 'env': env, 'episode_return': random + x * (human - random)}
            for x in normalised]


def test_fitness_is_table_g1_mean_over_tasks_of_capped_task_means():
    """(sum_l min[1, (s_l - r_l) / (h_l - r_l)]) / N: asterix's episodes are short (10 games in
    the window), berzerk's long (1 game), qbert's in between (2); each task weighs 1/3."""
    assert {g: scores.atari_references()[g] for g in REFERENCES} == REFERENCES
    c = impala_config.atari57_tiny(impala_config.ImpalaAtari57())
    builder = experiments.get('impala_atari57').builder(c)
    # env k of actor 0 plays task k
    assert builder.environments.tasks() == ('asterix', 'berzerk', 'qbert')
    window = (_games(0, 'asterix', [0.1] * 5 + [0.3] * 5) + _games(1, 'berzerk', [2.0])
              + _games(2, 'qbert', [0.9, 0.1]))
    value = fitness.fitness(builder, experiments.get('impala_atari57').target(c))
    # By hand: asterix's mean 0.2, berzerk's 2.0 capped to 1, qbert's mean 0.5.
    assert value(window) == pytest.approx((0.2 + 1.0 + 0.5) / 3)
    # Averaging the 13 games, each capped, would give 4/13: the short task would dominate.
    assert value(window) != pytest.approx((5 * 0.1 + 5 * 0.3 + 1.0 + 0.9 + 0.1) / 13)
    # A task with no game in the window is left out: the mean is over the tasks present.
    assert value(window[:10] + window[11:]) == pytest.approx((0.2 + 0.5) / 2)


def test_fitness_caps_each_task_mean_not_each_game():
    builder = experiments.get('impala_atari').builder(_config(game='breakout'))
    value = fitness.fitness(builder, 'breakout')
    assert value(_games(1, 'breakout', [1.6, 0.0])) == pytest.approx(0.8)   # not (1 + 0) / 2
    assert value(_games(1, 'breakout', [1.6, 0.6])) == 1.0                   # mean 1.1, capped
    assert value(_games(1, 'breakout', [0.0])) == 0.0


class _FakeLearner:
    """What a member needs of its learner (`pbt.LearnerHandle`), nothing trained."""

    def __init__(self):
        self.hyperparameters = {name: tf.Variable(1.0) for name in ADAPTED}

    def copy_from(self, checkpoint):
        raise AssertionError(f'no copy expected ({checkpoint})')

    def save_now(self):
        return None


def test_a_member_scores_its_last_window_of_games_together(tmp_path):
    """The member hands the fitness function the last `pbt_fitness_episodes` games as games
    (so that it can group them by task), not a score per game."""
    c = _config(pbt_fitness_episodes=3, pbt_burn_in_frames=10**9)
    windows = []

    def recording_fitness(games):
        windows.append([game['episode_return'] for game in games])
        return float(len(windows))
    dirs = [str(tmp_path / f'learner_{i}') for i in range(2)]
    for directory in dirs:
        os.makedirs(directory)
    member = pbt.member(c, str(tmp_path), dirs, 0, recording_fitness)
    learner = _FakeLearner()
    member.start(learner, frames=0, step=0)
    games = [{'actor': 0, 'env': 0, 'episode_return': float(i)} for i in range(5)]
    member.observe(learner, frames=10, step=1, games=games[:2])
    assert member.fitness() is None and not windows        # not a full window yet
    member.observe(learner, frames=20, step=2, games=games[2:])
    assert member.fitness() is not None
    assert windows[-1] == [2.0, 3.0, 4.0]
    assert pbt.read_state(str(tmp_path / 'pbt'), 0)['fitness'] is not None


def _write_lineage(run_dir, member, rows):
    os.makedirs(os.path.join(run_dir, 'pbt'), exist_ok=True)
    with open(pbt.lineage_path(os.path.join(run_dir, 'pbt'), member), 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=pbt.LINEAGE_FIELDS, extrasaction='ignore')
        writer.writeheader()
        writer.writerows(rows)


def test_ancestry_backtracks_through_copied_checkpoints(tmp_path):
    """Member 2 copied member 1 at its frame 300 (1's checkpoint of frame 290), which had
    copied member 0 at its frame 200 (0's of frame 180); member 2's copy from 0 at frame 100
    was overwritten by the later one."""
    run_dir = str(tmp_path)
    _write_lineage(run_dir, 0, [{'event': 'start', 'frames': 0}])
    _write_lineage(run_dir, 1, [{'event': 'start', 'frames': 0},
                                {'event': 'copy', 'frames': 200, 'donor': 0, 'donor_frames': 180},
                                {'event': 'keep', 'frames': 400, 'donor': 2}])
    _write_lineage(run_dir, 2, [{'event': 'start', 'frames': 0},
                                {'event': 'copy', 'frames': 100, 'donor': 0, 'donor_frames': 90},
                                {'event': 'copy', 'frames': 300, 'donor': 1,
                                 'donor_frames': 290}])
    assert pbt.ancestry(run_dir, 2) == [(0, 0, 180), (1, 200, 290), (2, 300, None)]
    assert pbt.ancestry(run_dir, 1) == [(0, 0, 180), (1, 200, None)]
    assert pbt.ancestry(run_dir, 0) == [(0, 0, None)]


def _checkpoint(path):
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name.endswith('VARIABLE_VALUE')}


def test_a_real_population_copies_and_perturbs(tmp_path):
    """Two IMPALA members on Pong, games of 400 frames, ready every 2 games after 800 frames.
    `pbt_copy_threshold=-1` makes any published fitness "better" and perturbation certain, so
    that the first comparison with a donor that has a fitness copies it within seconds: the
    comparison, copy and perturbation are the real ones."""
    run_dir = str(tmp_path / 'run')
    launcher = subprocess.Popen(
        [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
         f'--run_dir={run_dir}', '--config.pbt_population=2',
         '--config.pbt_burn_in_frames=800', '--config.pbt_fitness_episodes=2',
         '--config.pbt_copy_threshold=-1', '--config.pbt_perturb_probability=1',
         '--config.max_episode_frames=400', '--config.total_frames=1000000'],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pbt_dir = os.path.join(run_dir, 'pbt')

    def copies():
        return [row for i in range(2) for row in pbt.read_lineage(pbt.lineage_path(pbt_dir, i))
                if row['event'] == 'copy']

    try:
        wait_for(copies, 'a member to copy the other')
        (copy, *_) = copies()
        # Read at once, before either member checkpoints three more times and removes them.
        donor_state = _checkpoint(copy['donor_checkpoint'])
        member_state = _checkpoint(copy['checkpoint'])
        member, donor = int(copy['member']), int(copy['donor'])
        member_log = os.path.join(run_dir, f'learner_{member}', 'logs', 'learner.csv')

        def frames_logged():
            with open(member_log, newline='') as f:
                return [int(row['frames']) for row in csv.DictReader(f)]
        wait_for(lambda: max(frames_logged()) > int(copy['frames']),
                 'the member to train on after the copy')
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=120)
    finally:
        launcher.kill()

    # The copy: every weight and optimizer slot is the donor checkpoint's; step and frames
    # stay the member's own; each adapted hyperparameter is the donor's times 1.2 or 1/1.2.
    assert donor != member
    assert member_state.keys() == donor_state.keys()
    hyper = {name: f'learner/hyperparameters/{name}/.ATTRIBUTES/VARIABLE_VALUE'
             for name in ADAPTED}
    counters = {f'learner/{name}/.ATTRIBUTES/VARIABLE_VALUE' for name in ('step', 'frames')}
    for name, value in donor_state.items():
        if name not in set(hyper.values()) | counters | {'save_counter/.ATTRIBUTES/'
                                                        'VARIABLE_VALUE'}:
            np.testing.assert_array_equal(member_state[name], value, err_msg=name)
    assert int(member_state['learner/frames/.ATTRIBUTES/VARIABLE_VALUE']) == int(copy['frames'])
    assert int(donor_state['learner/frames/.ATTRIBUTES/VARIABLE_VALUE']) == int(
        copy['donor_frames'])
    assert sorted(p.split('*')[0] for p in copy['perturbed'].split()) == sorted(ADAPTED)
    for name, key in hyper.items():
        ratio = member_state[key] / donor_state[key]
        assert np.isclose(ratio, 1.2, rtol=1e-5) or np.isclose(ratio, 1 / 1.2, rtol=1e-5), name
        np.testing.assert_allclose(float(copy[name]), member_state[key], rtol=1e-6)

    # The lineage starts from the member's table D.1 draw and ends with the values its
    # config.json holds; the line says what happened.
    start, *_, last = pbt.read_lineage(pbt.lineage_path(pbt_dir, member))
    with open(os.path.join(run_dir, f'learner_{member}', 'config.json')) as f:
        saved = json.load(f)
    for name in ADAPTED:
        np.testing.assert_allclose(saved[name], float(last[name]), rtol=1e-6)
    c = _config(pbt_copy_threshold=-1.0)
    c = impala_config.check(c)
    drawn = experiments.get('impala_atari').sweeps.member_config(c, member)
    assert start['event'] == 'start'
    for name in ('learning_rate', 'entropy_cost', 'rmsprop_epsilon'):
        np.testing.assert_allclose(float(start[name]), drawn[name], rtol=1e-6)
    assert f'[learner_{member}] PBT at frame {int(copy["frames"]):,}: fitness' in output, output
    assert f'copied learner_{donor} (' in output
    assert float(copy['donor_fitness']) > float(copy['fitness']) - 1.0   # the comparison
    assert set(pbt.read_state(pbt_dir, donor)) >= {'fitness', 'frames', 'hyperparameters'}
