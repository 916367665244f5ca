"""Train the Reactor on one Atari game (Gruslys et al., 2018): distributional Retrace,
beta-LOO and lazily prioritized sequence replay, with the paper's settings by default.

  python -m launch.reactor_atari --game=breakout                  # sec. 3.4 and 4.1
  python -m launch.reactor_atari --game=breakout --preset=quick   # a small machine

Re-running with the same --run_dir resumes the learner and the replay.
"""

from absl import app
from absl import flags

from launch import program

_TARGET = flags.DEFINE_string('game', None, 'Atari game, any paper spelling (default: pong).')
_CONFIG = program.define_config('reactor_atari', '--config.entropy_cost=0.02')


def main(argv):
    del argv
    program.main(module=__spec__.name, experiment='reactor_atari', config_flag=_CONFIG,
                 target_flag=_TARGET)


if __name__ == '__main__':
    app.run(main)
