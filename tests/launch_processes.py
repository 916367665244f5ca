"""What the launcher tests share: finding a run's role processes, killing them, waiting on
its files and reading what the launcher printed."""
import os
import signal
import time

import psutil
import tensorflow as tf

from launch import runtime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', PYTHONUNBUFFERED='1')


def children(run_dir, role):
    """The live processes of `role` in the run at `run_dir`."""
    flag = f'--run_dir={run_dir}'
    return [p for p in psutil.process_iter(['cmdline'])
            if p.info['cmdline'] and flag in p.info['cmdline']
            and f'--role={role}' in p.info['cmdline']]


def kill(processes):
    """SIGKILL to each of `processes` (as `children` finds them): a crash the launcher sees."""
    for process in processes:
        process.send_signal(signal.SIGKILL)


def resumed_frames(output):
    """The frames of each '[learner] resumed from ...' line of a launcher's `output`."""
    return [int(line.rsplit(' ', 1)[1].replace(',', '')) for line in output.splitlines()
            if line.startswith('[learner] resumed from')]


def wait_for(predicate, what, timeout=240, launcher=None, run_dir=None):
    """Polls `predicate` until it holds; past `timeout` s, fails with what the `launcher`
    process printed (it is killed to read it) and the tail of each log under `run_dir`."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out waiting for {what}'
                                 + _what_the_run_said(launcher, run_dir))
        time.sleep(0.5)


def _what_the_run_said(launcher, run_dir, lines=30):
    said = ''
    if launcher is not None:
        launcher.kill()
        output, _ = launcher.communicate(timeout=60)
        said += f'\n--- the launcher printed:\n{output}'
    logs = os.path.join(run_dir or '', 'logs')
    names = sorted(os.listdir(logs)) if run_dir and os.path.isdir(logs) else ()
    for name in (n for n in names if n.endswith(('.log', '.out'))):   # the roles' own logs
        said += f'\n--- logs/{name}, its end:\n' + runtime.log_tail(os.path.join(logs, name),
                                                                    lines)
    return said


def checkpoint_frames(run_dir):
    """The frame count of the learner's newest checkpoint; 0 before the first."""
    path = tf.train.latest_checkpoint(os.path.join(run_dir, 'checkpoints'))
    return int(path.rsplit('-', 1)[1]) if path else 0


def assert_refused_in_one_line(process, message, timeout=240):
    """A launch `process` given bad input exits 2 with one line that starts with `message`,
    and no traceback."""
    _, stderr = process.communicate(timeout=timeout)
    lines = stderr.strip().splitlines()
    assert process.returncode == 2 and 'Traceback' not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith(message), stderr


def finish_beside_refusals(launcher, refusals, timeout):
    """Each (process, message) of `refusals`, a launch given bad input beside the `launcher`'s
    run, refused in one line (`assert_refused_in_one_line`); then the launcher's (stdout,
    stderr) once it ends, within `timeout` s. Every process is killed on the way out."""
    try:
        for process, message in refusals:
            assert_refused_in_one_line(process, message)
        return launcher.communicate(timeout=timeout)
    finally:
        launcher.kill()
        for process, _ in refusals:
            process.kill()
