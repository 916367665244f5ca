"""A quick-preset Reactor learning curve on one game against the random score.

  python -m benchmarks.reactor_curve [--game=breakout] [--frames=1000000]
      [--run_dir=runs/reactor_curve_breakout] [--out=benchmarks/reactor_curve.png]

Trains `launch.reactor_atari --preset=quick` for `--frames` frames in `--run_dir` (or resumes
it, or only plots it if it has reached them), then plots its training episodes (whole games,
raw score) against the random score of Reactor table 5, and prints the mean of the first and
of the last 100 episodes.
"""
import csv
import os
import subprocess
import sys

from absl import app
from absl import flags
import numpy as np

from environments import names
from paper_tables import plots
from paper_tables import scores

_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game.')
_FRAMES = flags.DEFINE_integer('frames', 1_000_000, 'Frames to train.')
_RUN_DIR = flags.DEFINE_string('run_dir', None, 'Run directory (default '
                               'runs/reactor_curve_<game>).')
_OUT = flags.DEFINE_string('out', 'benchmarks/reactor_curve.png', 'Where the PNG goes.')


def main(argv):
    del argv
    run_dir = _RUN_DIR.value or os.path.join('runs', f'reactor_curve_{_GAME.value}')
    command = [sys.executable, '-m', 'launch.reactor_atari', f'--game={_GAME.value}',
               '--preset=quick', f'--run_dir={run_dir}',
               f'--config.total_frames={_FRAMES.value}']
    if subprocess.run(command).returncode != 0:
        raise SystemExit(f'failed: {" ".join(command)}')
    with open(os.path.join(run_dir, 'logs', 'episodes.csv'), newline='') as f:
        episodes = [(float(row['frames']), float(row['episode_return']))
                    for row in csv.DictReader(f)]
    random_score = scores.atari_references()[names.atari_rom_id(_GAME.value)][0]
    returns = [r for _, r in episodes]
    print(f'{_GAME.value}: {len(episodes)} episodes in {_FRAMES.value:,} frames; first 100: '
          f'{np.mean(returns[:100]):.1f}, last 100: {np.mean(returns[-100:]):.1f}; random '
          f'{random_score:g} (Reactor table 5)')
    plots.learning_curves([(f'Reactor, quick preset, {_GAME.value}', episodes, random_score)],
                          _OUT.value, paper_label='random (Reactor table 5)')
    print(f'curve: {_OUT.value}')


if __name__ == '__main__':
    app.run(main)
