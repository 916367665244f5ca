"""LASER fig. 3 (left) at small scale: a shared-replay sweep with the trust region on and off.

  python -m benchmarks.laser_trust_region [--frames=600000] [--game=breakout]
      [--out=benchmarks/laser_trust_region.png] [--sweep=quick]
  python -m benchmarks.laser_trust_region --run=trust_region_threshold=0.1 \
      --run=trust_region_threshold=1.0            # the threshold b, by a short sweep

Back to back, the same quick-preset sweep (3 learning rates sharing one replay) trains
`--frames` frames per agent once per `--run` (config overrides; by default
`trust_region=true`, then `trust_region=false`: naive sharing, the paper's failing
baseline). Prints, per member, the mean of its last 100 training episodes
(app. C), the behaviour relevance KL(pi || pi~_mu) of online and replayed states and the share
of replayed states the trust region rejected (over the last half of training); writes the
members' curves (mean of 100 episodes) into one PNG.
"""
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np
from absl import app
from absl import flags

from paper_tables import plots
from paper_tables import runs

_FRAMES = flags.DEFINE_integer('frames', 600_000, 'Frames each agent trains.')
_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game.')
_SWEEP = flags.DEFINE_string('sweep', 'quick', 'The sweep both runs use.')
_RUNS = flags.DEFINE_multi_string('run', ['trust_region=true', 'trust_region=false'],
                                  'Config overrides of each run, field=value[,field=value].')
_OUT = flags.DEFINE_string('out', 'benchmarks/laser_trust_region.png', 'Where the PNG goes.')


def _read(path):
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def _member_figures(learner_dir):
    episodes = _read(os.path.join(learner_dir, 'logs', 'episodes.csv'))
    rows = _read(os.path.join(learner_dir, 'logs', 'learner.csv'))
    late = rows[len(rows) // 2:]
    mean = lambda field: np.mean([float(r[field]) for r in late])  # noqa: E731
    curve = [(float(e['frames']), float(e['episode_return'])) for e in episodes]
    score = np.mean([float(e['episode_return']) for e in episodes[-100:]])
    return curve, score, mean('behaviour_kl_online'), mean('behaviour_kl_replay'), \
        mean('rejected_fraction_replay')


def main(argv):
    del argv
    curves = []
    with tempfile.TemporaryDirectory() as root:
        for i, overrides in enumerate(_RUNS.value):
            run_dir = os.path.join(root, str(i))
            command = [sys.executable, '-m', 'launch.laser_atari', f'--game={_GAME.value}',
                       '--preset=quick', f'--sweep={_SWEEP.value}', f'--run_dir={run_dir}',
                       f'--config.total_frames={_FRAMES.value}',
                       *(f'--config.{o}' for o in overrides.split(','))]
            if subprocess.run(command, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode != 0:
                raise SystemExit(f'failed: {" ".join(command)}')
            print(f'{overrides}:')
            print(runs.members_table(run_dir))
            for path in runs.members(run_dir):
                curve, score, kl_online, kl_replay, rejected = _member_figures(path)
                print(f'  {path.name}: last 100 episodes {score:.1f}; KL online {kl_online:.4f}, '
                      f'replay {kl_replay:.4f}; replayed states rejected {rejected:.1%}')
                rate = runs.read_config(path)['learning_rate']
                curves.append((f'{overrides}, learning rate {rate:g}', curve, None))
    plots.learning_curves(curves, _OUT.value, paper_label='')
    print(f'curves: {_OUT.value}')


if __name__ == '__main__':
    app.run(main)
