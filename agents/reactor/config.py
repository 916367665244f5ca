"""Reactor experiment config (Gruslys et al., 2018), one class per paper experiment
(agents/core/typed_config.py).

Every paper-stated value names its section; values the paper does not state say "not stated"
and why ours (docs/fidelity.md, "Reactor", lists them). Presets for small machines live in
`PRESETS`, never here.
"""
from agents.core import config_checks as checks
from agents.core import environment_config
from agents.core import runtime_config
from agents.core import typed_config
from agents.core.typed_config import member
from agents.core.typed_config import setting
from environments import settings


_SUPPORT_END = checks.Rule(checks.FINITE, "an end of the return distribution's support")
_ITEMS = checks.Rule(checks.COUNT, 'items')


@typed_config.config
class ReactorRuntime(runtime_config.Runtime):
    """How this machine runs Reactor: one learner (Reactor runs no sweeps); 2 actors x 5 = 10
    environments, one per paper worker's acting thread (10 or 20 actor-learner workers and a
    parameter server, sec. 3.4; docs/fidelity.md)."""
    experiment: str = setting('reactor_atari', 'launch/experiments.py')
    envs_per_actor: int = setting(5, 'not from the paper: 2 actors x 5 = 10 environments, one '
                                     "per paper worker's acting thread")
    eval_protocol: str = setting('reactor_atari_noop', 'sec. 4.1, table 5')


@typed_config.config
class ReactorAtariEnvironment(environment_config.Atari):
    """"The same pre-processing pipeline including 4 action repeats was used as in the original
    DQN paper" (sec. 4.1; agents/core/environment_config.py): 84x84 frames (table 3). Not
    stated, DQN's: minimal action sets, max over the last 2 frames, episodes ended at a lost
    life in training (IMPALA's too), no-op starts in training (up to 30), rewards clipped to
    [-1, 1]; the 30-minute cap (not stated for training), as evaluation's."""
    frame_stack: int = setting(1, 'table 3: Conv 1 input [84, 84, 1]; sec. 3.4.1 replaces frame '
                                  'stacking with the LSTMs')
    action_repeat: int = setting(4, 'sec. 4.1: "the same pre-processing pipeline including 4 '
                                    'action repeats ... as in the original DQN paper"')
    screen_size: int = setting(84, 'table 3: Conv 1 input [84, 84, 1]')
    reward_clip: float = setting(1.0, "sec. 4.1: DQN's pre-processing pipeline; the clipping to "
                                      "[-1, 1] is DQN's, not stated")
    life_loss_ends_episode: bool = setting(True, "not stated; DQN's training episodes end at a "
                                                 "lost life (docs/fidelity.md)")


@typed_config.config
class ReactorNetwork(typed_config.Config):
    """Table 3's network and its policy (appendix 6.4)."""
    num_atoms: int = setting(51, 'not stated ("#bins"); C51\'s, which Reactor extends',
                             checks.Rule(checks.Range(2), 'a distribution needs two atoms'),
                             fixed_on_resume=True)
    v_min: float = setting(-10.0, "not stated; C51's support for clipped Atari rewards",
                           _SUPPORT_END)
    v_max: float = setting(10.0, "not stated; C51's support for clipped Atari rewards",
                           _SUPPORT_END)
    policy_epsilon: float = setting(0.01, 'app. 6.4: the uniform mixed into the policy',
                                    checks.Rule(checks.Range(0, 1, open_low=True),
                                                'the weight of the uniform policy mixed in'))
    RELATIONS = (checks.Relation(lambda c: c.v_min < c.v_max,
                                 lambda c: f'--config.v_min must be below --config.v_max, got '
                                           f'v_min={c.v_min}, v_max={c.v_max}'),)


