"""Checkpoints that cannot be half-written: a learner killed while it writes, or a checkpoint
left truncated, resumes from the newest one that reads back whole; a run directory made
unwritable mid-run costs one line per failed save while training goes on, and the final save
failing stops the learner with its last good checkpoint kept."""
import contextlib
import csv
import ctypes
import glob
import io
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import learner as learner_lib
from agents.impala import config as impala_config
from launch import experiments
from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import wait_for
from tiny_learner import batch
from tiny_learner import learner


def _restore(builder, address, run_dir):
    """A fresh learner's restore: its state and what it printed."""
    state, fresh = learner(builder, address, run_dir, [])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            fresh.restore()
        finally:
            fresh.release_lock()   # its process ends here
    return state, printed.getvalue()


def test_resume_skips_unreadable_checkpoints_for_the_newest_whole_one(tmp_path):
    c = impala_config.tiny(impala_config.ImpalaAtari())
    c = c.replace(game='pong', batch_size=2)
    builder = experiments.get('impala_atari').builder(c)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    run_dir = str(tmp_path)
    rng = np.random.default_rng(0)
    _, first = learner(builder, address, run_dir, [batch(builder, rng, 1.0) for _ in range(3)],
                       checkpoint_interval_s=0.0)
    first.run(max_steps=3)                   # a checkpoint after each step: frames 40, 80, 120
    first.release_lock()
    paths = tf.train.get_checkpoint_state(os.path.join(run_dir, 'checkpoints'))
    paths = list(paths.all_model_checkpoint_paths)
    assert [p.rsplit('-', 1)[1] for p in paths] == ['40', '80', '120']

    # The newest truncated (a full disk, a crash before the data reached the disk); the one
    # before without its index (a write cut short): both are skipped, one line each.
    (data,) = glob.glob(paths[2] + '.data-*')
    with open(data, 'r+b') as f:
        f.truncate(os.path.getsize(data) // 2)
    os.remove(paths[1] + '.index')
    state, printed = _restore(builder, address, run_dir)
    warnings = [line for line in printed.splitlines() if 'is unreadable' in line]
    assert [w.split()[3] for w in warnings] == [paths[2], paths[1]], printed
    assert f'resumed from {paths[0]} at frame 40' in printed, printed
    assert int(state.step.numpy()) == 1 and int(state.frames.numpy()) == 40

    # None readable: a one-line error, not a silent start from scratch.
    os.remove(paths[0] + '.index')
    with pytest.raises(learner_lib.CheckpointError, match='none of the checkpoints in'):
        _restore(builder, address, run_dir)
    server.stop()


def _without_permission_override():
    """The run's processes obey file permissions even as root (no CAP_DAC_OVERRIDE)."""
    if ctypes.CDLL('libc.so.6', use_errno=True).prctl(24, 1, 0, 0, 0):   # PR_CAPBSET_DROP
        raise OSError(ctypes.get_errno(), 'cannot drop CAP_DAC_OVERRIDE')


def _learner_frames(run_dir):
    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        return [int(row['frames']) for row in csv.DictReader(f)]


def _saves_more(run_dir):
    before = checkpoint_frames(run_dir)
    wait_for(lambda: checkpoint_frames(run_dir) > before + 200, 'the learner to save')


def test_killed_mid_write_then_unwritable_run_keeps_the_last_good_checkpoint(tmp_path):
    run_dir = str(tmp_path / 'run')
    checkpoints = os.path.join(run_dir, 'checkpoints')
    launcher = subprocess.Popen(
        [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
         f'--run_dir={run_dir}', '--config.total_frames=6000',
         '--config.checkpoint_interval_s=0'],     # a checkpoint write after every update
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=_without_permission_override)
    try:
        for _ in range(2):       # killed while it writes checkpoints back to back
            _saves_more(run_dir)
            for process in children(run_dir, 'learner'):
                process.send_signal(signal.SIGKILL)
        _saves_more(run_dir)
        for directory in (run_dir, checkpoints):
            os.chmod(directory, 0o555)
        last_good = checkpoint_frames(run_dir)
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
        for directory in (run_dir, checkpoints):
            os.chmod(directory, 0o755)
    assert output.count('learner exited with code -9; restarting it') == 2, output
    resumed = [line for line in output.splitlines() if line.startswith('[learner] resumed')]
    assert len(resumed) == 2, output
    # Unwritable: each save is one line and training goes on to the budget; the final save
    # failing stops the run (exit 2, no restart) with the last good checkpoint kept.
    assert 'warning: could not write its checkpoint at frame' in output, output
    assert _learner_frames(run_dir)[-1] >= 6000
    assert launcher.returncode == 2, output
    assert 'learner stopped:' in output and 'stopped, newest checkpoint: ' in output, output
    assert checkpoint_frames(run_dir) == last_good < 6000
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(checkpoints))
    assert int(reader.get_tensor('learner/frames/.ATTRIBUTES/VARIABLE_VALUE')) == last_good
