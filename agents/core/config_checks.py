"""One-line checks of experiment configs, run before any process starts.

Each agent's `config.py` has a `check(config)` built from these; the experiment registry
(launch/experiments.py) runs it. A failed check raises `ConfigError`, whose message is the one
line the user sees.

`declared` checks every field against one declaration: what its metadata allows (a `Rule`'s
range or choices, agents/core/typed_config.py; every range is finite), and the relations its
sections and its experiment declare (`RELATIONS`); the rules and relations that several
sections share are named here. A field's type is its paper value's (launch/configs.py); every
numeric field declares a rule (tests/test_typed_config.py).
"""
import dataclasses
import math
from typing import Callable


class ConfigError(ValueError):
    """A one-line, user-facing reason why a config cannot run."""


@dataclasses.dataclass(frozen=True)
class Range:
    """A finite value with low <= value <= high (strictly where `open_low` / `open_high`). No
    declared field takes an infinity: the papers' settings are all finite, and an infinite one
    stalls a run (Ape-X's `samples_per_insert`=inf: actors wait forever, issue 38)."""
    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False

    def holds(self, value) -> bool:        # False for NaN and the infinities
        return math.isfinite(value) and self.within(value)

    def within(self, value) -> bool:
        """Between the bounds, finite or not."""
        low = value > self.low if self.open_low else value >= self.low
        high = value < self.high if self.open_high else value <= self.high
        return low and high

    def refusal(self, value) -> str:
        """What a `value` that does not hold must be instead."""
        if math.isinf(value) and self.within(value) and self != FINITE:
            return f'a finite number {self}'
        return str(self)

    def __str__(self) -> str:
        if self.low == -math.inf and self.high == math.inf:
            return 'a finite number'
        if self.high == math.inf:
            return f'{">" if self.open_low else ">="} {self.low:g}'
        if self.low == -math.inf:
            return f'{"<" if self.open_high else "<="} {self.high:g}'
        return (f'in {"(" if self.open_low else "["}{self.low:g}, {self.high:g}'
                f'{")" if self.open_high else "]"}')


UNIT = Range(0, 1)
POSITIVE = Range(0, open_low=True)
NON_NEGATIVE = Range(0)
COUNT = Range(1)
FINITE = Range()


@dataclasses.dataclass(frozen=True)
class Rule:
    """A numeric field's range, and what the range means (in the one line that refuses a
    value outside it)."""
    range: Range
    meaning: str

    def __str__(self) -> str:
        return f'{self.range} ({self.meaning})'


# The rules many fields share: a field's metadata names one (agents/core/typed_config.py).
# The optimizers' and the schedule's:
DECAY = Rule(UNIT, "a moving average's decay")
OPTIMIZER_OFFSET = Rule(POSITIVE, "an offset of the optimizer's denominator")
STEP_SIZE = Rule(POSITIVE, 'a step size')
BUDGET = Rule(COUNT, "the run's budget")
ANNEALING = Rule(COUNT, 'the frames over which the learning rate anneals to 0')
# The losses':
DISCOUNT = Rule(UNIT, 'the chance the return goes on at each step')
LOSS_WEIGHT = Rule(NON_NEGATIVE, 'a loss weight; 0: the term left out')
CLIP_OR_NONE = Rule(NON_NEGATIVE, 'a clipping bound; 0: no clipping')

# The sizes and counts of the runtime, the replays and the learners':
PROCESSES = Rule(COUNT, 'a number of processes or parts')
SIZE = Rule(COUNT, 'a size')
CAPACITY = Rule(COUNT, 'a capacity')
LENGTH = Rule(COUNT, 'a length in steps')
PERIOD = Rule(COUNT, 'a period in steps')
PROBABILITY = Rule(UNIT, 'a probability')
TRACE = Rule(UNIT, 'a trace coefficient')


