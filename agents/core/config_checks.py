"""One-line checks of experiment configs, run before any process starts.

Each agent's `config.py` has a `check(config)` built from these; the experiment registry
(launch/experiments.py) runs it. A failed check raises `ConfigError`, whose message is the one
line the user sees.
"""
from typing import Callable

import ml_collections


class ConfigError(ValueError):
    """A one-line, user-facing reason why a config cannot run."""


def at_least(config, minimum, *fields) -> None:
    for field in fields:
        if not config[field] >= minimum:           # NaN included
            raise ConfigError(f'--config.{field} must be >= {minimum}, got {config[field]}')


def in_unit_interval(config, *fields) -> None:
    for field in fields:
        if not 0.0 <= config[field] <= 1.0:
            raise ConfigError(f'--config.{field} must be in [0, 1], got {config[field]}')


def positive(config, *fields) -> None:
    for field in fields:
        if not config[field] > 0:
            raise ConfigError(f'--config.{field} must be > 0, got {config[field]}')


def fits(config, batch_field, capacity_field) -> None:
    """A batch drawn from replay cannot be larger than what the replay holds."""
    if config[batch_field] > config[capacity_field]:
        raise ConfigError(f'--config.{batch_field}={config[batch_field]} is more than '
                          f'--config.{capacity_field}={config[capacity_field]} holds: lower the '
                          f'batch or raise the capacity')


def one_of(config, field, choices) -> None:
    if config[field] not in choices:
        allowed = ', '.join(repr(c) for c in choices)
        raise ConfigError(f'--config.{field} must be one of {allowed}, got {config[field]!r}')


def runtime(config: ml_collections.ConfigDict) -> None:
    """What every experiment's runtime section shares: learners, actors, XLA."""
    at_least(config, 1, 'num_learners', 'num_actors', 'envs_per_actor', 'total_frames',
             'max_nonfinite_updates')
    if jit_setting(config.jit_compile) is None:
        raise ConfigError(f"--config.jit_compile must be true, false or 'auto', "
                          f"got {config.jit_compile!r}")


def jit_setting(value):
    """`jit_compile` as True, False or 'auto', from a boolean or its flag spellings ('true',
    'False', '1', ...: the field's paper value 'auto' makes a flag's value a string); None for
    anything else."""
    if isinstance(value, bool) or value == 'auto':
        return value
    spelled = {'true': True, 't': True, '1': True, 'false': False, 'f': False, '0': False}
    return spelled.get(value.lower()) if isinstance(value, str) else None


def environment(check: Callable[[ml_collections.ConfigDict], None],
                config: ml_collections.ConfigDict) -> None:
    """An environment's own check of its settings (environments/settings.py), whose
    ValueError is the one line the user sees."""
    try:
        check(config)
    except ValueError as e:
        raise ConfigError(str(e)) from None
