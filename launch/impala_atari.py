"""Train IMPALA on one Atari game: the per-game experts of IMPALA sec. 5.3.2 and appendix G.

  python -m launch.impala_atari --game=breakout                 # the paper's settings
  python -m launch.impala_atari --game=pong --preset=quick      # about 11 minutes on 2 cores
  python -m launch.impala_atari --game=pong --config.torso=deep --config.learning_rate=3e-4
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='impala_atari', target='game',
                target_help='Atari game, any paper spelling (default: pong).',
                example='--config.learning_rate=3e-4')
