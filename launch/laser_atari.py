"""Train LASER on one Atari game (Schmitt et al., 2019, sec. 5.1 and 5.5): V-trace with 96%
replay per batch and the trust region of sec. 4, alone or as a sweep sharing one replay.

  python -m launch.laser_atari --game=breakout                  # one agent, paper settings
  python -m launch.laser_atari --game=breakout --sweep=paper    # sec. 5.1's 9-agent sweep
  python -m launch.laser_atari --game=breakout --preset=quick --sweep=quick   # 3 agents
  python -m launch.laser_atari --game=breakout --sweep='learning_rate=3e-4,6e-4;entropy_cost=0.01'
  python -m launch.laser_atari --game=breakout --sweep=paper --config.trust_region=false
                                                               # fig. 3's failing baseline

Every member of a sweep is a learner with its own actors, hyperparameters, checkpoints and logs
(RUN_DIR/learner_<i>); all write to and sample from one replay table.
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='laser_atari', target='game',
                target_help='Atari game, any paper spelling (default: pong).',
                example='--config.trust_region_threshold=0.5')
