"""Several learners in one program: two IMPALA learners with the LSTM core, private queues and
one shared replay table train side by side on one Reverb server; each checkpoints and resumes
on its own. Also the one-line errors of the runtime's bad inputs."""
import csv
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
    return [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny', *args]


def _learner_process(run_dir, learner_id):
    return [p for p in children(run_dir, 'learner')
            if f'--learner_id={learner_id}' in p.info['cmdline']]


def test_two_learners_share_replay_and_resume_on_their_own(tmp_path):
    run_dir = str(tmp_path / 'run')
    learner_dirs = [os.path.join(run_dir, f'learner_{i}') for i in range(2)]
    launcher = subprocess.Popen(
        _program(f'--run_dir={run_dir}', '--config.num_learners=2', '--config.core=lstm',
                 '--config.replay_proportion=0.5', '--config.total_frames=3000',
                 '--config.checkpoint_interval_s=2'),
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: checkpoint_frames(learner_dirs[1]) > 0, 'learner 1 to checkpoint')
        killed_at = checkpoint_frames(learner_dirs[1])
        for process in _learner_process(run_dir, 1):
            process.send_signal(signal.SIGKILL)
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output
    assert 'learner_1 exited with code -9; restarting it, resuming' in output, output
    assert 'learner_0 exited' not in output
    resumed = [line for line in output.splitlines() if line.startswith('[learner] resumed')]
    assert len(resumed) == 1 and 'learner_1/checkpoints' in resumed[0], output
    assert int(resumed[0].rsplit(' ', 1)[1].replace(',', '')) >= killed_at > 0

    with open(os.path.join(run_dir, 'logs', 'replay.log')) as f:
        served = f.read()
    assert 'queue, queue_1, replay, variables, episode_stats, variables_1' in served, served
    for learner_dir in learner_dirs:
        assert checkpoint_frames(learner_dir) >= 3000
        with open(os.path.join(learner_dir, 'logs', 'learner.csv')) as f:
            assert len(list(csv.DictReader(f))) > 2
        with open(os.path.join(learner_dir, 'evaluation.csv')) as f:
            assert list(csv.DictReader(f))[0]['game'] == 'pong'
    assert not os.path.exists(os.path.join(run_dir, 'checkpoints'))


def _run(*args, timeout=120):
    return subprocess.run(_program(*args), cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize('args, message', [
    (['--role=learner', '--learner_id=2', '--config.num_learners=2',
      '--replay_address=localhost:1'],
     'error: --learner_id=2 is out of range: this run has --config.num_learners=2'),
    (['--role=actor', '--actor_id=1', '--replay_address=localhost:1'],
     'error: --actor_id=1 is out of range'),
    (['--config.replay_proportion=0.3', '--config.batch_size=4'],
     'error: --config.replay_proportion=0.3 of --config.batch_size=4 is 1.2 trajectories'),
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
