"""Every input either does what it says or is refused in one line (issue 24).

Run by `launch/program.py` before any process starts, after absl has parsed the flags:

- the command line: positional arguments (an unquoted space, `--flag value` of a list), flags
  given an empty value, flags the chosen role or launcher would ignore (`ROLE_FLAGS`);
- the resolved config, by rules that hold for every field of every experiment, so that a field
  added later is checked too:
  * each field's declared range (every numeric field declares one, finite) and the relations
    between fields (each field's metadata, and each section's and experiment's RELATIONS);
  * the evaluation protocol exists and can score the run (`protocol`: the experiment's paper,
    the run's action set), and the budget reaches the first update;
  * bfloat16 only on a machine with bfloat16 units (`precision`, launch/processor.py);
  * every member of a sweep passes the experiment's `check` and the declared rules, as one run
    does.
Each rule raises `ConfigError`, whose message is the line the user sees.
"""
import copy
import os
from typing import Sequence

from absl import flags

from agents.core import config_checks
from agents.core import sweeps
from agents.core.config_checks import ConfigError
from launch import processor

# Which roles read each launch flag; a flag given to another role would be ignored.
ROLE_FLAGS = {
    'replay_address': ('replay', 'learner', 'actor'),
    'actor_id': ('actor',),
    'learner_id': ('learner', 'actor'),
    'replay_wait_s': ('learner', 'actor'),
    'launcher': ('local',),
    'ray_address': ('local',),
    'ray_cpus': ('local',),
}
RAY_FLAGS = ('ray_address', 'ray_cpus')   # read by --launcher=ray only
# Set in the environment, a program checks its input and stops there (tests of documented
# commands and of bad input: tests/test_documented_commands.py, tests/test_bad_input.py).
CHECK_ONLY = 'DISTRL_CHECK_ONLY'


def check_only(program: str) -> bool:
    """Whether `CHECK_ONLY` is set; if so, says that `program`'s input is good."""
    if not os.environ.get(CHECK_ONLY):
        return False
    print(f'{program}: the input is good (nothing run: {CHECK_ONLY} is set)')
    return True


def positional(argv: Sequence[str]) -> None:
    """Arguments absl did not take as flags (argv[0] is the program)."""
    if len(argv) > 1:
        raise ConfigError(f'unexpected argument {argv[1]!r}: every input is a --flag=value '
                          f'(quote a value with spaces, e.g. --sweep=\'a=1,2\')')


def leftover_arguments(argv: Sequence[str]) -> list[str]:
    """What absl leaves of `argv` after its flags: the program and any positional argument."""
    return copy.deepcopy(flags.FLAGS)(list(argv))


def command_line(argv: Sequence[str], role: str, launcher: str) -> None:
    """Positional arguments, empty values, and flags `role` (or `launcher`) ignores."""
    positional(leftover_arguments(argv))
    given = flags.FLAGS
    for name in given:
        flag = given[name]
        if flag.present and isinstance(flag.value, str) and not flag.value.strip():
            raise ConfigError(f'--{name}= is empty: give it a value, or leave it out for its '
                              f'default')
    for name, roles in ROLE_FLAGS.items():
        if name in given and given[name].present and role not in roles:
            raise ConfigError(f'--{name} is not read by --role={role} (only by --role='
                              f'{" or --role=".join(roles)}): leave it out')
    for name in RAY_FLAGS:
        if name in given and given[name].present and launcher != 'ray':
            raise ConfigError(f'--{name} is read by --launcher=ray only: add --launcher=ray, '
                              f'or leave it out')
    if 'replay_address' in given:
        replay_address(role, given['replay_address'].value)


