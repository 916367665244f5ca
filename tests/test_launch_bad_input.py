"""The runtime's bad inputs: one line each, exit code 2, before any process starts (or, for a
second writer on a run directory, before it writes anything)."""
import json
import os
import signal
import subprocess
import sys

import pytest

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import wait_for


def _program(*args):
    game = [] if any(a.startswith('--game=') for a in args) else ['--game=pong']
    return [sys.executable, '-m', 'launch.impala_atari', *game, '--preset=tiny', *args]


def _run(*args, timeout=120):
    return subprocess.run(_program(*args), cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize('args, message', [
    (['--role=learner', '--learner_id=2', '--config.num_learners=2',
      '--replay_address=localhost:1'],
     'error: --learner_id=2 is out of range: this run has --config.num_learners=2'),
    (['--role=actor', '--actor_id=1', '--replay_address=localhost:1'],
     'error: --actor_id=1 is out of range'),
    (['--config.replay_proportion=0.1', '--config.batch_size=4'],
     'error: --config.replay_proportion=0.1 of --config.batch_size=4 is 0.4 trajectories'),
    (['--config.replay_proportion=1.0'], 'error: --config.replay_proportion must be in [0, 1)'),
    (['--config.core=gru'], "error: --config.core must be one of 'feed_forward', 'lstm'"),
    (['--config.num_learners=0'], 'error: --config.num_learners must be >= 1, got 0'),
])
def test_bad_runtime_input_gives_one_line_error(args, message, tmp_path):
    result = _run(f'--run_dir={tmp_path}/run', *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert not os.path.exists(tmp_path / 'run' / 'config.json')


@pytest.mark.parametrize('args, message', [
    (['--config.replay_proportion=1.0'], 'error: --config.replay_proportion must be in [0, 1)'),
    (['--config.trust_region_threshold=-0.1'],
     'error: --config.trust_region_threshold must be > 0, got -0.1'),
    (['--sweep=learning_rte=1e-4,2e-4'],
     "error: sweep 'learning_rte=1e-4,2e-4' names 'learning_rte', which is not a field a sweep "
     "can vary (did you mean: learning_rate?"),
    (['--sweep=large'], "error: unknown sweep 'large': name one of paper, quick"),
    (['--config.replay_capacity_observations=5'],
     'error: --config.replay_capacity_observations=5 holds 1 trajectories, fewer than one '
     'replay batch (2)'),
    (['--sweep=learning_rate=fast'], "error: sweep value 'fast' for 'learning_rate' is not a"),
])
def test_bad_laser_input_gives_one_line_error(args, message, tmp_path):
    result = subprocess.run(
        [sys.executable, '-m', 'launch.laser_atari', '--preset=tiny', f'--run_dir={tmp_path}/run',
         *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert not os.path.exists(tmp_path / 'run' / 'config.json')


def test_a_sweep_for_an_experiment_without_sweeps_is_refused(tmp_path):
    result = _run(f'--run_dir={tmp_path}/run', '--sweep=paper')
    assert result.returncode == 2
    assert result.stderr.strip() == 'error: --sweep: impala_atari runs no sweeps', result.stderr


def test_a_run_directory_in_use_is_refused(tmp_path):
    """A second launcher, or a second learner with the same id, on one run directory."""
    run_dir = str(tmp_path / 'run')
    launcher = subprocess.Popen(
        _program(f'--run_dir={run_dir}', '--config.total_frames=10000000'), cwd=ROOT, env=ENV,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: checkpoint_frames(run_dir) > 0 or children(run_dir, 'learner'),
                 'the first run to start')
        second = _run(f'--run_dir={run_dir}')
        (replay,) = children(run_dir, 'replay')
        address = [a for a in replay.info['cmdline'] if a.startswith('--replay_address=')][0]
        wait_for(lambda: os.path.exists(os.path.join(run_dir, 'checkpoints', '.lock')),
                 'the learner to hold its checkpoints')
        learner = _run(f'--run_dir={run_dir}', '--role=learner', address, timeout=180)
        launcher.send_signal(signal.SIGINT)
        launcher.communicate(timeout=120)
    finally:
        launcher.kill()
    assert second.returncode == 2
    assert second.stderr.strip().splitlines() == [
        f'error: {run_dir} is in use by another run: wait for it to end, or choose another '
        f'--run_dir'], second.stderr
    assert learner.returncode == 2
    assert learner.stderr.strip().splitlines()[-1] == (
        f'error: {run_dir}/checkpoints is in use by another learner: give each learner of a '
        f'run its own --learner_id'), learner.stderr


def test_unknown_config_field_is_a_one_line_error(tmp_path):
    """Ape-X's networks are feed-forward only: it has no `core` to make recurrent."""
    result = subprocess.run(
        [sys.executable, '-m', 'launch.apex_dqn_atari', '--preset=tiny',
         f'--run_dir={tmp_path}/run', '--config.core=lstm'],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --config.core: apex_dqn_atari has no field 'core'"], result.stderr
    misspelt = _run(f'--run_dir={tmp_path}/run', '--config.replay_proportio=0.5')
    assert misspelt.stderr.strip().splitlines() == [
        "error: --config.replay_proportio: impala_atari has no field 'replay_proportio'; "
        "did you mean: replay_proportion?"], misspelt.stderr


def test_a_resumed_run_keeps_its_network(tmp_path):
    run_dir = tmp_path / 'run'
    run_dir.mkdir()
    saved = {'experiment': 'impala_atari', 'game': 'pong', 'core': 'feed_forward',
             'total_frames': 100}   # an older run's config: later fields take paper values
    (run_dir / 'config.json').write_text(json.dumps(saved))
    for args, message in [
            (['--config.core=lstm'], "error: --config.core=lstm cannot change when resuming: "
                                     f"{run_dir} was trained with core='feed_forward'"),
            (['--game=Breakout'], 'error: --config.game=breakout cannot change when resuming')]:
        result = _run(f'--run_dir={run_dir}', *args)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(message), result.stderr


def test_an_unwritable_run_directory_is_a_one_line_error(tmp_path):
    blocker = tmp_path / 'a_file'
    blocker.write_text('')
    result = _run(f'--run_dir={blocker}/run')
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f'error: cannot write to {blocker}/run: Not a directory; choose a writable --run_dir'
    ], result.stderr
