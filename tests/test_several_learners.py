"""Several learners in one program: two IMPALA learners with the LSTM core, private queues and
one shared replay table train side by side on one Reverb server; each checkpoints and resumes
on its own."""
import csv
import os
import subprocess
import sys

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import kill
from launch_processes import wait_for


def _program(*args):
    game = [] if any(a.startswith('--game=') for a in args) else ['--game=pong']
    return [sys.executable, '-m', 'launch.impala_atari', *game, '--preset=tiny', *args]


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
        kill(_learner_process(run_dir, 1))
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output
    assert 'learner_1 exited with code -9; restarting it, resuming' in output, output
    assert 'learner_0 exited' not in output
    resumed = [line for line in output.splitlines() if ' resumed from ' in line]
    assert len(resumed) == 1 and resumed[0].startswith('[learner_1]'), output
    assert 'learner_1/checkpoints' in resumed[0], output
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