def rule(config, field: str):
    """What `field` of `config` allows: its metadata's rule or choices
    (agents/core/typed_config.py); None if it declares neither."""
    return type(config).about(field).allowed


@dataclasses.dataclass(frozen=True)
class Relation:
    """A relation between fields of a config, declared by the section (or, across sections,
    the experiment) that has them (`RELATIONS`, agents/core/typed_config.py): whether `config`
    keeps it, and the line when it does not."""
    holds: Callable
    line: Callable


# The relations several sections declare, each among its own fields.
BATCH_WITHIN_REPLAY = Relation(
    lambda c: c.batch_size <= c.replay_capacity,
    lambda c: f'--config.batch_size={c.batch_size} is more than --config.replay_capacity='
              f'{c.replay_capacity} holds: lower the batch or raise the capacity')
REPLAY_FILLS_BEFORE_LEARNING = Relation(
    lambda c: c.min_replay_size <= c.replay_capacity,
    lambda c: f'--config.min_replay_size={c.min_replay_size} exceeds --config.replay_capacity='
              f'{c.replay_capacity}: learning would never start; lower it')
# Batches take round(proportion x batch) from replay, the rest from the online queue.
REPLAY_AND_ONLINE_IN_EVERY_BATCH = Relation(
    lambda c: not c.replay_proportion or (
        1 <= round(c.replay_proportion * c.batch_size) < c.batch_size),
    lambda c: f'--config.replay_proportion={c.replay_proportion} of --config.batch_size='
              f'{c.batch_size} is {c.replay_proportion * c.batch_size:g} trajectories: each '
              f'batch needs at least one replayed and one online trajectory (batches take '
              f'round(proportion x batch) from replay)')


def declared(config) -> None:
    """Every field of `config` as its metadata allows (`rule`): a numeric one
    finite and in its range, a field of choices one of them; then every relation its sections
    and its experiment declare (`RELATIONS`), each on the section or experiment declaring it."""
    for field, value in config.items():
        found = rule(config, field)
        if isinstance(found, tuple):
            one_of(config, field, found)
        elif found and is_number(value) and not found.range.holds(value):
            raise ConfigError(f'--config.{field} must be {found.range.refusal(value)}, got '
                              f'{value} ({found.meaning})')
    for part in (*config.members().values(), config):
        for relation in type(part).relations():
            if not relation.holds(part):
                raise ConfigError(relation.line(part))


def first_batch_frames(config) -> tuple[int, str]:
    """Frames the actors play before the first update of a learner fed their unrolls (one
    batch of them), and how that is counted: an experiment's `first_update_frames`."""
    repeat = config.action_repeat
    return (config.batch_size * config.unroll_length * repeat,
            f'one batch of {config.batch_size} unrolls x {config.unroll_length} steps x '
            f'action_repeat {repeat}')


def replay_start_frames(config) -> tuple[int, str]:
    """Frames the actors play before the first update of a learner that waits for its replay
    to hold `min_replay_size` steps, and how that is counted."""
    repeat = config.action_repeat
    return (config.min_replay_size * repeat,
            f'--config.min_replay_size={config.min_replay_size} steps x action_repeat {repeat}')


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def positive(config, *fields) -> None:
    for field in fields:
        if not config[field] > 0:
            raise ConfigError(f'--config.{field} must be > 0, got {config[field]}')


def one_of(config, field, choices) -> None:
    if config[field] not in choices:
        allowed = ', '.join(repr(c) for c in choices)
        raise ConfigError(f'--config.{field} must be one of {allowed}, got {config[field]!r}')


def runtime(config) -> None:
    """Every field's declared range, choices and relations (`declared`), and the runtime
    section's XLA setting."""
    declared(config)
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


def environment(check: Callable, config):
    """`check(config)`: what an environment resolves of its settings (environments/settings.py),
    whose ValueError is the one line the user sees; the config it returns."""
    try:
        return check(config)
    except ValueError as e:
        raise ConfigError(str(e)) from None
