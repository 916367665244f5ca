"""The run spec: a run's config, resolved once by the process that launches it.

The launching process (`--role=local`, or a role started by hand) resolves, in this order, the
run directory's saved `config.json` (resuming) or else the paper's config with the chosen
preset, then every `--config.<field>` the user gave (ml_collections' parsed overrides), the
program's target (--game, --task, ...) and --sweep, into one checked `RunSpec`, and writes it to
RUN_DIR/config.json (`RunSpec.write`). Roles started by a launcher get only --run_dir and their
role flags: their spec is the saved one, unchanged, and they write nothing. Evaluation and the
results rows read the saved spec (`load`); a learner's fitness takes its spec's target.
"""
import dataclasses
import difflib
import importlib.util
import json
import os
from typing import Mapping, Sequence

from absl import flags
from ml_collections import config_flags

from agents.core import typed_config
from agents.core.config_checks import ConfigError  # noqa: F401  (raised to launch programs)
from launch import experiments
from launch import input_checks
from paper_tables import runs

CONFIG_FILE = runs.CONFIG_FILE
# Fields added since runs were first saved whose earlier behaviour another saved field gave:
# such a run resumes with that field's value, not the paper's. `anneal_frames` split the
# learning rate's horizon from the budget `total_frames` (issue 36).
_WAS = {'anneal_frames': 'total_frames'}


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run, resolved and checked: what every role of it runs with."""
    experiment: experiments.Experiment
    run_dir: str
    config: typed_config.Config   # frozen (agents/core/typed_config.py)
    saved: Mapping | None     # RUN_DIR/config.json as found (None: a new run)

    @property
    def target(self) -> str:
        """What the run trains on (its experiment's target field)."""
        return self.experiment.target(self.config)

    def write(self) -> None:
        """RUN_DIR/config.json := the spec, where the file does not hold it already (a role
        started by a launcher resolves the saved spec unchanged, and writes nothing)."""
        if self.saved is None or _json(self.config.to_dict()) != _json(self.saved):
            save(self.config, self.run_dir)


def _json(value) -> str:
    return json.dumps(value, indent=2, sort_keys=True)


def check_fields(config: typed_config.Config, experiment: str, argv: Sequence[str]) -> None:
    """A one-line ConfigError for a `--config.<field>` that `config` does not have (say,
    --config.core=lstm for an agent whose networks are feed-forward only), or whose value is
    not of the field's type (`--config.learning_rate=abc`, `--config.batch_size=1.5`).

    The one reader of raw `argv`: it runs before absl parses the flags, where such a flag
    would end in absl's traceback; everything after parsing reads `overrides`."""
    for field, value in _field_values(argv):
        if field not in config:
            near = difflib.get_close_matches(field, list(config), n=3)
            hint = f'; did you mean: {", ".join(near)}?' if near else ''
            raise ConfigError(f'--config.{field}: {experiment} has no field {field!r}{hint}')
        if field == 'experiment' and value != experiment:
            raise ConfigError(f'--config.experiment: this program runs {experiment}; run '
                              f'launch.{value} for another experiment')
        if value is not None:
            _check_type(field, value, config[field])


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
        if arg.startswith('--config.'):
            field, equals, value = arg[len('--config.'):].partition('=')
            found.append((field, value if equals else None))
    return found


def overrides(config_flag) -> dict:
    """{field path: value} of every `--config.<path>` absl parsed for `config_flag`."""
    return dict(config_flags.get_override_values(flags.FLAGS[config_flag.name]))


def resolve(experiment: experiments.Experiment, *, paper: typed_config.Config,
            run_dir: str, preset: str = 'paper', fields: Mapping | None = None,
            target: str | None = None, sweep: str | None = None,
            resume_hint: bool = True) -> RunSpec:
    """The checked spec of a run of `experiment` in `run_dir`: the run's saved config when
    resuming, else `preset` of the paper config `paper` (the experiment's, built once by the
    caller); then `fields` (the user's `--config.<field>`s, `overrides`), `target` (the
    program's --game or --task) and `sweep` (--sweep, which sets the number of learners).
    `resume_hint`: a run of another experiment in `run_dir` is refused with the program that
    resumes it, where launch/ has one."""
    saved_experiment, _, saved = _read(run_dir) or (None, None, None)
    if saved is not None and saved_experiment.name != experiment.name:
        program = f'launch.{saved_experiment.name}'
        hint = (f'resume it with {program}, or '
                if resume_hint and importlib.util.find_spec(program) else '')
        raise ConfigError(f'{run_dir} holds a run of {saved_experiment.name}, not of '
                          f'{experiment.name}: {hint}choose another --run_dir')
    config = paper
    resumed = None
    if saved is not None:
        config = resumed = paper.replace(**saved)   # fields added since: their paper values
    else:
        if preset not in experiment.presets:
            raise ConfigError(f'unknown --preset={preset!r}; choose one of: '
                              f'{", ".join(experiment.presets)}')
        config = experiment.presets[preset](config)
    given = dict(fields or {})
    if target:
        given[experiment.target_field] = target
    if sweep is not None:
        given['sweep'] = sweep
    config = config.replace(**given)
    if config.sweep and not experiment.sweeps.sweepable:
        raise ConfigError(f'--sweep: {experiment.name} runs no sweeps')
    if config.pbt_population and not experiment.sweeps.initial_population:
        raise ConfigError(f'--config.pbt_population={config.pbt_population}: {experiment.name} '
                          f"has no population-based training (IMPALA's and LASER on DMLab-30 "
                          f'have); leave it at 0')
    if config.sweep:
        # A sweep's members are the run's learners (agents/core/sweeps.py).
        config = config.replace(num_learners=len(experiment.sweeps.members(config)))
    config = experiment.check(config)
    _check_resume(experiment, config, run_dir, resumed)  # another run's first: its line says why
    input_checks.config_values(experiment, config)
    return RunSpec(experiment, run_dir, config, saved)


def _check_resume(experiment, config: typed_config.Config, run_dir: str,
                  saved: typed_config.Config | None) -> None:
    """A one-line ConfigError where a checked `config` changes a field of the experiment's
    `fixed_on_resume` (what shapes the checkpointed network and tables) from the run's saved
    config."""
    if saved is None:
        return
    target_first = sorted(experiment.fixed_on_resume, key=lambda f: f != experiment.target_field)
    for field in target_first:
        if field in config and config[field] != saved[field]:
            raise ConfigError(
                f'--config.{field}={config[field]} cannot change when resuming: {run_dir} was '
                f'trained with {field}={saved[field]!r}; use another --run_dir for a new run')


def precision_note(spec: RunSpec) -> str | None:
    """The line of a run resumed in another `precision` than its saved config's (it may: the
    checkpoints are float32 and read back in either, agents/networks/layers.py); None
    otherwise. Runs saved before the field existed trained in float32."""
    if spec.saved is None:
        return None
    before = spec.saved.get('precision', 'float32')
    if before == spec.config.precision:
        return None
    return (f'resuming in precision {spec.config.precision}: {spec.run_dir} trained in '
            f'{before} until now (its float32 checkpoints read back in either)')


def _read(run_dir: str) -> tuple[experiments.Experiment, typed_config.Config, dict] | None:
    """The run saved in `run_dir` (its config.json, read once): its experiment, that
    experiment's paper config and the saved fields; None if there is none; one line if the file
    is not a run's, or a field is not its experiment's or holds another type than its paper
    value (a file edited by hand)."""
    try:
        saved = runs.read_config(run_dir)
    except ValueError as e:
        raise ConfigError(f'{e}: repair it, or delete it to start the run afresh') from None
    if saved is None:
        return None
    path = os.path.join(run_dir, CONFIG_FILE)
    experiment = experiments.get(saved['experiment'])   # one line for an unknown experiment
    paper = experiment.paper_config()
    for field, value in saved.items():
        if field not in paper:
            raise ConfigError(f'{path}: "{field}" is not a field of {experiment.name}: delete '
                              f'it (a file edited by hand?)')
        _check_saved_type(path, field, value, paper[field])
    for field, was in _WAS.items():
        if field in paper and field not in saved and was in saved:
            saved[field] = saved[was]
    return experiment, paper, saved


_KINDS = {bool: 'true or false', int: 'an integer', float: 'a number', str: 'a string'}


def _check_saved_type(path: str, field: str, value, default) -> None:
    """A field of a saved config (`path`, perhaps edited by hand) must hold the type of its
    paper value `default`, as `--config.<field>` must: an integer field refuses a float, even an
    integral one (`2e7`, which the command line refuses too), and a numeric field a boolean."""
    kind = type(default)
    allowed = (int, float) if kind is float else kind
    if kind not in _KINDS or (isinstance(value, allowed)
                              and isinstance(value, bool) == isinstance(default, bool)):
        return
    if isinstance(value, float) and value.is_integer() and kind is int:
        hint = f'write {int(value)}'
    elif kind is str and isinstance(value, (int, float)):
        hint = 'write it in quotes'
    else:
        hint = 'repair it'
    raise ConfigError(f'{path}: "{field}": {json.dumps(value)} is not {_KINDS[kind]}: {hint}')


def save(config: typed_config.Config, run_dir: str) -> None:
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, CONFIG_FILE)
    temporary = f'{path}.{os.getpid()}.tmp'   # written whole, then renamed: never half a file
    with open(temporary, 'w') as f:
        json.dump(config.to_dict(), f, indent=2, sort_keys=True)
    os.replace(temporary, path)


def load(run_dir: str) -> RunSpec:
    """The spec saved in `run_dir`, with fields added to its experiment since then at their
    paper values: what evaluation and the results rows read."""
    found = _read(run_dir)
    if found is None:
        raise ConfigError(f'{os.path.join(run_dir, CONFIG_FILE)} not found: is {run_dir!r} a '
                          f'run directory?')
    experiment, paper, saved = found
    return RunSpec(experiment, run_dir, paper.replace(**saved), saved)
