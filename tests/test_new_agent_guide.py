"""docs/architecture.md's "Where a new agent plugs in", followed (issue 19): an agent written
in the test tree through the documented seams alone (tests/guide_agent: one-step actor-critic,
Sutton and Barto sec. 13.5, on Breakout) registers, launches, trains, checkpoints, resumes and
evaluates. A step missing from the guide shows up here as a failure."""
import ast
import csv
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from agents.core.config_checks import ConfigError
from launch import experiments
from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from tests.guide_agent import config as guide_config
from tests.guide_agent import learning

AGENT = pathlib.Path(ROOT, 'tests', 'guide_agent')
PROGRAM = 'tests.guide_agent.program'


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_one_step_loss_matches_numpy_across_an_episode_end_and_a_time_limit():
    """Step 1's reference: item 0 a plain step, item 1 the last step of a game (discount 0:
    no bootstrap), item 2 the mask-0 step of a time limit's final observation (nothing
    learnt); rewards clipped to [-1, 1]."""
    rng = np.random.default_rng(0)
    config = guide_config.GuideAtari()
    logits = rng.normal(size=(2, 3, 4)).astype(np.float32)
    values = rng.normal(size=(2, 3)).astype(np.float32)
    actions = np.array([[1, 3, 0], [2, 0, 1]], np.int32)
    rewards = np.array([[0.5, 3.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    discounts = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], np.float32)
    mask = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], np.float32)

    values_t = tf.constant(values)
    with tf.GradientTape() as tape:
        tape.watch(values_t)
        loss, metrics = learning.one_step_loss(
            tf.constant(logits), values_t,
            dict(action=actions, reward=rewards, discount=discounts, mask=mask),
            discount=config.discount, reward_clip=config.reward_clip,
            baseline_cost=config.baseline_cost, entropy_cost=config.entropy_cost)
    gradient = tape.gradient(loss, values_t).numpy()

    delta = mask[0] * (np.clip(rewards[0], -1, 1)
                       + config.discount * discounts[0] * values[1] - values[0])
    log_pi = _log_softmax(logits[0])
    pg = -np.sum(log_pi[np.arange(3), actions[0]] * delta)
    baseline = 0.5 * np.sum(delta ** 2)
    entropy = np.sum(mask[0] * np.sum(np.exp(log_pi) * log_pi, -1))
    np.testing.assert_allclose(float(metrics['policy_gradient_loss']), pg, rtol=1e-5)
    np.testing.assert_allclose(float(metrics['baseline_loss']), baseline, rtol=1e-5)
    np.testing.assert_allclose(float(metrics['entropy_loss']), entropy, rtol=1e-5)
    np.testing.assert_allclose(
        float(loss), pg + config.baseline_cost * baseline + config.entropy_cost * entropy,
        rtol=1e-5)
    # The target is held constant: gradients reach V(o_t) alone, -baseline_cost * delta.
    np.testing.assert_allclose(gradient, [-config.baseline_cost * delta, np.zeros(3)],
                               rtol=1e-5, atol=1e-7)


def test_a_registered_name_is_refused_in_one_line():
    entry = experiments.REGISTRY['impala_atari']
    with pytest.raises(ConfigError, match="experiment 'impala_atari' is already registered"):
        experiments.register('impala_atari', entry)


def test_the_agent_imports_only_the_seams_the_guide_names():
    """The "Layers" row of an agent (docs/architecture.md), and `launch` in its program only."""
    row = {'agents.core', 'agents.ops', 'agents.networks', 'environments', 'reverb_tables',
           'tests.guide_agent'}
    for path in AGENT.glob('*.py'):
        tree = ast.parse(path.read_text())
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        allowed = row | {'launch'} if path.name == 'program.py' else row
        project = {n for n in names if n.split('.')[0] in
                   ('agents', 'environments', 'reverb_tables', 'launch', 'tests')}
        assert all(any(n == a or n.startswith(a + '.') for a in allowed) for n in project), (
            path.name, sorted(project))


def _launch(run_dir, *flags):
    return subprocess.run(
        [sys.executable, '-m', PROGRAM, '--game=breakout', '--preset=tiny',
         f'--run_dir={run_dir}', *flags],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_the_agent_registers_launches_trains_checkpoints_resumes_and_evaluates(tmp_path):
    run_dir = str(tmp_path / 'run')
    first = _launch(run_dir)
    assert first.returncode == 0, first.stdout + first.stderr
    learner = _rows(os.path.join(run_dir, 'logs', 'learner.csv'))
    assert int(learner[-1]['frames']) >= 4_000 and int(learner[-1]['step']) > 0
    assert len(_rows(os.path.join(run_dir, 'logs', 'episodes.csv'))) > 0   # games finished
    assert checkpoint_frames(run_dir) >= 4_000
    # Evaluated under its protocol; no paper table to compare with (step 8), said in one line.
    evaluation = _rows(os.path.join(run_dir, 'evaluation.csv'))
    assert [(r['game'], r['protocol']) for r in evaluation] == [('breakout', 'atari_noop')]
    assert "no default paper table for experiment 'guide_actor_critic_atari'" in first.stdout

    more = _launch(run_dir, '--config.total_frames=5000')
    assert more.returncode == 0, more.stdout + more.stderr
    resumed = [line for line in more.stdout.splitlines()
               if line.startswith('[learner] resumed from')]
    assert resumed and int(resumed[0].rsplit(' ', 1)[1].replace(',', '')) >= 4_000, more.stdout
    assert int(_rows(os.path.join(run_dir, 'logs', 'learner.csv'))[-1]['frames']) >= 5_000
    assert checkpoint_frames(run_dir) >= 5_000
    evaluation = _rows(os.path.join(run_dir, 'evaluation.csv'))
    assert len(evaluation) == 2 and int(evaluation[-1]['checkpoint_frames']) >= 5_000
