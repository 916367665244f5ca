"""Config resolution for experiment programs: paper config, preset, flags, saved run.

Order: a run directory's saved `config.json` (resuming) or else the paper's config with the
chosen preset applied; then every `--config.<field>` the user gave on the command line.
"""
import json
import os
import re
from typing import Callable, Mapping, Sequence

import ml_collections

from paper_tables import names

CONFIG_FILE = 'config.json'


class ConfigError(ValueError):
    """A one-line, user-facing reason why a config cannot run."""


def overridden_fields(argv: Sequence[str]) -> list[str]:
    """Field paths the user set with `--config.<path>=...` or `--config.<path> ...`."""
    fields = []
    for arg in argv:
        match = re.match(r'^--config\.([\w.]+)(=|$)', arg)
        if match:
            fields.append(match.group(1))
    return fields


def resolve(*, paper_config: ml_collections.ConfigDict,
            presets: Mapping[str, Callable[[ml_collections.ConfigDict],
                                           ml_collections.ConfigDict]],
            preset: str, flag_config: ml_collections.ConfigDict, argv: Sequence[str],
            run_dir: str) -> ml_collections.ConfigDict:
    path = os.path.join(run_dir, CONFIG_FILE)
    if os.path.exists(path):
        with open(path) as f:
            config = ml_collections.ConfigDict(json.load(f))
    else:
        if preset not in presets:
            raise ConfigError(f'unknown --preset={preset!r}; choose one of: '
                              f'{", ".join(presets)}')
        config = presets[preset](paper_config)
    for field in overridden_fields(argv):
        value = flag_config
        for part in field.split('.'):
            value = value[part]
        node = config
        *parents, leaf = field.split('.')
        for part in parents:
            node = node[part]
        node[leaf] = value
    return config


def save(config: ml_collections.ConfigDict, run_dir: str) -> None:
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, CONFIG_FILE), 'w') as f:
        json.dump(config.to_dict(), f, indent=2, sort_keys=True)


def load(run_dir: str) -> ml_collections.ConfigDict:
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.exists(path):
        raise ConfigError(f'{path} not found: is {run_dir!r} a run directory?')
    with open(path) as f:
        return ml_collections.ConfigDict(json.load(f))


def check_atari(config: ml_collections.ConfigDict) -> None:
    """One-line errors for Atari settings out of range (before any process starts)."""
    try:
        config.game = names.atari_rom_id(config.game)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    _at_least(config, 1, 'unroll_length', 'batch_size', 'num_actors', 'envs_per_actor',
              'queue_size', 'action_repeat', 'frame_stack', 'screen_size', 'total_frames')
    _at_least(config, 0, 'noop_max', 'entropy_cost', 'baseline_cost', 'reward_clip',
              'max_episode_frames')
    _in_unit_interval(config, 'discount', 'rmsprop_decay', 'rmsprop_momentum',
                      'vtrace_lambda')
    _positive(config, 'learning_rate', 'rmsprop_epsilon', 'max_grad_norm')
    if not 1 <= config.max_pool_frames <= config.action_repeat:
        raise ConfigError(f'--config.max_pool_frames must be in [1, action_repeat='
                          f'{config.action_repeat}], got {config.max_pool_frames}')
    if config.torso not in ('shallow', 'deep'):
        raise ConfigError(f"--config.torso must be 'shallow' or 'deep', got {config.torso!r}")
    if config.action_set not in ('minimal', 'full'):
        raise ConfigError(f"--config.action_set must be 'minimal' or 'full', "
                          f"got {config.action_set!r}")
    if config.jit_compile not in ('auto', True, False):
        raise ConfigError(f"--config.jit_compile must be true, false or 'auto', "
                          f"got {config.jit_compile!r}")


def check_apex(config: ml_collections.ConfigDict) -> None:
    """One-line errors for Ape-X settings out of range; resolves the game or task name."""
    if config.experiment == 'apex_dqn_atari':
        try:
            config.game = names.atari_rom_id(config.game)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        _at_least(config, 1, 'action_repeat', 'frame_stack', 'screen_size')
        _at_least(config, 0, 'noop_max', 'max_episode_frames')
        _in_unit_interval(config, 'epsilon', 'rmsprop_decay', 'rmsprop_momentum')
        _positive(config, 'rmsprop_epsilon', 'max_grad_norm')
    else:
        from environments import control  # pylint: disable=import-outside-toplevel
        try:
            control.parse_task(config.task)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        _at_least(config, 0, 'exploration_sigma')
        _positive(config, 'actor_gradient_clip')
    _at_least(config, 1, 'n_step', 'batch_size', 'num_actors', 'envs_per_actor',
              'replay_capacity', 'min_replay_size', 'transition_batch_size',
              'target_update_period', 'prefetch_batches', 'total_frames',
              'parameter_update_frames')
    _at_least(config, 0, 'reward_clip', 'priority_exponent', 'importance_sampling_exponent')
    _in_unit_interval(config, 'discount')
    _positive(config, 'learning_rate')
    if config.min_replay_size > config.replay_capacity:
        raise ConfigError(f'--config.min_replay_size ({config.min_replay_size}) must not exceed '
                          f'--config.replay_capacity ({config.replay_capacity})')
    if config.jit_compile not in ('auto', True, False):
        raise ConfigError(f"--config.jit_compile must be true, false or 'auto', "
                          f"got {config.jit_compile!r}")


def _at_least(config, minimum, *fields):
    for field in fields:
        if config[field] < minimum:
            raise ConfigError(f'--config.{field} must be >= {minimum}, got {config[field]}')


def _in_unit_interval(config, *fields):
    for field in fields:
        if not 0.0 <= config[field] <= 1.0:
            raise ConfigError(f'--config.{field} must be in [0, 1], got {config[field]}')


def _positive(config, *fields):
    for field in fields:
        if not config[field] > 0:
            raise ConfigError(f'--config.{field} must be > 0, got {config[field]}')
