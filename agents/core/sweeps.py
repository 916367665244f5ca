"""Hyperparameter sweeps run as one experiment: every member is a learner of the run, with its
own actors and hyperparameters, on one replay server (LASER sec. 5.1: "multiple agents start
from-scratch, run concurrently at identical speed"; sec. 5.4 shares their replay).

A sweep is named in the config's `sweep` field: a grid of the agent's config module (`SWEEPS`,
e.g. 'paper'), or written inline as `field=v1,v2;other=v3,v4`. Members are the grid's
Cartesian product in the order written, the first field varying slowest; member i is learner i.
A named sweep may instead be `Sampled`: its members are draws from the experiment's
`initial_population` distributions, as a population's first members are.

A population of population-based training (`pbt_population`; agents/core/population.py) is
the same seam: member i is learner i, starting from the i-th draw of the experiment's
`initial_population` distributions (IMPALA table D.1), its hyperparameters adapted from there.
"""
import dataclasses
import difflib
import itertools
from typing import Mapping, Sequence


from agents.core import population
from agents.core import typed_config
from agents.core.config_checks import ConfigError

Grid = Mapping[str, Sequence]


@dataclasses.dataclass(frozen=True)
class Sampled:
    """A named sweep of `size` members drawn from the experiment's `initial_population`
    distributions, seeded by the config's `seed`, in place of a grid (LASER sec. 5.1: DMLab-30
    sweeps "contain 10 agents with hyper-parameters sampled similar as Espeholt et al.")."""
    size: int


@dataclasses.dataclass(frozen=True)
class Sweeps:
    """An experiment's named grids, and the fields a sweep may vary: those that learners can
    differ in while sharing one replay server, its tables and the actors' settings."""
    named: Mapping[str, Grid | Sampled]
    sweepable: tuple[str, ...]
    # A PBT population's starting distributions: field -> population.LogUniform, Categorical.
    initial_population: Mapping[str, object] = dataclasses.field(default_factory=dict)

    def grid(self, config: typed_config.Config) -> Grid:
        """The grid the runtime's `sweep` names or writes; {} for no sweep. One-line
        ConfigErrors."""
        spec = config.runtime.sweep
        if not spec:
            return {}
        if spec in self.named:
            result = self.named[spec]
        elif '=' in spec:
            result = _split(spec)
        else:
            raise ConfigError(f'unknown sweep {spec!r}: name one of '
                              f'{", ".join(self.named) or "(none)"}, or write a grid as '
                              f'field=v1,v2;field=v1,v2')
        for field, values in result.items():
            if field not in self.sweepable:
                near = difflib.get_close_matches(field, self.sweepable, n=3)
                hint = f'did you mean: {", ".join(near)}? ' if near else ''
                raise ConfigError(f'sweep {spec!r} names {field!r}, which is not a field a '
                                  f'sweep can vary ({hint}sweepable: '
                                  f'{", ".join(self.sweepable)})')
            if not values:
                raise ConfigError(f'sweep {spec!r} gives no values for {field!r}')
        return {field: [_value(v, field, config[field]) if isinstance(v, str) else v
                        for v in values] for field, values in result.items()}

    def members(self, config: typed_config.Config) -> list[dict]:
        """The grid's points, one dict of field values per member (a PBT population's starting
        values); [{}] for no sweep."""
        if population.enabled(config):
            runtime = config.runtime
            return population.initial_population(self.initial_population,
                                                 runtime.pbt_population, runtime.seed)
        sampled = self.named.get(config.runtime.sweep)
        if isinstance(sampled, Sampled):
            return population.initial_population(self.initial_population, sampled.size,
                                                 config.runtime.seed)
        sweep_grid = self.grid(config)
        fields = list(sweep_grid)
        return [dict(zip(fields, values))
                for values in itertools.product(*(sweep_grid[f] for f in fields))]

    def member_config(self, config: typed_config.Config,
                      learner_id: int) -> typed_config.Config:
        """The config of learner `learner_id`: the run's config with its member's values."""
        points = self.members(config)
        if len(points) == 1:
            return config
        if not 0 <= learner_id < len(points):
            what = f'sweep {config.runtime.sweep!r}' if config.runtime.sweep else 'the population'
            raise ConfigError(f'--learner_id={learner_id} is out of range: {what} has '
                              f'{len(points)} members')
        return config.replace(**points[learner_id])

    def learner_name(self, config: typed_config.Config, learner_id: int) -> str:
        """How a learner's progress lines start: 'learner' alone, 'learner_<i>' among
        several, followed by its member's values in a sweep."""
        if config.runtime.num_learners == 1:
            return 'learner'
        points = self.members(config)
        values = describe(points[learner_id]) if len(points) > 1 else ''
        return ' '.join(filter(None, [f'learner_{learner_id}', values]))


NONE = Sweeps(named={}, sweepable=())


def describe(values: Mapping) -> str:
    """'learning_rate=0.0003 entropy_cost=0.01': one member's values, for progress lines."""
    return ' '.join(f'{field}={value:g}' if isinstance(value, float) else f'{field}={value}'
                    for field, value in values.items())


def _split(spec: str) -> dict[str, list[str]]:
    """'a=1,2;b=3' -> {'a': ['1', '2'], 'b': ['3']}; a one-line ConfigError where the text is
    not exactly that (an empty value or part, a field or value given twice), since such a grid
    would silently run other members than the ones typed."""
    result = {}
    for part in spec.split(';'):
        field, equals, values = (text.strip() for text in part.partition('='))
        items = [v.strip() for v in values.split(',')]
        if equals and field and not values.strip():
            raise ConfigError(f'sweep {spec!r} gives no values for {field!r}')
        if not equals or not field or '' in items:
            raise ConfigError(f'sweep {spec!r}: {part.strip()!r} is not field=v1,v2 (no empty '
                              f'values; quote the whole --sweep if it holds spaces)')
        if field in result:
            raise ConfigError(f'sweep {spec!r} names {field!r} twice: give its values once, '
                              f'as {field}=v1,v2')
        if len(set(items)) < len(items):
            raise ConfigError(f'sweep {spec!r} repeats a value of {field!r}: each member must '
                              f'differ')
        result[field] = items
    return result


def _value(text: str, field: str, current):
    """`text` as a number of the field's type; one-line error if it is not one."""
    if isinstance(current, bool) or not isinstance(current, (int, float)):
        raise ConfigError(f'sweep field {field!r} is not numeric: only numeric fields are swept')
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f'sweep value {text!r} for {field!r} is not a number') from None
    if value != value or value in (float('inf'), float('-inf')):
        raise ConfigError(f'sweep value {text!r} for {field!r} must be a finite number')
    if isinstance(current, int):
        if value != int(value):
            raise ConfigError(f'sweep value {text!r} for {field!r} is not an integer')
        return int(value)
    return value
