"""Step 2 of docs/architecture.md's "Where a new agent plugs in": the config of the guide's
agent, one-step actor-critic (Sutton and Barto, 2018, sec. 13.5) on one Atari game.

The algorithm's paper states no Atari settings: the environment is IMPALA's Atari setup
(IMPALA table G.1, as `environments/atari.py` implements it), and the learner's values are
"not stated", chosen to be those of IMPALA's experts where the two agents share a term.
"""
from agents.core import config_checks as checks
from agents.core import environment_config
from agents.core import runtime_config
from agents.core import typed_config
from agents.core.typed_config import member
from agents.core.typed_config import setting
from environments import settings

_NOT_STATED = "not stated; IMPALA table G.1's"


@typed_config.config
class GuideRuntime(runtime_config.Runtime):
    experiment: str = setting('guide_actor_critic_atari', 'launch/experiments.py')
    eval_protocol: str = setting('atari_noop', "no paper's table reports it")


@typed_config.config
class GuideLearning(typed_config.Config):
    """The learner: batches of single transitions; the optimizer and every learner value are
    not stated."""
    unroll_length: int = setting(1, 'sec. 13.5: one learnt step per item', (1,))
    batch_size: int = setting(32, _NOT_STATED, checks.SIZE)
    discount: float = setting(0.99, _NOT_STATED, checks.DISCOUNT)
    baseline_cost: float = setting(0.5, _NOT_STATED, checks.LOSS_WEIGHT)
    entropy_cost: float = setting(0.01, _NOT_STATED, checks.LOSS_WEIGHT)
    learning_rate: float = setting(6e-4, _NOT_STATED, checks.STEP_SIZE)
    rmsprop_decay: float = setting(0.99, _NOT_STATED, checks.DECAY)
    rmsprop_epsilon: float = setting(0.01, _NOT_STATED, checks.OPTIMIZER_OFFSET)
    max_grad_norm: float = setting(40.0, _NOT_STATED, checks.CLIP_OR_NONE)
    total_frames: int = setting(50_000_000, 'not stated', checks.BUDGET)
    queue_size: int = setting(64, 'ours: transitions buffered between actors and learner',
                              checks.SIZE)


@typed_config.config
class GuideAtari(typed_config.Config):
    """One-step actor-critic on one Atari game (Sutton and Barto, 2018, sec. 13.5)."""
    game: str = setting('pong', 'the game (--game)', fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(GuideRuntime)
    environment: environment_config.Atari = member(environment_config.Atari)
    learning: GuideLearning = member(GuideLearning)


def tiny(c: GuideAtari) -> GuideAtari:
    """`--preset=tiny`: seconds-long runs for tests."""
    return runtime_config.tiny(c, total_frames=4_000, max_episode_frames=2_000, batch_size=8,
                               queue_size=16)


PRESETS = {'paper': lambda c: c, 'tiny': tiny}

# The learner's first update takes one batch of items.
first_update_frames = checks.first_batch_frames


def check(config: GuideAtari) -> GuideAtari:
    """One-line errors for settings out of range (each field's metadata); the config with its
    game name resolved."""
    config = checks.environment(settings.atari, config)
    checks.runtime(config)
    return config