@typed_config.config
class ReactorLearning(typed_config.Config):
    """The learner (sec. 3.4, 4.1)."""
    sequence_length: int = setting(33, 'sec. 3.4: "sequences of length n = 33"',
                                   checks.Rule(checks.Range(2), 'a sequence learns from a step '
                                                                'and its successor'),
                                   fixed_on_resume=True)
    sequence_period: int = setting(1, 'sec. 3.3: priorities on "all (overlapping) sequences"; a '
                                      'new sequence starts at every step', checks.PERIOD)
    batch_size: int = setting(4, 'sec. 3.4: "in batches of 4"', checks.SIZE)
    learning_rate: float = setting(5e-5, 'sec. 3.4.1: Adam, 5e-5', checks.STEP_SIZE)
    adam_beta1: float = setting(0.0, 'sec. 3.4.1: "zero momentum"', checks.DECAY)
    adam_beta2: float = setting(0.999, "not stated; Adam's default (Kingma & Ba)", checks.DECAY)
    adam_epsilon: float = setting(1e-8, "not stated; Adam's default (Kingma & Ba)",
                                  checks.OPTIMIZER_OFFSET)
    target_update_period: int = setting(1000, 'sec. 4.1: T_update = 1000 learner updates',
                                        checks.PERIOD)
    discount: float = setting(0.99, "not stated; DQN's and C51's", checks.DISCOUNT)
    retrace_lambda: float = setting(1.0, 'sec. 4.1: lambda = 1.0', checks.TRACE)
    beta_loo_truncation: float = setting(1.0, 'sec. 4.1: beta-LOO with beta = 1, i.e. c = 1 in '
                                              'beta = min(c, 1/mu) (sec. 3.1)',
                                         checks.Rule(checks.Range(1), 'a truncation of the '
                                                                      'importance weight at 1 '
                                                                      'or above'))
    entropy_cost: float = setting(0.01, 'not stated; app. 6.5: "the same entropy cost method '
                                        'used by A3C", whose Atari value is 0.01',
                                  checks.LOSS_WEIGHT)
    acting_steps_per_learning_step: float = setting(
        5.0, 'sec. 3.4: "4-6 acting steps per each learning step"; Reverb\'s rate limiter keeps '
             'the middle, 5', checks.Rule(checks.POSITIVE,
                                          'the pace of actors against the learner'),
        fixed_on_resume=True)
    rate_limiter_tolerance: int = setting(100, 'not stated: learning steps the ratio may run '
                                               'ahead or behind at any moment (Reverb\'s error '
                                               'buffer)', _ITEMS, fixed_on_resume=True)
    total_frames: int = setting(200_000_000, 'sec. 4.1: 200M frames', checks.BUDGET)
    RELATIONS = (checks.Relation(lambda c: c.sequence_period <= c.sequence_length,
                                 lambda c: f'--config.sequence_period must be <= '
                                           f'sequence_length={c.sequence_length}, got '
                                           f'{c.sequence_period}'),)


@typed_config.config
class ReactorReplay(typed_config.Config):
    """The prioritized sequence replay (sec. 3.3, appendix 6.3)."""
    replay_capacity: int = setting(1_000_000, "not stated; sequences (one per step: 1M steps, "
                                              "DQN's)", checks.CAPACITY, fixed_on_resume=True)
    replay_slack: int = setting(10_000, 'ours: room for sequences not yet registered (Reverb '
                                        'keeps capacity + slack; '
                                        'agents/reactor/lazy_priorities.py)', _ITEMS,
                                fixed_on_resume=True)
    replay_epsilon: float = setting(0.01, 'not stated: the eps of uniform sampling (sec. 3.3)',
                                    checks.Rule(checks.UNIT, 'the weight of uniform sampling '
                                                             'in the replay'))
    min_replay_size: int = setting(10_000, 'not stated; sequences before learning starts',
                                   checks.SIZE, fixed_on_resume=True)
    RELATIONS = (checks.REPLAY_FILLS_BEFORE_LEARNING,)


@typed_config.config
class ReactorAtari(typed_config.Config):
    """Reactor on one Atari game (sec. 3.4, 4.1; appendix 6.4, table 3)."""
    game: str = setting('pong', 'the game (--game)', fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(ReactorRuntime)
    environment: environment_config.Atari = member(ReactorAtariEnvironment)
    network: ReactorNetwork = member(ReactorNetwork)
    learning: ReactorLearning = member(ReactorLearning)
    replay: ReactorReplay = member(ReactorReplay)
    RELATIONS = (checks.BATCH_WITHIN_REPLAY,)   # the learner's batch, the replay's capacity


def quick(c: ReactorAtari) -> ReactorAtari:
    """`--preset=quick`: a small machine, not the paper. The paper's algorithm and learner
    settings; a replay of 100k sequences filled to 2,000 before learning, 1M frames, one
    actor process of 4 environments, 5 evaluation episodes instead of 200."""
    return runtime_config.quick(
        c, replay_capacity=100_000, min_replay_size=2_000, total_frames=1_000_000,
        num_actors=1, envs_per_actor=4, eval_episodes=5)


def tiny(c: ReactorAtari) -> ReactorAtari:
    """`--preset=tiny`: seconds-long runs for tests."""
    return runtime_config.tiny(
        quick(c), total_frames=3_000, max_episode_frames=2_000, sequence_length=6,
        batch_size=2, num_atoms=11, target_update_period=5, replay_capacity=400,
        replay_slack=400, min_replay_size=20, rate_limiter_tolerance=20)


PRESETS = {'paper': lambda c: c, 'quick': quick, 'tiny': tiny}

# The learner starts once the replay holds min_replay_size steps.
first_update_frames = checks.replay_start_frames


def check(config: ReactorAtari) -> ReactorAtari:
    """One-line errors for Reactor settings out of range; the config with its game name
    resolved."""
    config = checks.environment(settings.atari, config)
    checks.runtime(config)
    if config.num_learners != 1:
        raise checks.ConfigError(
            f'--config.num_learners must be 1 (Reactor runs no sweeps), got '
            f'{config.num_learners}')
    return config
