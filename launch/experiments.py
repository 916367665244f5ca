"""The experiment registry: every paper experiment by name, with its paper config, presets,
checks and builder. Launch programs, evaluation and the runtime look experiments up here; a new
experiment is one entry (docs/architecture.md, "Where a new agent plugs in"), in `REGISTRY` or,
for an agent outside this repository, added by its launch program with `register`.

An entry composes its builder from three pieces, none inheriting another: the agent's builder
(given the config), an environment piece (given the config's `environment` section and its
target field, the game, task or tasks: environments/) and a network factory (given the piece's
`environment_specs()`, the builder's `network_settings()` and the runtime's precision).
"""
import dataclasses
import importlib
from typing import Any, Callable, Mapping

from agents.core import sweeps as sweeps_lib
from agents.core import typed_config
from agents.core.config_checks import ConfigError


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    paper_config: type[typed_config.Config]   # called: the paper's settings
    presets: Mapping[str, Callable[[typed_config.Config], typed_config.Config]]
    check: Callable[[typed_config.Config], typed_config.Config]  # one-line ConfigErrors
    builder: Callable[[typed_config.Config], Any]   # config -> its composed Builder
    target_field: str          # the config field the program's --game / --task sets
    run_dir_prefix: str        # default run directory: runs/<prefix>_<target>
    # config -> (frames before the learner's first update, how they are counted): the
    # launcher refuses a budget below them.
    first_update_frames: Callable[[typed_config.Config], tuple[int, str]]
    sweeps: sweeps_lib.Sweeps = sweeps_lib.NONE  # named grids (`--sweep`), sweepable fields

    @property
    def fixed_on_resume(self) -> tuple[str, ...]:
        """The fields a resumed run cannot change (what its checkpoints and tables hold):
        their metadata's."""
        return self.paper_config.fixed_on_resume()

    def target(self, config: typed_config.Config) -> str:
        """What a run of this experiment trains on: its game, task, level or tasks."""
        return config[self.target_field]


@dataclasses.dataclass(frozen=True)
class Entry:
    """One experiment of the registry, by module and attribute names: the modules are imported
    on lookup (`get`), so that naming one experiment imports only its agent, and a builder
    (TensorFlow, Reverb) only when a run is built."""
    config_module: str         # holds the names below
    paper_config: str          # the config class (agents/core/typed_config.py)
    builder: str               # 'module:Class', an agents.core.builders.Builder
    environments: str          # 'module:callable', (environment section, target) -> a piece
    network: str               # 'module:callable', (specs, settings, precision) -> network
    target_field: str
    run_dir_prefix: str
    presets: str = 'PRESETS'
    check: str = 'check'
    first_update_frames: str = 'first_update_frames'
    sweeps: str | None = None  # Sweeps (agents/core/sweeps.py); None: no sweeps, no PBT


