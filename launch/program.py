"""What every experiment program shares: its role flags, the run spec, role dispatch.

A program (launch/impala_atari.py, ...) is one `run` call: its experiment (launch/experiments.py),
the flag naming what it trains on (`--game`, `--task`) and an example of `--config` (the paper
config, built once per process). `main` resolves the run spec (launch/configs.py) and runs the
role with it.

Bad input is found before TensorFlow and Reverb are imported (`main`), so its one-line error
comes in about a second.
"""
import os
import sys
from typing import NoReturn

import ml_collections
from absl import app
from absl import flags
from ml_collections import config_flags

from launch import configs
from launch import experiments
from launch import input_checks

ROLES = ('local', 'replay', 'learner', 'actor')

_PRESET = flags.DEFINE_string('preset', 'paper',
                              'paper: the paper settings; quick: a demo for a small machine; '
                              'tiny: seconds-long runs for tests.')
_RUN_DIR = flags.DEFINE_string('run_dir', None,
                               'Run directory (default runs/<experiment>_<game or task>).')
_ROLE = flags.DEFINE_enum('role', 'local', ROLES, 'Which role this process runs.')
_REPLAY_ADDRESS = flags.DEFINE_string('replay_address', None,
                                      'host:port of the replay server (roles other than local).')
_ACTOR_ID = flags.DEFINE_integer('actor_id', 0, 'Index of this actor (--role=actor).')
_LEARNER_ID = flags.DEFINE_integer('learner_id', 0,
                                   'Which learner this learner or actor belongs to, with '
                                   '--config.num_learners > 1.')
_SWEEP = flags.DEFINE_string('sweep', None, 'A sweep of learners sharing one replay server '
                             "(its help names the program's grids and fields).")
_LAUNCHER = flags.DEFINE_enum('launcher', 'local', ('local', 'ray'),
                              'Where --role=local places the roles: local (processes of this '
                              'machine) or ray (a Ray cluster; pip install -e .[ray]).')
_RAY_ADDRESS = flags.DEFINE_string('ray_address', 'auto',
                                   "--launcher=ray: the cluster's GCS address (host:6379), "
                                   "auto (the cluster this machine joined with `ray start`) "
                                   "or local (a one-machine cluster for this run).")
_RAY_CPUS = flags.DEFINE_string('ray_cpus', '',
                                '--launcher=ray: CPUs a role asks for, e.g. learner=4,'
                                'actor=0.5 (default replay=1,learner=2,actor=1).')
_REPLAY_WAIT_S = flags.DEFINE_float('replay_wait_s', 60.0,
                                    'How long a role waits for the replay server to answer.')


def define_config(experiment: experiments.Experiment, paper, example: str):
    """`--config`: the experiment's paper config `paper`, overridable field by field
    (`example`); `paper` itself stays the paper's (absl sets the overrides on a copy).

    A `--config.<field>` the config does not have is a one-line error here, before flag
    parsing would end in a traceback."""
    try:
        configs.check_fields(paper, experiment.name, sys.argv)
    except configs.ConfigError as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)
    config = config_flags.DEFINE_config_dict(
        'config', ml_collections.ConfigDict(paper.to_dict()),
        f'Overrides of the paper config, e.g. {example}.')
    _list_in_help()
    return config


def _list_in_help() -> None:
    """`--help` lists the flags defined here beside the program's own (absl lists only the
    main module's key flags; `--helpfull` lists everything)."""
    for flag in flags.FLAGS.flags_by_module_dict().get(__name__, []):
        flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)


def run(*, module: str, experiment: str, target: str, target_help: str, example: str) -> None:
    """A launch program: `--<target>` (what it trains on, e.g. --game) and `--config` (the
    paper config; `example` shows an override in its help), then `main` under absl."""
    spec = experiments.get(experiment)
    paper = spec.paper_config()
    flags.FLAGS['sweep'].help = sweep_help(spec.sweeps)
    target_flag = flags.DEFINE_string(target, None, target_help)
    config_flag = define_config(spec, paper, example)

    def run_main(argv):
        del argv
        main(module=module, experiment=spec, paper=paper, config_flag=config_flag,
             target_flag=target_flag)
    _usage_as_written()
    app.run(run_main)


