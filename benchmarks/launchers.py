"""The cost of launching through Ray: the same IMPALA run under `--launcher=local` and
`--launcher=ray` (a one-machine Ray cluster), back to back.

  python -m benchmarks.launchers --frames=400000 --game=pong

Prints, per launcher, end-to-end frames/s (the learner's count between 20% and 100% of the
frames) and the time from `python -m launch.impala_atari` to the learner's first step, then the
Ray/local ratio of frames/s (issue 11's target: within 10%).
"""
import csv
import os
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

from benchmarks import runs

_FRAMES = flags.DEFINE_integer('frames', 400_000, 'Frames per run.')
_GAME = flags.DEFINE_string('game', 'pong', 'Atari game.')
_PRESET = flags.DEFINE_string('preset', 'quick', 'Preset of both runs.')
_LAUNCHERS = flags.DEFINE_list('launchers', ['local', 'ray'], 'Launchers, in this order.')


def first_step_seconds(learner_csv: str, started: float) -> float:
    """Seconds from `started` (wall clock) to the learner's first logged step."""
    with open(learner_csv, newline='') as f:
        first = next(csv.DictReader(f))
    return float(first['wall_time']) - started


def run(launcher: str, run_dir: str) -> tuple[float, float]:
    """One whole run (training and its evaluation); (frames/s, seconds to the first step)."""
    command = [sys.executable, '-m', 'launch.impala_atari', f'--game={_GAME.value}',
               f'--preset={_PRESET.value}', f'--run_dir={run_dir}',
               f'--config.total_frames={_FRAMES.value}', '--config.eval_episodes=1',
               '--config.log_interval_s=1', f'--launcher={launcher}']
    if launcher == 'ray':
        command.append('--ray_address=local')
    started = time.time()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    learner_csv = os.path.join(run_dir, 'logs', 'learner.csv')
    return runs.frames_per_second(learner_csv), first_step_seconds(learner_csv, started)


def main(argv):
    del argv
    figures = {}
    with tempfile.TemporaryDirectory() as root:
        for launcher in _LAUNCHERS.value:
            fps, first = run(launcher, os.path.join(root, launcher))
            figures[launcher] = fps
            print(f'{launcher}: {fps:,.0f} frames/s end to end; first learner step '
                  f'{first:.1f} s after start', flush=True)
    if {'local', 'ray'} <= set(figures):
        print(f'ray / local frames/s: {figures["ray"] / figures["local"]:.3f}')


if __name__ == '__main__':
    app.run(main)