_IMPALA = 'agents.impala.config'
_IMPALA_BUILDER = 'agents.impala.builder:ImpalaBuilder'
_LASER_BUILDER = 'agents.laser.builder:LaserBuilder'
_UNROLL_NETWORK = 'agents.impala.builder:unroll_network'
_ATARI = 'environments.atari:AtariGames'
_DMLAB = 'environments.dmlab:DmLabLevels'
REGISTRY = {
    'impala_atari': Entry(_IMPALA, 'ImpalaAtari', _IMPALA_BUILDER, _ATARI, _UNROLL_NETWORK,
                          target_field='game', run_dir_prefix='impala', sweeps='SWEEPS'),
    'apex_dqn_atari': Entry('agents.apex.config', 'ApexDQNAtari',
                            'agents.apex.builder:ApexDQNBuilder', _ATARI,
                            'agents.apex.builder:dueling_network', target_field='game',
                            run_dir_prefix='apex_dqn', presets='DQN_PRESETS',
                            check='check_dqn'),
    'apex_dpg_control': Entry('agents.apex.config', 'ApexDPGControl',
                              'agents.apex.builder:ApexDPGBuilder',
                              'environments.control:ControlTask',
                              'agents.apex.builder:actor_critic_network', target_field='task',
                              run_dir_prefix='apex_dpg', presets='DPG_PRESETS',
                              check='check_dpg'),
    'laser_atari': Entry('agents.laser.config', 'LaserAtari', _LASER_BUILDER, _ATARI,
                         _UNROLL_NETWORK, target_field='game', run_dir_prefix='laser',
                         sweeps='SWEEPS'),
    'laser_dmlab30': Entry('agents.laser.config', 'LaserDmLab30', _LASER_BUILDER, _DMLAB,
                           _UNROLL_NETWORK, target_field='tasks', run_dir_prefix='laser',
                           presets='DMLAB30_PRESETS', check='check_dmlab30',
                           sweeps='DMLAB30_SWEEPS'),
    'reactor_atari': Entry('agents.reactor.config', 'ReactorAtari',
                           'agents.reactor.builder:ReactorBuilder', _ATARI,
                           'agents.reactor.builder:reactor_network', target_field='game',
                           run_dir_prefix='reactor'),
    'impala_atari57': Entry(_IMPALA, 'ImpalaAtari57', _IMPALA_BUILDER,
                            'environments.atari:multi_task_games', _UNROLL_NETWORK,
                            target_field='tasks', run_dir_prefix='impala',
                            presets='ATARI57_PRESETS', check='check_atari57', sweeps='SWEEPS'),
    'impala_dmlab30': Entry(_IMPALA, 'ImpalaDmLab30', _IMPALA_BUILDER, _DMLAB, _UNROLL_NETWORK,
                            target_field='tasks', run_dir_prefix='impala',
                            presets='DMLAB30_PRESETS', check='check_dmlab30', sweeps='SWEEPS'),
    # One level (IMPALA sec. 5.2): DMLab-30's levels piece with a `tasks` of one level.
    'impala_dmlab': Entry(_IMPALA, 'ImpalaDmLab', _IMPALA_BUILDER, _DMLAB, _UNROLL_NETWORK,
                          target_field='tasks', run_dir_prefix='impala_dmlab',
                          presets='DMLAB_PRESETS', check='check_dmlab', sweeps='SWEEPS'),
}

NAMES = tuple(REGISTRY)     # this repository's experiments


def register(name: str, entry: Entry) -> None:
    """Adds the experiment `name`: how an agent outside this repository plugs in. Its launch
    program calls this when imported, so that every role the launcher starts from it
    (`python -m <program> --role=...`) has the entry; a one-line ConfigError for a name
    already taken."""
    if name in REGISTRY:
        raise ConfigError(f'experiment {name!r} is already registered; choose another name')
    REGISTRY[name] = entry


def get(name: str) -> Experiment:
    """The experiment called `name`; a one-line ConfigError for an unknown one."""
    if name not in REGISTRY:
        raise ConfigError(f'unknown experiment {name!r}; known: {", ".join(REGISTRY)}')
    entry = REGISTRY[name]
    config = importlib.import_module(entry.config_module)
    return Experiment(
        name=name, paper_config=getattr(config, entry.paper_config),
        presets=getattr(config, entry.presets), check=getattr(config, entry.check),
        first_update_frames=getattr(config, entry.first_update_frames),
        builder=_composed(entry),
        target_field=entry.target_field, run_dir_prefix=entry.run_dir_prefix,
        sweeps=getattr(config, entry.sweeps) if entry.sweeps else sweeps_lib.NONE)


def _composed(entry: Entry) -> Callable[[typed_config.Config], Any]:
    """config -> the entry's builder, composed with its environment piece and network
    factory; their modules imported on the first call: a builder brings in TensorFlow and
    Reverb, which checking a config does not need (bad input fails fast)."""
    def make(config: typed_config.Config):
        builder, environments, network = (_named(path) for path in (
            entry.builder, entry.environments, entry.network))
        return builder(config, environments(config.environment,
                                            getattr(config, entry.target_field)), network)
    return make


def _named(path: str):
    module, name = path.split(':')
    return getattr(importlib.import_module(module), name)
