"""What every experiment program shares: its role flags, config resolution, role dispatch.

A program (launch/impala_atari.py, ...) defines only its `--config` (the paper config) and the
flag naming what it trains on (`--game`, `--task`), then calls `main`.
"""
import os
import sys
from typing import Callable

from absl import flags
from ml_collections import config_flags

from launch import configs
from launch import runtime

_PRESET = flags.DEFINE_string('preset', 'paper',
                              'paper: the paper settings; quick: a demo for a small machine; '
                              'tiny: seconds-long runs for tests.')
_RUN_DIR = flags.DEFINE_string('run_dir', None,
                               'Run directory (default runs/<experiment>_<game or task>).')
_ROLE = flags.DEFINE_enum('role', 'local', runtime.ROLES, 'Which role this process runs.')
_REPLAY_ADDRESS = flags.DEFINE_string('replay_address', None,
                                      'host:port of the replay server (roles other than local).')
_ACTOR_ID = flags.DEFINE_integer('actor_id', 0, 'Index of this actor (--role=actor).')
_REPLAY_WAIT_S = flags.DEFINE_float('replay_wait_s', 60.0,
                                    'How long a role waits for the replay server to answer.')


def define_config(paper_config, example: str):
    """`--config`, the paper config, overridable field by field (`example`)."""
    return config_flags.DEFINE_config_dict(
        'config', paper_config, f'Overrides of the paper config, e.g. {example}.')


def main(*, module: str, paper_config: Callable, presets, config_flag, target_flag,
         target_field: str, run_dir_prefix: str, check: Callable, builder: Callable) -> None:
    """Resolves the config and runs this process's role; one-line errors, exit code 2.

    `target_flag` (e.g. --game) overrides the config's `target_field`; the default run
    directory is runs/<run_dir_prefix>_<target>.
    """
    target = target_flag.value or paper_config()[target_field]
    run_dir = _RUN_DIR.value or os.path.join('runs', f'{run_dir_prefix}_{target}')
    try:
        config = configs.resolve(paper_config=paper_config(), presets=presets,
                                 preset=_PRESET.value, flag_config=config_flag.value,
                                 argv=sys.argv, run_dir=run_dir)
        if target_flag.value:
            config[target_field] = target_flag.value
        check(config)
        runtime.run_role(module=module, builder=builder(config), config=config,
                         run_dir=run_dir, role=_ROLE.value,
                         replay_address=_REPLAY_ADDRESS.value, actor_id=_ACTOR_ID.value,
                         replay_wait_s=_REPLAY_WAIT_S.value)
    except (configs.ConfigError, runtime.LaunchError) as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)
