"""Train IMPALA on one Atari game: the per-game experts of IMPALA sec. 5.3.2 and appendix G.

  python -m launch.impala_atari --game=breakout                 # the paper's settings
  python -m launch.impala_atari --game=pong --preset=quick      # about 15 minutes on 2 cores
  python -m launch.impala_atari --game=pong --config.torso=deep --config.learning_rate=3e-4

Re-running with the same --run_dir resumes from its last checkpoint. One role per machine:
  --role=replay --replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
  --replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""
import os
import sys

from absl import app
from absl import flags
from ml_collections import config_flags

from agents.impala import builder as builder_lib
from agents.impala import config as impala_config
from launch import configs
from launch import runtime

_GAME = flags.DEFINE_string('game', None, 'Atari game, any paper spelling (default: pong).')
_PRESET = flags.DEFINE_enum('preset', 'paper', list(impala_config.PRESETS),
                            'paper: the paper settings; quick: a demo for a small machine; '
                            'tiny: seconds-long runs for tests.')
_RUN_DIR = flags.DEFINE_string('run_dir', None, 'Run directory (default runs/impala_<game>).')
_ROLE = flags.DEFINE_enum('role', 'local', runtime.ROLES, 'Which role this process runs.')
_REPLAY_ADDRESS = flags.DEFINE_string('replay_address', None,
                                      'host:port of the replay server (roles other than local).')
_ACTOR_ID = flags.DEFINE_integer('actor_id', 0, 'Index of this actor (--role=actor).')
_REPLAY_WAIT_S = flags.DEFINE_float('replay_wait_s', 60.0,
                                    'How long a role waits for the replay server to answer.')
_CONFIG = config_flags.DEFINE_config_dict('config', impala_config.atari_experts(),
                                          'Overrides of the paper config, e.g. '
                                          '--config.learning_rate=3e-4.')


def _config(run_dir: str):
    config = configs.resolve(paper_config=impala_config.atari_experts(),
                             presets=impala_config.PRESETS, preset=_PRESET.value,
                             flag_config=_CONFIG.value, argv=sys.argv, run_dir=run_dir)
    if _GAME.value:
        config.game = _GAME.value
    configs.check_atari(config)
    return config


def _run_dir() -> str:
    if _RUN_DIR.value:
        return _RUN_DIR.value
    game = _GAME.value or impala_config.atari_experts().game
    return os.path.join('runs', f'impala_{game}')


def main(argv):
    del argv
    run_dir = _run_dir()
    try:
        config = _config(run_dir)
        runtime.run_role(module=__spec__.name, builder=builder_lib.ImpalaAtariBuilder(config),
                         config=config, run_dir=run_dir, role=_ROLE.value,
                         replay_address=_REPLAY_ADDRESS.value, actor_id=_ACTOR_ID.value,
                         replay_wait_s=_REPLAY_WAIT_S.value)
    except (configs.ConfigError, runtime.LaunchError) as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)


if __name__ == '__main__':
    app.run(main)
