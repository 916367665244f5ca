"""The Ape-X launchers end to end: real processes, a real Reverb server, real dm_control."""
import csv
import json
import os
import signal
import subprocess
import sys

import reverb

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import kill
from launch_processes import resumed_frames
from launch_processes import wait_for
from reverb_tables import tables


def test_launcher_runs_a_tiny_dpg_experiment_at_its_samples_per_insert(tmp_path):
    """A tiny run, evaluated at its end. With `samples_per_insert` (0, the paper's, is the
    resume test's below), past the minimum size the learner samples that many transitions per
    transition the actors insert, within the table's tolerance (reverb_tables/tables.py)."""
    run_dir = tmp_path / 'run'
    result = subprocess.run(
        [sys.executable, '-m', 'launch.apex_dpg_control', '--task=cartpole_swingup',
         '--preset=tiny', f'--run_dir={run_dir}', '--config.total_frames=1500',
         '--config.samples_per_insert=6'],
        cwd=ROOT, capture_output=True, text=True, timeout=240, env=ENV)
    assert result.returncode == 0, result.stderr[-2000:]
    with open(run_dir / 'evaluation.csv') as f:
        rows = list(csv.DictReader(f))
    assert rows and rows[0]['game'] == 'cartpole_swingup'
    assert rows[0]['protocol'] == 'apex_control_noiseless'
    assert int(rows[0]['episode_frames']) == 1000     # the task's own time limit

    with open(run_dir / 'config.json') as f:
        config = json.load(f)
    with open(run_dir / 'logs' / 'learner.csv') as f:
        last = list(csv.DictReader(f))[-1]
    sampled = int(last['step']) * config['batch_size']
    inserted = int(last['frames']) - config['min_replay_size']
    tolerance = (tables.TOLERANCE_OF_MIN_SIZE * config['min_replay_size']
                 + 2 * config['transition_batch_size'])
    assert abs(sampled / 6 - inserted) <= tolerance, (sampled, inserted)


def _replay_size(run_dir):
    """Items in the prioritized table of the run's live replay server."""
    (replay,) = children(run_dir, 'replay')
    (address,) = [a.split('=', 1)[1] for a in replay.info['cmdline']
                  if a.startswith('--replay_address=')]
    return reverb.Client(address).server_info(timeout=60)[tables.PRIORITIZED].current_size


def test_learner_and_run_resume_with_replay_intact(tmp_path):
    """Issue 4: a killed learner resumes from its checkpoint; a killed replay server comes back
    from its checkpoint (issue 12); a stopped run restores replay."""
    run_dir = str(tmp_path / 'run')
    program = [sys.executable, '-m', 'launch.apex_dpg_control', '--task=cartpole_swingup',
               '--preset=tiny', f'--run_dir={run_dir}', '--config.checkpoint_interval_s=2']
    replay_checkpoints = os.path.join(run_dir, 'replay_checkpoints')
    launcher = subprocess.Popen(program + ['--config.total_frames=10000000'], cwd=ROOT, env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # The learner can checkpoint before the replay server has made its directory.
        wait_for(lambda: checkpoint_frames(run_dir) > 0 and os.path.isdir(replay_checkpoints)
                 and os.listdir(replay_checkpoints), 'a learner and a replay checkpoint')
        killed_at = checkpoint_frames(run_dir)
        kill(children(run_dir, 'learner'))
        wait_for(lambda: checkpoint_frames(run_dir) > killed_at, 'the restarted learner')
        # The replay server: restarted on its address from its newest checkpoint; the learner
        # and actor reconnect without a restart.
        kill(children(run_dir, 'replay'))
        replay_killed_at = checkpoint_frames(run_dir)
        wait_for(lambda: checkpoint_frames(run_dir) > replay_killed_at,
                 'training to go on after the replay server restarted')
        size_before_stop = _replay_size(run_dir)
        launcher.send_signal(signal.SIGTERM)     # `kill` stops a run as Ctrl-C does
        output, _ = launcher.communicate(timeout=120)
    finally:
        launcher.kill()
    assert 'learner exited with code -9; restarting it, resuming' in output, output
    resumed = resumed_frames(output)
    assert len(resumed) == 1 and resumed[0] >= killed_at > 0, output
    assert 'replay exited with code -9; restarting it' in output, output
    assert output.count('learner exited') == 1, output
    assert f'resume with the same command and --run_dir={run_dir}' in output, output
    assert not children(run_dir, 'replay')

    # The same command with a larger budget: the learner resumes at its last checkpoint and the
    # replay server starts with the table it checkpointed with it, not empty.
    stopped_at = checkpoint_frames(run_dir)
    more = subprocess.run(program + [f'--config.total_frames={stopped_at + 200}'], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=240)
    assert more.returncode == 0, more.stdout + more.stderr
    assert f'at frame {stopped_at:,}' in more.stdout, more.stdout
    with open(os.path.join(run_dir, 'logs', 'replay.log')) as f:
        restored = [line for line in f if line.startswith('[replay] checkpoints in')]
    assert len(restored) == 3, restored       # the start, the restart, the resumed run
    sizes = [int(line.split(f' {tables.PRIORITIZED}=', 1)[1].split()[0]) for line in restored]
    assert sizes[1] > 0, restored               # the killed server came back with its items
    assert sizes[2] >= size_before_stop > 0, restored
