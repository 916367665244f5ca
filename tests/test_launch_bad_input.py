"""Bad inputs that need a live run or a saved one: a second writer on a run directory, and a
resumed run that cannot change its network (the table of one-line errors: test_bad_input.py)."""
import json
import os
import signal
import subprocess
import sys

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


