"""A population's settings (IMPALA appendix F, table D.1): whether a config trains one, its
size, what it adapts, where its members start, and the one-line checks. No TensorFlow here:
configs, sweeps and launchers read it before any process starts; the members' work during
training is agents/core/pbt.py.

The members of a population are the run's learners: `pbt_population` sets `num_learners`, and
member i starts from the i-th draw of the agent's table D.1 distributions
(agents/core/sweeps.py, `Sweeps.initial_population`).
"""
import dataclasses
from typing import Mapping, Sequence

import numpy as np

from agents.core import config_checks as checks
from agents.core import typed_config
from agents.core.config_checks import ConfigError
from agents.core.typed_config import setting


@typed_config.config
class Population(typed_config.Config):
    """Population-based training as IMPALA appendix F runs it (agents/core/pbt.py), adapting
    `pbt_adapted` (each experiment names its own); the fitness is stated by table G.1, the mean
    over tasks of each task's capped human-normalised score (launch/fitness.py). Its size is
    the runtime's `pbt_population` (agents/core/runtime_config.py)."""
    pbt_adapted: str = setting(dataclasses.MISSING, 'the hyperparameters PBT adapts, joined by '
                                                    'commas: each experiment names its own')
    pbt_burn_in_frames: int = setting(20_000_000, 'IMPALA app. F: "burn-in period of 20 '
                                                  'million frames"',
                                      checks.Rule(checks.NON_NEGATIVE,
                                                  'frames before the first comparison'))
    pbt_fitness_episodes: int = setting(5_000, 'IMPALA app. F: "after collecting 5,000 '
                                               'episode rewards in total"',
                                        checks.Rule(checks.COUNT,
                                                    'the games a fitness is measured on'))
    pbt_copy_threshold: float = setting(0.05, 'IMPALA app. F: "more than an absolute 5% '
                                              'higher"',
                                        checks.Rule(checks.FINITE, 'a score difference; < 0 '
                                                                   'copies from worse members '
                                                                   'too'))
    pbt_perturb_probability: float = setting(0.33, 'IMPALA app. F: "permuted with 33% '
                                                   'probability"', checks.PROBABILITY)
    pbt_perturb_factor: float = setting(1.2, 'IMPALA app. F: "multiplying with either 1.2 '
                                             'or 1/1.2"',
                                        checks.Rule(checks.Range(1), 'a factor up (and its '
                                                                     'inverse down)'))
    pbt_anneal_learning_rate: bool = setting(False, "not stated; IMPALA figure F.1's learning "
                                                    "rates move by PBT alone, so PBT's "
                                                    "schedule replaces the annealing")


@dataclasses.dataclass(frozen=True)
class LogUniform:
    """Table D.1's "Log uniform" ranges."""
    low: float
    high: float

    def sample(self, rng: np.random.Generator) -> float:
        return float(np.exp(rng.uniform(np.log(self.low), np.log(self.high))))


@dataclasses.dataclass(frozen=True)
class Categorical:
    """Table D.1's "Categorical" choices, each equally likely (not stated)."""
    values: tuple

    def sample(self, rng: np.random.Generator):
        return self.values[int(rng.integers(len(self.values)))]


def enabled(config: typed_config.Config) -> bool:
    """Whether `config` trains a population (`pbt_population` > 0)."""
    return config.pbt_population > 0


def adapted(config: typed_config.Config) -> tuple[str, ...]:
    """The hyperparameters PBT adapts, from `pbt_adapted` ('learning_rate,entropy_cost')."""
    return tuple(filter(None, (name.strip() for name in config.pbt_adapted.split(','))))


def anneals_learning_rate(config: typed_config.Config) -> bool:
    """Whether the learning rate is annealed linearly to 0 (IMPALA table G.1): always without
    PBT; with it only if `pbt_anneal_learning_rate`."""
    return not enabled(config) or config.pbt_anneal_learning_rate


def initial_population(distributions: Mapping, size: int, seed: int) -> list[dict]:
    """`size` members' starting values, each field drawn from its distribution (table D.1:
    "the ranges used ... for the initial hyperparameters for PBT"); the same for every
    process of a run, as it depends on `seed` only."""
    rng = np.random.default_rng(seed)
    return [{field: distribution.sample(rng) for field, distribution in distributions.items()}
            for _ in range(size)]


def check(config, adaptable: Sequence[str]):
    """One-line errors for a population that cannot run; `config` with the members as the run's
    learners (num_learners = pbt_population). `adaptable`: what the agent's learning can
    change."""
    population = config.pbt_population
    if population == 0:
        return config
    if not population >= 2:
        raise ConfigError(f'--config.pbt_population={population}: a population needs at least '
                          f'2 members to compare (0 turns population-based training off)')
    if config.sweep:
        raise ConfigError('--sweep and --config.pbt_population both choose the learners: use '
                          'one of them')
    if config.num_learners not in (1, population):
        raise ConfigError(f'--config.num_learners={config.num_learners} differs from '
                          f'--config.pbt_population={population}: the members are the run\'s '
                          f'learners, so leave num_learners out')
    config = config.replace(num_learners=population)  # pbt_ fields' ranges: checks.declared
    for name in adapted(config):
        if name not in adaptable:
            raise ConfigError(f'--config.pbt_adapted names {name!r}, which this agent cannot '
                              f'adapt during training (it can: {", ".join(adaptable)})')
    burn_in, episodes = config.pbt_burn_in_frames, config.pbt_fitness_episodes
    if burn_in >= config.total_frames:
        raise ConfigError(f'--config.pbt_burn_in_frames={burn_in} is the whole run '
                          f'(--config.total_frames={config.total_frames}): no member would '
                          f'ever be compared; lower it')
    shortest = episodes * config.action_repeat   # every game one agent step long
    if burn_in + shortest > config.total_frames:
        raise ConfigError(f'--config.pbt_fitness_episodes={episodes} is a window larger than '
                          f'the run: even games of one step would need {shortest} frames after '
                          f'the {burn_in} of burn-in, beyond --config.total_frames='
                          f'{config.total_frames}')
    return config