def sweep_help(sweeps) -> str:
    """--sweep's help, from the experiment's own `Sweeps` (agents/core/sweeps.py)."""
    if not sweeps.sweepable:
        pbt = (' (a population of PBT instead: --config.pbt_population)'
               if sweeps.initial_population else '')
        return f'This experiment runs no sweeps{pbt}.'
    named = ', '.join(repr(name) for name in sweeps.named)
    grids = f'a named grid ({named}) or ' if named else ''
    return (f'A sweep of learners sharing one replay server: {grids}'
            f"'field=v1,v2;field=v1,v2' over {', '.join(sweeps.sweepable)}.")


_RESUME_AND_ROLES = """
Re-running with the same --run_dir resumes the run from its checkpoints: each learner's, and
the replay's where the agent checkpoints it. One role per machine: --role=replay
--replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
--replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""


def _usage_as_written() -> None:
    """The usage `--help` prints: the program's docstring and what every program shares
    (resume, roles). absl %-formats it (a '%s' is the program's path), which mangled "87.5%
    replay": doubled, each '%' prints as written."""
    program = sys.modules['__main__']
    program.__doc__ = ((program.__doc__ or '') + _RESUME_AND_ROLES).replace('%', '%%')


def main(*, module: str, experiment: experiments.Experiment, paper, config_flag,
         target_flag) -> None:
    """Resolves the run spec and runs this process's role; one-line errors, exit code 2.

    `target_flag` (e.g. --game) overrides the experiment's target field; the default run
    directory is runs/<run_dir_prefix>_<target>.
    """
    target = target_flag.value or experiment.target(paper)
    run_dir = _RUN_DIR.value or os.path.join('runs', f'{experiment.run_dir_prefix}_{target}')
    try:
        input_checks.command_line(sys.argv, _ROLE.value, _LAUNCHER.value)
        spec = configs.resolve(experiment, paper=paper, run_dir=run_dir, preset=_PRESET.value,
                               fields=configs.overrides(config_flag), target=target_flag.value,
                               sweep=_SWEEP.value)
    except configs.ConfigError as e:
        _exit(e, 2)
    if input_checks.check_only(module):
        return
    # pylint: disable=import-outside-toplevel  (TensorFlow and Reverb: once the input is good)
    from agents.core import learner as learner_lib
    from launch import runtime
    try:
        runtime.run_role(module=module, spec=spec, role=_ROLE.value,
                         replay_address=_REPLAY_ADDRESS.value, actor_id=_ACTOR_ID.value,
                         learner_id=_LEARNER_ID.value, replay_wait_s=_REPLAY_WAIT_S.value,
                         launcher=_launcher(module, spec))
    except (configs.ConfigError, runtime.LaunchError) as e:
        _exit(e, 2)
    except (learner_lib.NonFiniteError, learner_lib.CheckpointError) as e:
        _exit(e, runtime.FATAL_EXIT_CODE)
    except learner_lib.ReplayBehindError as e:
        _exit(e, runtime.REPLAY_ROLLBACK_EXIT_CODE)


def _exit(error: Exception, code: int) -> NoReturn:
    """The one-line error and the exit code."""
    print(f'error: {error}', file=sys.stderr)
    sys.exit(code)


def _launcher(module: str, spec: configs.RunSpec):
    """What makes `--role=local`'s launcher: None for local processes (the default)."""
    if _LAUNCHER.value == 'local':
        return None
    from launch import runtime  # pylint: disable=import-outside-toplevel
    try:
        from launch import ray_launcher  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise runtime.LaunchError('--launcher=ray needs Ray: pip install -e .[ray] (on every '
                                  'machine of the cluster)') from None
    return lambda: ray_launcher.RayLauncher(
        module, spec.run_dir, num_learners=spec.config.num_learners,
        num_actors=spec.config.num_actors,
        address=_RAY_ADDRESS.value, cpus=_RAY_CPUS.value)
