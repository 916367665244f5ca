"""The experiment registry: every paper experiment by name, with its paper config, presets,
checks and builder. Launch programs, evaluation and the runtime look experiments up here; a new
experiment is one entry (docs/architecture.md, "Where a new agent plugs in").
"""
import dataclasses
import importlib
from typing import Any, Callable, Mapping

import ml_collections

from agents.core import sweeps as sweeps_lib
from agents.core.config_checks import ConfigError


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    paper_config: Callable[[], ml_collections.ConfigDict]   # the paper's settings
    presets: Mapping[str, Callable[[ml_collections.ConfigDict], ml_collections.ConfigDict]]
    check: Callable[[ml_collections.ConfigDict], None]     # one-line ConfigErrors
    builder: Callable[[ml_collections.ConfigDict], Any]   # an agents.core.builders.Builder
    target_field: str          # the config field the program's --game / --task sets
    run_dir_prefix: str        # default run directory: runs/<prefix>_<target>
    fixed_on_resume: tuple[str, ...]  # fields a resumed run cannot change (its checkpoints')
    sweeps: sweeps_lib.Sweeps = sweeps_lib.NONE  # named grids (`--sweep`), sweepable fields


# name -> (config module, config function, builder module, builder class, target, prefix[,
# names]). The config module also holds PRESETS, `check` and FIXED_ON_RESUME, and SWEEPS where
# the experiment runs sweeps (agents/core/sweeps.py); an experiment sharing its config module
# with another names its own in `names` ({'presets': ..., 'check': ..., 'fixed_on_resume':
# ..., 'sweeps': ...}).
# Modules are imported on lookup, so that naming one experiment imports only its agent.
_REGISTRY = {
    'impala_atari': ('agents.impala.config', 'atari_experts', 'agents.impala.builder',
                     'ImpalaAtariBuilder', 'game', 'impala'),
    'apex_dqn_atari': ('agents.apex.config', 'atari_dqn', 'agents.apex.builder',
                       'ApexDQNAtariBuilder', 'game', 'apex_dqn'),
    'apex_dpg_control': ('agents.apex.config', 'control_dpg', 'agents.apex.builder',
                         'ApexDPGControlBuilder', 'task', 'apex_dpg'),
    'laser_atari': ('agents.laser.config', 'atari', 'agents.laser.builder',
                    'LaserAtariBuilder', 'game', 'laser'),
    'reactor_atari': ('agents.reactor.config', 'atari', 'agents.reactor.builder',
                      'ReactorAtariBuilder', 'game', 'reactor'),
    'impala_atari57': ('agents.impala.config', 'atari57', 'agents.impala.builder',
                       'ImpalaAtari57Builder', 'tasks', 'impala',
                       {'presets': 'ATARI57_PRESETS', 'check': 'check_atari57',
                        'fixed_on_resume': 'ATARI57_FIXED_ON_RESUME'}),
    'impala_dmlab30': ('agents.impala.config', 'dmlab30', 'agents.impala.builder',
                       'ImpalaDmLab30Builder', 'tasks', 'impala',
                       {'presets': 'DMLAB30_PRESETS', 'check': 'check_dmlab30',
                        'fixed_on_resume': 'DMLAB30_FIXED_ON_RESUME'}),
    # One level (IMPALA sec. 5.2): the DMLab-30 builder with a `tasks` of one level.
    'impala_dmlab': ('agents.impala.config', 'dmlab', 'agents.impala.builder',
                     'ImpalaDmLab30Builder', 'tasks', 'impala_dmlab',
                     {'presets': 'DMLAB_PRESETS', 'check': 'check_dmlab',
                      'fixed_on_resume': 'DMLAB_FIXED_ON_RESUME'}),
}

NAMES = tuple(_REGISTRY)


def get(name: str) -> Experiment:
    """The experiment called `name`; a one-line ConfigError for an unknown one."""
    if name not in _REGISTRY:
        raise ConfigError(f'unknown experiment {name!r}; known: {", ".join(NAMES)}')
    config_module, config_fn, builder_module, builder_class, target, prefix, *own = (
        _REGISTRY[name])
    config = importlib.import_module(config_module)
    names = {'presets': 'PRESETS', 'check': 'check', 'fixed_on_resume': 'FIXED_ON_RESUME',
             'sweeps': 'SWEEPS', **(own[0] if own else {})}
    return Experiment(
        name=name, paper_config=getattr(config, config_fn),
        presets=getattr(config, names['presets']), check=getattr(config, names['check']),
        fixed_on_resume=getattr(config, names['fixed_on_resume']),
        builder=_imported_on_call(builder_module, builder_class),
        target_field=target, run_dir_prefix=prefix,
        sweeps=getattr(config, names['sweeps'], sweeps_lib.NONE))


def _imported_on_call(module: str, name: str) -> Callable[[ml_collections.ConfigDict], Any]:
    """`module.name(config)`, the module imported on the first call: a builder brings in
    TensorFlow and Reverb, which checking a config does not need (bad input fails fast)."""
    def make(config: ml_collections.ConfigDict):
        return getattr(importlib.import_module(module), name)(config)
    return make
