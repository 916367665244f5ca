"""Train Ape-X DQN on one Atari game (Horgan et al., 2018, sec. 3.1, 4.1, appendix C).

  python -m launch.apex_dqn_atari --game=pong                    # the paper's settings
  python -m launch.apex_dqn_atari --game=pong --preset=quick     # a demo on a small machine
  python -m launch.apex_dqn_atari --game=breakout --config.num_actors=8

Re-running with the same --run_dir resumes from its last checkpoint. One role per machine:
  --role=replay --replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
  --replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""
import os
import sys

from absl import app
from absl import flags
from ml_collections import config_flags

from agents.apex import builder as builder_lib
from agents.apex import config as apex_config
from launch import configs
from launch import runtime

_GAME = flags.DEFINE_string('game', None, 'Atari game, any paper spelling (default: pong).')
_PRESET = flags.DEFINE_enum('preset', 'paper', list(apex_config.PRESETS),
                            'paper: the paper settings; quick: a demo for a small machine; '
                            'tiny: seconds-long runs for tests.')
_RUN_DIR = flags.DEFINE_string('run_dir', None, 'Run directory (default runs/apex_dqn_<game>).')
_ROLE = flags.DEFINE_enum('role', 'local', runtime.ROLES, 'Which role this process runs.')
_REPLAY_ADDRESS = flags.DEFINE_string('replay_address', None,
                                      'host:port of the replay server (roles other than local).')
_ACTOR_ID = flags.DEFINE_integer('actor_id', 0, 'Index of this actor (--role=actor).')
_REPLAY_WAIT_S = flags.DEFINE_float('replay_wait_s', 60.0,
                                    'How long a role waits for the replay server to answer.')
_CONFIG = config_flags.DEFINE_config_dict('config', apex_config.atari_dqn(),
                                          'Overrides of the paper config, e.g. '
                                          '--config.batch_size=256.')


def main(argv):
    del argv
    game = _GAME.value or apex_config.atari_dqn().game
    run_dir = _RUN_DIR.value or os.path.join('runs', f'apex_dqn_{game}')
    try:
        config = configs.resolve(paper_config=apex_config.atari_dqn(),
                                 presets=apex_config.PRESETS, preset=_PRESET.value,
                                 flag_config=_CONFIG.value, argv=sys.argv, run_dir=run_dir)
        if _GAME.value:
            config.game = _GAME.value
        configs.check_apex(config)
        runtime.run_role(module=__spec__.name, builder=builder_lib.ApexDQNAtariBuilder(config),
                         config=config, run_dir=run_dir, role=_ROLE.value,
                         replay_address=_REPLAY_ADDRESS.value, actor_id=_ACTOR_ID.value,
                         replay_wait_s=_REPLAY_WAIT_S.value)
    except (configs.ConfigError, runtime.LaunchError) as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)


if __name__ == '__main__':
    app.run(main)
