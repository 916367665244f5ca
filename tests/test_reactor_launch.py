"""Reactor end to end: real processes, a real Reverb server, real Pong. Losses, priorities and
parameters change; a killed learner resumes with the replay of its checkpoint; a killed replay
server comes back from its checkpoint under the running learner; a stopped run resumes with its
replay and its priority bookkeeping."""
import csv
import os
import re
import signal
import subprocess
import sys

import numpy as np
import tensorflow as tf

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import kill
from launch_processes import resumed_frames
from launch_processes import wait_for
from agents.reactor import lazy_priorities


def _restored_sizes(run_dir):
    """Items of the lazy prioritized table each replay-server start restored."""
    with open(os.path.join(run_dir, 'logs', 'replay.log')) as f:
        return [int(n) for n in re.findall(rf' {lazy_priorities.LAZY_PRIORITIZED}=(\d+)',
                                           f.read())]


def _trained_past_checkpoint(run_dir):
    """Whether the learner logged an update after its newest checkpoint: its bookkeeping has
    registered sequences and written priorities that checkpoint does not know."""
    path = os.path.join(run_dir, 'logs', 'learner.csv')
    if not os.path.exists(path):
        return False
    with open(path) as f:
        frames = [row['frames'] for row in csv.DictReader(f)]
    logged = int(frames[-1]) if frames and frames[-1] and frames[-1].isdigit() else 0
    return logged > checkpoint_frames(run_dir)


def _policy_head_weights(run_dir, which):
    state = tf.train.get_checkpoint_state(os.path.join(run_dir, 'checkpoints'))
    path = state.all_model_checkpoint_paths[which]
    names = [n for n, _ in tf.train.list_variables(path)
             if n.startswith('learner/network/policy_head') and n.endswith('VARIABLE_VALUE')]
    return [tf.train.load_checkpoint(path).get_tensor(n) for n in sorted(names)]


def test_reactor_trains_resumes_and_keeps_its_replay(tmp_path):
    run_dir = str(tmp_path / 'run')
    program = [sys.executable, '-m', 'launch.reactor_atari', '--game=pong', '--preset=tiny',
               f'--run_dir={run_dir}', '--config.checkpoint_interval_s=5']
    launcher = subprocess.Popen(program + ['--config.total_frames=10000000'], cwd=ROOT, env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        replay_checkpoints = os.path.join(run_dir, 'replay_checkpoints')
        wait_for(lambda: checkpoint_frames(run_dir) > 0 and os.path.isdir(replay_checkpoints)
                 and os.listdir(replay_checkpoints), 'a learner and a replay checkpoint')
        first = checkpoint_frames(run_dir)
        wait_for(lambda: checkpoint_frames(run_dir) > first, 'a second checkpoint')
        wait_for(lambda: _trained_past_checkpoint(run_dir), 'the learner to train past it')
        killed_at = checkpoint_frames(run_dir)
        kill(children(run_dir, 'learner'))
        wait_for(lambda: checkpoint_frames(run_dir) > killed_at, 'the restarted learner')
        wait_for(lambda: _trained_past_checkpoint(run_dir), 'the learner to train past it')
        # Now the replay server: it comes back from its newest checkpoint under the running
        # learner, which takes that checkpoint's snapshot of its bookkeeping where it had moved
        # on past it, without a restart (tests/test_lazy_priorities.py tests the reload).
        kill(children(run_dir, 'replay'))
        replay_killed_at = checkpoint_frames(run_dir)
        wait_for(lambda: checkpoint_frames(run_dir) > replay_killed_at,
                 'training to go on after the replay server restarted')
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=120)
    finally:
        launcher.kill()
    assert 'learner exited with code -9' in output, output
    assert "the replay server ran on past the learner's checkpoint" in output, output
    resumed = resumed_frames(output)
    assert len(resumed) == 1 and resumed[0] >= killed_at > 0, output
    assert 'replay exited with code -9; restarting it' in output, output
    after_replay_kill = output.split('replay exited with code -9', 1)[1]
    assert 'learner exited' not in after_replay_kill, output      # no one else restarted
    # The learner's bookkeeping belongs to its checkpoint: the replay server went back to the
    # same checkpoint with it, restoring the sequences it held then; after its own kill, to
    # its newest checkpoint.
    sizes = _restored_sizes(run_dir)
    assert len(sizes) == 3 and sizes[0] == 0 and sizes[1] > 0 and sizes[2] > 0, sizes

    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        rows = list(csv.DictReader(f))
    assert len({row['loss'] for row in rows}) > 2
    assert len({row['mean_priority'] for row in rows}) > 2
    assert all(np.isfinite(float(row['loss'])) for row in rows)
    for old, new in zip(_policy_head_weights(run_dir, 0), _policy_head_weights(run_dir, -1)):
        assert not np.array_equal(old, new)

    # The same command with a larger budget: learner and replay (tables and bookkeeping) come
    # back from their checkpoint, training finishes and the run is evaluated.
    stopped_at = checkpoint_frames(run_dir)
    more = subprocess.run(program + [f'--config.total_frames={stopped_at + 400}'], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert more.returncode == 0, more.stdout + more.stderr
    assert f'at frame {stopped_at:,}' in more.stdout, more.stdout
    assert _restored_sizes(run_dir)[-1] > 0
    assert 'ReplayDivergedError' not in more.stdout + more.stderr
    assert '| pong |' in more.stdout, more.stdout
