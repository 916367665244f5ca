"""Config resolution for experiment programs: paper config, preset, flags, saved run.

Order: a run directory's saved `config.json` (resuming) or else the paper's config with the
chosen preset applied; then every `--config.<field>` the user gave on the command line.
"""
import json
import os
import re
from typing import Callable, Mapping, Sequence

import ml_collections

from agents.core.config_checks import ConfigError  # noqa: F401  (raised to launch programs)

CONFIG_FILE = 'config.json'


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
