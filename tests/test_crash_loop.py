"""A role that fails the same way on every restart stops the run with its error in one line
(launch/runtime.py, issue 24); a role killed from outside, or failing differently, restarts."""
import subprocess
import sys

import pytest

from launch import runtime
from launch_processes import ENV
from launch_processes import ROOT


class _Process:
    """What the supervisor sees of a role: its name, restarts, last log line, start."""

    def __init__(self, lines):
        self.name, self.restarts, self.starts = 'learner', 0, 0
        self.last_failure, self.same_failures = '', 0
        self._lines = lines     # the last log line after each exit

    def log_tail(self, lines=5):
        del lines
        return f'    {self._lines[self.starts]}\n'

    def start(self):
        self.starts += 1


def test_the_same_error_three_times_stops_the_run_in_one_line():
    process = _Process(['ValueError: bad shape'] * 3)
    runtime.restart_role(process, 1, 'resuming')
    runtime.restart_role(process, 1, 'resuming')
    with pytest.raises(runtime.LaunchError) as error:
        runtime.restart_role(process, 1, 'resuming')
    assert str(error.value) == ('learner failed the same way 3 times in a row (exit code 1): '
                                'ValueError: bad shape')
    assert process.starts == 2


def test_kills_and_changing_errors_restart():
    killed = _Process(['[learner] step 10'] * 6)
    for _ in range(5):
        runtime.restart_role(killed, -9, 'resuming')     # a signal: not the role's own failure
    changing = _Process([f'error at step {i}' for i in range(6)])
    for _ in range(5):
        runtime.restart_role(changing, 1, 'resuming')
    assert killed.starts == changing.starts == 5


def test_a_learner_that_fails_at_every_start_stops_a_real_run(tmp_path):
    """A file where the run's checkpoint directory must be: the launcher's checks pass (the run
    directory is writable), replay and actors start, and the learner fails as it starts, each
    time it is restarted."""
    run_dir = tmp_path / 'run'
    run_dir.mkdir()
    (run_dir / 'checkpoints').write_text('')
    result = subprocess.run(
        [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
         f'--run_dir={run_dir}'], cwd=ROOT, env=ENV, capture_output=True, text=True,
        timeout=600)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout.count('[launcher] learner exited with code 2; restarting it') == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f'error: learner failed the same way 3 times in a row (exit code 2): error: cannot '
        f'write to {run_dir}/checkpoints: File exists; choose a writable --run_dir')
