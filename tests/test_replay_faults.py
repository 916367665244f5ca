"""A replay server killed mid-training: the launcher restarts it on the same address, actors and
learner reconnect, and the run finishes its frame budget with the learner's frame count going on
(never back); LASER's replay comes back as its newest Reverb checkpoint held it. The other
agents' replay kills ride along their end-to-end runs: IMPALA's queue in tests/test_launch.py,
Reactor's lazy tables in tests/test_reactor_launch.py, Ape-X's replay in
tests/test_apex_launch.py."""
import csv
import os
import shutil
import signal
import subprocess
import sys

import tensorflow as tf
from reverb.cc import schema_pb2

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import wait_for
from reverb_tables import tables


def _complete(directory):
    """The Reverb checkpoints in `directory` that were written whole (a DONE file), oldest
    first."""
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    return [os.path.join(directory, n) for n in names
            if os.path.exists(os.path.join(directory, n, 'DONE'))]


def _replay_keys(checkpoint):
    """The keys of the replay table's items in a Reverb checkpoint."""
    records = tf.data.TFRecordDataset(os.path.join(checkpoint, 'items.tfrecord'),
                                      compression_type='ZLIB')
    items = (schema_pb2.PrioritizedItem.FromString(record.numpy()) for record in records)
    return {item.key for item in items if item.table == tables.REPLAY}


def _newest_holds_episodes(directory):
    """Whether the newest whole Reverb checkpoint in `directory` holds replay items; False when
    the server, which keeps only its newest, deleted it for a newer one while it was read."""
    checkpoints = _complete(directory)
    try:
        return bool(checkpoints) and bool(_replay_keys(checkpoints[-1]))
    except tf.errors.NotFoundError:
        return False


def test_killed_laser_replay_server_comes_back_from_its_checkpoint(tmp_path):
    run_dir = str(tmp_path / 'run')
    replay_checkpoints = os.path.join(run_dir, 'replay_checkpoints')
    total = 4_000   # LASER: at most 200 unrolls, fewer than the replay's 400: none evicted
    launcher = subprocess.Popen(
        [sys.executable, '-m', 'launch.laser_atari', '--game=breakout', '--preset=tiny',
         f'--run_dir={run_dir}', f'--config.total_frames={total}',
         '--config.checkpoint_interval_s=2'],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: (checkpoint_frames(run_dir) > 0
                          and _newest_holds_episodes(replay_checkpoints)),
                 'a first learner checkpoint and a replay checkpoint holding episodes')
        for replay in children(run_dir, 'replay'):
            replay.send_signal(signal.SIGKILL)
        # What the restarted server restores: nothing writes replay checkpoints until it is up.
        saved = shutil.copytree(replay_checkpoints, tmp_path / 'saved')
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output
    assert 'replay exited with code -9; restarting it' in output, output
    assert 'learner exited' not in output and 'resumed from' not in output, output
    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        frames = [int(row['frames']) for row in csv.DictReader(f)]
    assert frames == sorted(frames) and frames[-1] >= total     # on from where it was
    assert checkpoint_frames(run_dir) >= total
    restored = _replay_keys(_complete(saved)[-1])
    assert restored and restored <= _replay_keys(_complete(replay_checkpoints)[-1])
