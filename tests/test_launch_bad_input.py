"""Bad inputs that need a saved run: a resumed run cannot change its network (the table of
one-line errors: test_bad_input.py; a second writer on a live run: test_launch.py)."""
import json
import subprocess
import sys

from launch_processes import ENV
from launch_processes import ROOT


def _program(*args):
    game = [] if any(a.startswith('--game=') for a in args) else ['--game=pong']
    return [sys.executable, '-m', 'launch.impala_atari', *game, '--preset=tiny', *args]


def _run(*args, timeout=120):
    return subprocess.run(_program(*args), cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


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