def replay_address(role: str, address: str | None) -> None:
    """host:port for a learner or an actor; :port (or host:port) for the replay server, which
    listens on every interface; a port in 1-65535."""
    if role == 'local':
        return
    if not address:
        raise ConfigError(f'--role={role} needs --replay_address=host:port')
    host, colon, port = address.rpartition(':')
    if not colon or not port.isdigit() or (not host and role != 'replay') or ' ' in host:
        raise ConfigError(f'--replay_address={address} is not host:port (e.g. localhost:9000; '
                          f'--role=replay: :9000)')
    if not 1 <= int(port) <= 65535:
        raise ConfigError(f'--replay_address={address}: port {port} is not in 1-65535')


def budget(spec, config) -> None:
    """`total_frames` must reach the learner's first update (the experiment's
    `first_update_frames`)."""
    frames, counted = spec.first_update_frames(config)
    if config.total_frames < frames:
        raise ConfigError(f'--config.total_frames={config.total_frames} ends before the first '
                          f'update ({counted} = {frames} frames): raise it')


def protocol(spec, config, name: str, flag: str):
    """The evaluation protocol `name` (`flag`: the run's --config.eval_protocol, or
    launch.evaluate's --protocol), if it can score a run of `spec` with `config`: one of the
    experiment's paper that plays the action set the run's network acts on, from start states
    that are public. Another paper's protocol, or another action set, would score the run on a
    game it was not trained for."""
    from paper_tables import protocols  # pylint: disable=import-outside-toplevel
    try:
        found = protocols.get_protocol(name)
    except ValueError as e:
        raise ConfigError(f'{flag}: {e}') from None
    if found.human_starts:
        raise ConfigError(f'{flag}={name} needs human start states, which are not public; use '
                          f'the no-op protocol of the same table')
    own = protocols.get_protocol(spec.paper_config().eval_protocol)
    action_set = config.action_set if 'action_set' in config else own.action_set
    fitting = [p.name for p in protocols.PROTOCOLS.values()
               if (p.paper, p.action_set, p.human_starts) == (own.paper, action_set, False)]
    if not fitting:
        raise ConfigError(f'--config.action_set={action_set}: no {own.paper or "paper-less"} '
                          f'protocol plays it, so the run could not be evaluated; use '
                          f'--config.action_set={own.action_set}')
    if name not in fitting:
        whose = (f'{found.paper} (table {found.table}, ' if found.paper
                 else 'no paper (')
        raise ConfigError(f'{flag}={name} is a protocol of {whose}{found.action_set} action '
                          f'set), not of {spec.name} on the {action_set} action set; use '
                          f'{flag}={" or ".join(fitting)}')
    return found


def eval_protocol(spec, config) -> None:
    protocol(spec, config, config.eval_protocol, '--config.eval_protocol')


def precision(config, units: Sequence[str] | None = None) -> None:
    """`--config.precision=bfloat16` only where the machine has bfloat16 units (`units`: its
    own, launch/processor.py, unless given)."""
    if config.precision != 'bfloat16':
        return
    if not (processor.bfloat16_units() if units is None else units):
        raise ConfigError(
            f'--config.precision=bfloat16: this machine has no bfloat16 units (no '
            f'{" or ".join(processor.CPU_FLAGS)} among the flags of /proc/cpuinfo, no GPU of '
            f'compute capability {processor.GPU_CAPABILITY:g}+), where bfloat16 is emulated, '
            f'slower than float32: use --config.precision=float32')


def config_values(spec, config) -> None:
    """The rules every experiment's config obeys, on the run's config and on every member of
    its sweep (`spec`: launch/experiments.Experiment; `config` already passed `spec.check`)."""
    eval_protocol(spec, config)
    precision(config)
    members = spec.sweeps.members(config)
    for learner_id in range(len(members)):
        member = spec.sweeps.member_config(config, learner_id)
        try:
            if member is not config:
                spec.check(member)
            config_checks.declared(member)    # also where an experiment's check does not
            budget(spec, member)
        except ConfigError as e:
            if member is config:
                raise
            raise ConfigError(f'member {learner_id} of the sweep '
                              f'({sweeps.describe(members[learner_id])}): {e}') from None
