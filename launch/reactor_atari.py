"""Train the Reactor on one Atari game (Gruslys et al., 2018): distributional Retrace,
beta-LOO and lazily prioritized sequence replay, with the paper's settings by default.

  python -m launch.reactor_atari --game=breakout                  # sec. 3.4 and 4.1
  python -m launch.reactor_atari --game=breakout --preset=quick   # a small machine
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='reactor_atari', target='game',
                target_help='Atari game, any paper spelling (default: pong).',
                example='--config.entropy_cost=0.02')
