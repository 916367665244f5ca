"""Config resolution for experiment programs: paper config, preset, flags, saved run.

Order: a run directory's saved `config.json` (resuming) or else the paper's config with the
chosen preset applied; then every `--config.<field>` the user gave on the command line.
`--config.<field>`s that name no field are refused before flags are parsed (`check_fields`).
"""
import difflib
import json
import os
import re
from typing import Sequence

import ml_collections

from agents.core.config_checks import ConfigError  # noqa: F401  (raised to launch programs)
from launch import experiments

CONFIG_FILE = 'config.json'


def check_fields(config: ml_collections.ConfigDict, experiment: str,
                 argv: Sequence[str]) -> None:
    """A one-line ConfigError for a `--config.<field>` that `config` does not have (say,
    --config.core=lstm for an agent whose networks are feed-forward only), or whose value is
    not of the field's type (`--config.learning_rate=abc`, `--config.batch_size=1.5`)."""
    for field, value in _field_values(argv):
        node = config
        for part in field.split('.'):
            fields = list(node) if isinstance(node, ml_collections.ConfigDict) else []
            if part not in fields:
                near = difflib.get_close_matches(part, fields, n=3)
                hint = f'; did you mean: {", ".join(near)}?' if near else ''
                raise ConfigError(f'--config.{field}: {experiment} has no field {part!r}{hint}')
            node = node[part]
        if field == 'experiment' and value != experiment:
            raise ConfigError(f'--config.experiment: this program runs {experiment}; run '
                              f'launch.{value} for another experiment')
        if value is not None:
            _check_type(field, value, node)


def _check_type(field: str, value: str, default) -> None:
    """`value` must parse as the type of the field's paper value (bool, int or float); a
    text field whose paper value is not empty stays so."""
    if isinstance(default, str) and default and not value.strip():
        raise ConfigError(f'--config.{field}= is empty (the paper: {default!r}): give it a '
                          f'value, or leave it out')
    if isinstance(default, bool):
        if value.lower() not in ('true', 't', '1', 'false', 'f', '0'):   # absl's spellings
            raise ConfigError(f'--config.{field}={value} is not true or false')
        return
    kind, parse = {int: ('an integer', int), float: ('a number', float)}.get(
        type(default), (None, None))
    if parse is None:
        return
    try:
        parse(value)
    except ValueError:
        raise ConfigError(f'--config.{field}={value} is not {kind}') from None


def _field_values(argv: Sequence[str]) -> list[tuple[str, str | None]]:
    """(field path, value) the user set with `--config.<path>=<value>`; the value is None for
    `--config.<path> <value>` (absl parses that form itself)."""
    found = []
    for arg in argv:
        match = re.match(r'^--config\.([\w.]+)(?:=(.*)|$)', arg, re.DOTALL)
        if match:
            found.append((match.group(1), match.group(2)))
    return found


def overridden_fields(argv: Sequence[str]) -> list[str]:
    """Field paths the user set with `--config.<path>=...` or `--config.<path> ...`."""
    return [field for field, _ in _field_values(argv)]


def resolve(*, experiment, preset: str, flag_config: ml_collections.ConfigDict,
            argv: Sequence[str], run_dir: str, target: str | None = None,
            sweep: str | None = None) -> ml_collections.ConfigDict:
    """The config of a run of `experiment` (launch/experiments.py): the run's saved config when
    resuming, else the preset of the paper config; then the user's `--config.<field>`s,
    `target` (the program's --game or --task) and `sweep` (--sweep, which sets the number of
    learners)."""
    config = _saved(run_dir)
    if config is not None and config.experiment != experiment.name:
        raise ConfigError(f'{run_dir} holds a run of {config.experiment}, not of '
                          f'{experiment.name}: resume it with launch.{config.experiment}, or '
                          f'choose another --run_dir')
    if config is None:
        if preset not in experiment.presets:
            raise ConfigError(f'unknown --preset={preset!r}; choose one of: '
                              f'{", ".join(experiment.presets)}')
        config = experiment.presets[preset](experiment.paper_config())
    overrides = {field: _get(flag_config, field) for field in overridden_fields(argv)}
    if target:
        overrides[experiment.target_field] = target
    if sweep is not None:
        overrides['sweep'] = sweep
    for field, value in overrides.items():
        *parents, leaf = field.split('.')
        _get(config, '.'.join(parents))[leaf] = value
    if config.sweep and not experiment.sweeps.sweepable:
        raise ConfigError(f'--sweep: {experiment.name} runs no sweeps')
    if config.sweep:
        # A sweep's members are the run's learners (agents/core/sweeps.py).
        config.num_learners = len(experiment.sweeps.members(config))
    return config


def check_resume(experiment, config: ml_collections.ConfigDict, run_dir: str) -> None:
    """A one-line ConfigError where a checked `config` changes a field of the experiment's
    `fixed_on_resume` (what shapes the checkpointed network and tables) from the run's saved
    config."""
    saved = _saved(run_dir)
    if saved is None:
        return
    for field in experiment.fixed_on_resume:
        if field in config and config[field] != saved[field]:
            raise ConfigError(
                f'--config.{field}={config[field]} cannot change when resuming: {run_dir} was '
                f'trained with {field}={saved[field]!r}; use another --run_dir for a new run')


def _get(config, path: str):
    for part in filter(None, path.split('.')):
        config = config[part]
    return config


def _saved(run_dir: str) -> ml_collections.ConfigDict | None:
    """The config saved in `run_dir`, with fields added to the experiment since then at their
    paper values; None if there is none."""
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            saved = json.load(f)
        experiment = saved['experiment']
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f'{path} is not a run config ({e}): repair it, or delete it to start '
                          f'the run afresh') from None
    config = experiments.get(experiment).paper_config()
    config.update(saved)
    return config


def save(config: ml_collections.ConfigDict, run_dir: str) -> None:
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, CONFIG_FILE)
    temporary = f'{path}.{os.getpid()}.tmp'   # written whole, then renamed: never half a file
    with open(temporary, 'w') as f:
        json.dump(config.to_dict(), f, indent=2, sort_keys=True)
    os.replace(temporary, path)


def load(run_dir: str) -> ml_collections.ConfigDict:
    config = _saved(run_dir)
    if config is None:
        raise ConfigError(f'{os.path.join(run_dir, CONFIG_FILE)} not found: is {run_dir!r} a '
                          f'run directory?')
    return config
