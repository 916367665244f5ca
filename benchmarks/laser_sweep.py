"""A LASER sweep sharing one replay against separate IMPALA runs: frames/s on this machine.

  python -m benchmarks.laser_sweep [--frames=300000] [--game=pong] [--agents=3]

Back to back: (a) one `launch.laser_atari --sweep` of `--agents` members (quick preset: each
member a learner and an actor process, one shared replay server), then (b) as many separate
`launch.impala_atari` runs (quick preset, each with its own replay server) started together.
Every agent trains `--frames` frames. The figure is the sum over agents of the frames each
learner counted per second, from its learner.csv between 20% and 100% of its frames (start-up
and the final evaluation left out).
"""
import os
import sys
import tempfile

from absl import app
from absl import flags

from benchmarks import runs

_FRAMES = flags.DEFINE_integer('frames', 300_000, 'Frames each agent trains.')
_GAME = flags.DEFINE_string('game', 'pong', 'Atari game.')
_AGENTS = flags.DEFINE_integer('agents', 3, 'Agents: sweep members, and separate runs.')
_EXTRA = flags.DEFINE_multi_string('laser_flag', [], 'Extra flags for the LASER sweep, e.g. '
                                   '--laser_flag=--config.replay_shared=false.')
_IMPALA = flags.DEFINE_bool('impala', True, 'Also run (b), the separate IMPALA runs.')


def main(argv):
    del argv
    agents = _AGENTS.value
    common = [f'--game={_GAME.value}', '--preset=quick',
              f'--config.total_frames={_FRAMES.value}', '--config.log_interval_s=2']
    with tempfile.TemporaryDirectory() as root:
        sweep_dir = os.path.join(root, 'laser')
        rates = ','.join(f'{6e-4 * 2 ** (i - 1):g}' for i in range(agents))
        runs.run_together([[sys.executable, '-m', 'launch.laser_atari', *common,
                            f'--run_dir={sweep_dir}', f'--sweep=learning_rate={rates}',
                            *_EXTRA.value]])
        laser = [runs.frames_per_second(os.path.join(sweep_dir, f'learner_{i}', 'logs',
                                                     'learner.csv')) for i in range(agents)]
        print(f'(a) LASER sweep of {agents} {" ".join(_EXTRA.value)}: {sum(laser):,.0f} '
              f'frames/s (per agent: {", ".join(f"{x:,.0f}" for x in laser)})', flush=True)
        if not _IMPALA.value:
            return
        impala_dirs = [os.path.join(root, f'impala_{i}') for i in range(agents)]
        runs.run_together([[sys.executable, '-m', 'launch.impala_atari', *common,
                            f'--run_dir={d}', f'--config.seed={i}']
                           for i, d in enumerate(impala_dirs)])
        impala = [runs.frames_per_second(os.path.join(d, 'logs', 'learner.csv'))
                  for d in impala_dirs]
    print(f'(b) {agents} separate IMPALA runs: {sum(impala):,.0f} frames/s '
          f'(per agent: {", ".join(f"{x:,.0f}" for x in impala)})')
    print(f'ratio (a)/(b): {sum(laser) / sum(impala):.2f}')


if __name__ == '__main__':
    app.run(main)
