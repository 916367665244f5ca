"""The runtime section of every experiment's config: how this machine runs a paper experiment,
not the paper (agents/core/typed_config.py). An experiment holds a subclass of it that
redeclares the fields it sets otherwise (`experiment` and `eval_protocol` always: each names
its own); its presets size them with `quick` and `tiny`. The launcher, learners and actors
read them as plain fields (`config.num_actors`).
"""
import dataclasses

from agents.core import config_checks as checks
from agents.core import typed_config
from agents.core.typed_config import setting
from agents.ops import choices

_OURS = 'not from the paper: this machine'


_SECONDS_BETWEEN = checks.Rule(checks.NON_NEGATIVE, 'seconds; 0: at every update')


@typed_config.config
class Runtime(typed_config.Config):
    experiment: str = setting(dataclasses.MISSING, 'the experiment (launch/experiments.py): every '
                                                   'config names its own')
    seed: int = setting(0, f'{_OURS}; the seed of every random draw of the run',
                        checks.Rule(checks.NON_NEGATIVE, 'a random seed'))
    num_learners: int = setting(1, f'{_OURS}; learners on one replay server, each with its own '
                                   f'actors', checks.PROCESSES, fixed_on_resume=True)
    num_actors: int = setting(2, f'{_OURS}; actor processes per learner', checks.PROCESSES)
    envs_per_actor: int = setting(8, f'{_OURS}; environments stepped per batched policy call',
                                  checks.Rule(checks.COUNT, 'environments'))
    jit_compile: str = setting('auto', f"{_OURS}; XLA for the learner update: 'auto' = on iff a "
                                       f"GPU")
    precision: str = setting('float32', "what the learner's and actors' networks compute in: "
                                        "'float32' (the papers') or 'bfloat16' (variables, "
                                        "losses and RL operators stay float32: "
                                        "agents/networks/layers.py)", choices.PRECISIONS)
    max_nonfinite_updates: int = setting(10, f'{_OURS}; consecutive skipped (non-finite) '
                                             f'updates: stop',
                                         checks.Rule(checks.COUNT, 'updates skipped before the '
                                                                   'run stops'))
    checkpoint_interval_s: float = setting(600.0, f'{_OURS}; seconds between learner '
                                                  f'checkpoints', _SECONDS_BETWEEN)
    log_interval_s: float = setting(10.0, f'{_OURS}; seconds between progress lines and log '
                                          f'rows', _SECONDS_BETWEEN)
    eval_protocol: str = setting(dataclasses.MISSING, 'how the run is evaluated '
                                                      '(paper_tables/protocols.py): every '
                                                      'experiment names its own')
    eval_episodes: int = setting(-1, "evaluation episodes; -1: the protocol's episode count",
                                 checks.Rule(checks.Range(-1), "evaluation episodes; -1: the "
                                                               "protocol's count"))
    sweep: str = setting('', "a grid of learners sharing one replay (--sweep; "
                             "agents/core/sweeps.py): its name or 'field=v1,v2;...'; '' trains "
                             "one agent")
    pbt_population: int = setting(0, 'population-based training: its members, each a learner '
                                     'of the run (agents/core/population.py); 0: off',
                                  checks.Rule(checks.NON_NEGATIVE,
                                              'members; 0: no population-based training'))
    RELATIONS = (checks.Relation(
        lambda c: c.eval_episodes == -1 or c.eval_episodes >= 1,
        lambda c: f"--config.eval_episodes must be -1 (the protocol's count) or >= 1, got "
                  f'{c.eval_episodes}'),)


def quick(c: typed_config.Config, **values) -> typed_config.Config:
    """A `--preset=quick` config: `c` for a small machine, which checkpoints every 2 minutes,
    with `values` (the preset's own fields)."""
    return c.replace(**{'checkpoint_interval_s': 120.0, **values})


def tiny(c: typed_config.Config, **values) -> typed_config.Config:
    """A `--preset=tiny` config, for seconds-long test runs: `c` with one actor of two
    environments, frequent checkpoints and logs, one evaluation episode, then `values` (the
    preset's own fields)."""
    return c.replace(**{'num_actors': 1, 'envs_per_actor': 2, 'checkpoint_interval_s': 5.0,
                        'log_interval_s': 1.0, 'eval_episodes': 1, **values})
