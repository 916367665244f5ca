"""The runtime fields of every experiment's config: how this machine runs a paper experiment,
not the paper. Declared once here (`FIELDS`); an agent's config function adds them with `add`,
naming only the values it sets otherwise, and its presets size them with `quick` and `tiny`. The
launcher, learners and actors read them as plain fields (`config.num_actors`), never with a
default of their own; `config_checks.runtime` checks them.
"""
from typing import Any

import ml_collections

# name -> (default, what it is). None: every experiment names its own.
FIELDS: dict[str, tuple[Any, str]] = {
    'num_learners': (1, 'learners on one replay server, each with its own actors'),
    'num_actors': (2, 'actor processes per learner'),
    'envs_per_actor': (8, 'environments stepped per batched policy call'),
    'jit_compile': ('auto', "XLA for the learner update: 'auto' = on iff a GPU"),
    'precision': ('float32', "what the learner's and actors' networks compute in: 'float32' "
                             "(the papers') or 'bfloat16' (variables, losses and RL operators "
                             "stay float32: agents/networks/layers.py)"),
    'max_nonfinite_updates': (10, 'consecutive skipped (non-finite) updates: stop'),
    'checkpoint_interval_s': (600.0, 'seconds between learner checkpoints'),
    'log_interval_s': (10.0, 'seconds between progress lines and log rows'),
    'eval_protocol': (None, 'how the run is evaluated (paper_tables/protocols.py)'),
    'eval_episodes': (-1, "evaluation episodes; -1: the protocol's episode count"),
    'sweep': ('', "a grid of learners sharing one replay (--sweep; agents/core/sweeps.py): "
                  "its name or 'field=v1,v2;...'; '' trains one agent"),
    'pbt_population': (0, 'population-based training: its members, each a learner of the run '
                          '(agents/core/population.py); 0: off'),
}


def add(c: ml_collections.ConfigDict, **values) -> None:
    """Adds every runtime field to `c`: `values` where given, else its default."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise ValueError(f'not runtime fields: {unknown}; known: {sorted(FIELDS)}')
    for name, (default, _) in FIELDS.items():
        value = values.get(name, default)
        if value is None:
            raise ValueError(f'runtime field {name!r} has no default: the config must give it')
        c[name] = value


def quick(c: ml_collections.ConfigDict, **values) -> ml_collections.ConfigDict:
    """A `--preset=quick` config: a copy of `c` for a small machine, which checkpoints every
    2 minutes, with `values` (the preset's own fields)."""
    return _preset(c, {'checkpoint_interval_s': 120.0, **values})


def tiny(c: ml_collections.ConfigDict, **values) -> ml_collections.ConfigDict:
    """A `--preset=tiny` config, for seconds-long test runs: a copy of `c` with one actor of
    two environments, frequent checkpoints and logs, one evaluation episode, then `values`
    (the preset's own fields)."""
    return _preset(c, {'num_actors': 1, 'envs_per_actor': 2, 'checkpoint_interval_s': 5.0,
                       'log_interval_s': 1.0, 'eval_episodes': 1, **values})


def _preset(c: ml_collections.ConfigDict, values: dict) -> ml_collections.ConfigDict:
    """A copy of `c` with `values`, each a field `c` has."""
    c = ml_collections.ConfigDict(c.to_dict())
    for name, value in values.items():
        if name not in c:
            raise ValueError(f'a preset sets {name!r}, which the config does not have')
        c[name] = value
    return c
