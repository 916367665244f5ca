"""Train Ape-X DQN on one Atari game (Horgan et al., 2018, sec. 3.1, 4.1, appendix C).

  python -m launch.apex_dqn_atari --game=pong                    # the paper's settings
  python -m launch.apex_dqn_atari --game=pong --preset=quick     # a demo on a small machine
  python -m launch.apex_dqn_atari --game=breakout --config.num_actors=8
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='apex_dqn_atari', target='game',
                target_help='Atari game, any paper spelling (default: pong).',
                example='--config.batch_size=256')
