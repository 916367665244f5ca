"""The launcher end to end: real processes, a real Reverb server, real ALE, real training.

One tiny run trains for a few hundred learner steps while we kill an actor, the learner and
then the replay server: the actor is restarted, the learner resumes from its checkpoint with its
frame count, the replay server (IMPALA's queue) comes back on its address and the others
reconnect, and the run finishes and evaluates. Another, while it trains, refuses a second
writer on its directory and then stops on Ctrl-C.
"""
import csv
import os
import signal
import subprocess
import sys

import tensorflow as tf

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import kill
from launch_processes import resumed_frames
from launch_processes import wait_for


def _program(*args):
    return [sys.executable, '-m', 'launch.impala_atari', *args]


def _run(*args, timeout=120):
    return subprocess.run(_program(*args), cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def _network_weights(run_dir, which):
    """The learner network's variables stored in a checkpoint (0 = oldest, -1 = newest)."""
    state = tf.train.get_checkpoint_state(os.path.join(run_dir, 'checkpoints'))
    path = state.all_model_checkpoint_paths[which]
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name.startswith('learner/network/') and 'OPTIMIZER_SLOT' not in name}


def test_tiny_run_survives_killed_actor_learner_and_replay_and_resumes(tmp_path):
    run_dir = str(tmp_path / 'run')
    total = 16_000  # 400 learner steps of 2 x 5 steps x 4 frames
    launcher = subprocess.Popen(
        _program('--game=pong', '--preset=tiny', f'--run_dir={run_dir}',
                 f'--config.total_frames={total}', '--config.checkpoint_interval_s=2'),
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: checkpoint_frames(run_dir) > 0, 'a first checkpoint')
        first_weights = _network_weights(run_dir, 0)
        kill(children(run_dir, 'actor'))
        wait_for(lambda: checkpoint_frames(run_dir) > 2_000 and children(run_dir, 'actor'),
                 'training to go on with a restarted actor')
        killed_at = checkpoint_frames(run_dir)
        kill(children(run_dir, 'learner'))
        wait_for(lambda: checkpoint_frames(run_dir) > killed_at, 'the restarted learner')
        # The replay server (IMPALA's queue) last: restarted on its address, the unrolls in
        # flight lost, the learner and actor reconnecting without a restart.
        kill(children(run_dir, 'replay'))
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output
    assert 'actor_0 exited with code -9; restarting it' in output
    assert 'learner exited with code -9; restarting it, resuming' in output
    assert 'replay exited with code -9; restarting it' in output, output
    assert output.count(' exited with code') == 3, output      # one restart each
    with open(os.path.join(run_dir, 'logs', 'learner.log')) as f:
        assert 'could not transform' not in f.read()    # AutoGraph ran no part of it as-is

    # The learner resumed from a checkpoint at or after the one we saw, not from frame 0.
    resumed = resumed_frames(output)
    assert resumed and resumed[0] >= killed_at > 0, output
    rows = _read_csv(os.path.join(run_dir, 'logs', 'learner.csv'))
    frames = [int(r['frames']) for r in rows]
    assert frames[-1] >= total
    # Rows logged after the last checkpoint are redone by the resumed learner: its counter
    # steps back to the checkpoint, never to zero.
    restarts = [i for i in range(1, len(frames)) if frames[i] < frames[i - 1]]
    assert all(frames[i] >= resumed[0] for i in restarts)
    assert len(rows) > 10 and len({r['loss'] for r in rows}) > 5     # loss changes
    last_weights = _network_weights(run_dir, -1)
    assert any((first_weights[n] != last_weights[n]).any() for n in first_weights)

    evaluation = _read_csv(os.path.join(run_dir, 'evaluation.csv'))
    assert evaluation and evaluation[0]['game'] == 'pong'
    assert int(evaluation[0]['checkpoint_frames']) >= total
    episodes = _read_csv(os.path.join(run_dir, 'logs', 'episodes.csv'))
    assert episodes and all(float(e['episode_return']) >= -21 for e in episodes)
    # A finished run resumed with a larger budget: the launches of Ape-X, Reactor and the
    # guide's agent (tests/test_apex_launch.py, test_reactor_launch.py, test_new_agent_guide.py).


def test_a_live_run_refuses_a_second_writer_and_stops_on_ctrl_c(tmp_path):
    """While a run trains, a second launcher on its directory, or a second learner with the
    same id, is refused in one line; then Ctrl-C checkpoints and stops every process (SIGTERM,
    `kill`, ends the Ape-X run of tests/test_apex_launch.py)."""
    run_dir = str(tmp_path / 'run')
    tiny = ['--game=pong', '--preset=tiny', f'--run_dir={run_dir}']
    launcher = subprocess.Popen(
        _program(*tiny, '--config.total_frames=10000000', '--config.checkpoint_interval_s=600'),
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        learner_csv = os.path.join(run_dir, 'logs', 'learner.csv')
        wait_for(lambda: os.path.exists(learner_csv) and len(_read_csv(learner_csv)) > 3,
                 'the learner to train')
        # Its roles run TensorFlow with the BFC allocator (launch/runtime.role_environment).
        roles = children(run_dir, 'learner') + children(run_dir, 'actor')
        assert roles and all(p.environ().get('TF_CPU_ALLOCATOR_USE_BFC') == 'true'
                             for p in roles)
        second = _run(*tiny)
        (replay,) = children(run_dir, 'replay')
        address = [a for a in replay.info['cmdline'] if a.startswith('--replay_address=')][0]
        wait_for(lambda: os.path.exists(os.path.join(run_dir, 'checkpoints', '.lock')),
                 'the learner to hold its checkpoints')
        learner = _run(*tiny, '--role=learner', address, timeout=180)
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=120)
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
    assert f'resume with the same command and --run_dir={run_dir}' in output
    assert not children(run_dir, 'learner') and not children(run_dir, 'actor')
    assert not children(run_dir, 'replay')
    assert not os.path.exists(os.path.join(run_dir, 'replay_checkpoints'))   # a queue: none
    # The learner saved on its way out: its checkpoint is at least as new as its last log row.
    last_logged = int(_read_csv(learner_csv)[-1]['frames'])
    assert checkpoint_frames(run_dir) >= last_logged > 0
