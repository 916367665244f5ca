"""Train Ape-X DQN on one Atari game (Horgan et al., 2018, sec. 3.1, 4.1, appendix C).

  python -m launch.apex_dqn_atari --game=pong                    # the paper's settings
  python -m launch.apex_dqn_atari --game=pong --preset=quick     # a demo on a small machine
  python -m launch.apex_dqn_atari --game=breakout --config.num_actors=8

Re-running with the same --run_dir resumes from its last checkpoint. One role per machine:
  --role=replay --replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
  --replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""

from absl import app
from absl import flags

from launch import program

_TARGET = flags.DEFINE_string('game', None, 'Atari game, any paper spelling (default: pong).')
_CONFIG = program.define_config('apex_dqn_atari', '--config.batch_size=256')


def main(argv):
    del argv
    program.main(module=__spec__.name, experiment='apex_dqn_atari', config_flag=_CONFIG,
                 target_flag=_TARGET)


if __name__ == '__main__':
    app.run(main)
