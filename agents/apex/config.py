"""Ape-X experiment configs (Horgan et al., 2018), one class per paper experiment
(agents/core/typed_config.py).

Every paper-stated value names its section (restated in docs/paper_notes.md); values the
paper does not state say so. Presets for small machines live in the preset functions, never here.
"""
import dataclasses
import functools

from agents.core import config_checks as checks
from agents.core import environment_config
from agents.core import runtime_config
from agents.core import typed_config
from agents.core.typed_config import member
from agents.core.typed_config import setting
from environments import settings


_CLIP = checks.Rule(checks.POSITIVE, 'a clipping bound')


@typed_config.config
class ApexReplay(typed_config.Config):
    """What both Ape-X agents share (sec. 3 and 4; appendix D: "otherwise as per DQN"): the
    prioritized replay, the actors' transitions and their parameter fetches."""
    n_step: int = setting(3, 'sec. 4.1 / appendix C: multi-step loss, n = 3',
                          checks.Rule(checks.COUNT, 'steps of the return'), fixed_on_resume=True)
    discount: float = setting(0.99, 'sec. 4.1 (gamma)', checks.DISCOUNT)
    priority_exponent: float = setting(0.6, 'sec. 4.1, appendix D (alpha)',
                                       checks.Rule(checks.NON_NEGATIVE, 'an exponent of '
                                                                        'priorities; 0: uniform'),
                                       fixed_on_resume=True)
    importance_sampling_exponent: float = setting(
        0.4, 'sec. 4.1 (beta)', checks.Rule(checks.NON_NEGATIVE,
                                            'an exponent of weights; 0: no correction'))
    transition_batch_size: int = setting(50, 'sec. 4.1: actors send transitions in batches of '
                                             'B = 50', checks.SIZE)
    min_replay_size: int = setting(50_000, 'appendix C: learning starts after 50,000 '
                                           'transitions', checks.SIZE, fixed_on_resume=True)
    samples_per_insert: float = setting(
        0.0, 'not stated as such: the actors and the learner run at their own speeds (sec. 3), 0 '
             'here; > 0 holds the transitions sampled per transition inserted at that '
             '(reverb_tables/tables.py), for small machines',
        checks.Rule(checks.NON_NEGATIVE, 'transitions sampled per transition inserted; 0: '
                                         'actors never wait for the learner'),
        fixed_on_resume=True)
    replay_capacity: int = setting(dataclasses.MISSING, 'each agent states its own',
                                   checks.CAPACITY, fixed_on_resume=True)
    parameter_update_frames: int = setting(400, 'sec. 4.1: actors copy parameters every 400 '
                                                'frames',
                                           checks.Rule(checks.COUNT,
                                                       'frames between parameter fetches'))
    prefetch_batches: int = setting(16, 'sec. 4.1: the learner prefetches up to 16 batches',
                                    checks.Rule(checks.COUNT, 'batches'))
    replay_readers: int = setting(2, 'not stated; sample streams decompressed in parallel with '
                                     'learning (sec. 4.1), one per core here',
                                  checks.Rule(checks.COUNT, 'readers'))
    RELATIONS = (checks.REPLAY_FILLS_BEFORE_LEARNING,)


# Across the replay and the learner, in both agents.
_RELATIONS = (checks.BATCH_WITHIN_REPLAY,)


@typed_config.config
class ApexRuntime(runtime_config.Runtime):
    """Both agents' actors: each environment is one paper actor, in processes of 8; presets
    size them to a machine."""
    envs_per_actor: int = setting(8, 'not stated (one environment per actor machine)')


@typed_config.config
class ApexDQNRuntime(ApexRuntime):
    """Actors (sec. 4.1: 360, one CPU core each): 45 processes of 8 environments, each
    environment one paper actor with its own epsilon_i."""
    experiment: str = setting('apex_dqn_atari', 'launch/experiments.py')
    num_actors: int = setting(45, 'x envs_per_actor = 360 (sec. 4.1)')
    eval_protocol: str = setting('apex_atari_noop', 'table 2 (no-op starts)')


@typed_config.config
class ApexDQNEnvironment(environment_config.Atari):
    """Appendix C, "the standard transformations introduced by DQN"
    (agents/core/environment_config.py; docs/paper_notes.md): greyscale 84x84, frame stacking
    (4), actions repeated 4 times (sec. 4.1: "a fixed action repeat of 4"), rewards clipped to
    [-1, 1]. Not stated, DQN's: minimal action sets, max over the last 2 frames, episodes ended
    at a lost life in training (as Reactor's, docs/fidelity.md), no-op starts in training (up to
    30)."""
    max_episode_frames: int = setting(50_000, 'sec. 4.1: training episodes limited to 50,000 '
                                              'frames')
    action_repeat: int = setting(4, 'sec. 4.1: "a fixed action repeat of 4"; app. C: '
                                    '"repeating actions 4 times"')
    frame_stack: int = setting(4, 'app. C: "frame stacking", DQN\'s 4 frames')
    screen_size: int = setting(84, 'app. C: "greyscaling", DQN\'s 84x84 frames')
    reward_clip: float = setting(1.0, 'app. C: "clipping rewards" to [-1, 1]')
    life_loss_ends_episode: bool = setting(True, "not stated; DQN's training episodes end at a "
                                                 "lost life (docs/fidelity.md)")


@typed_config.config
class ApexDQNReplay(ApexReplay):
    replay_capacity: int = setting(2_000_000, 'sec. 4.1: soft limit 2M, FIFO removal')


@typed_config.config
class ApexDQNActing(typed_config.Config):
    """Each actor's epsilon-greedy policy (sec. 4.1)."""
    epsilon: float = setting(0.4, 'sec. 4.1: epsilon_i = epsilon^(1 + alpha i / (N-1))',
                             checks.Rule(checks.UNIT, 'the probability of a random action'))
    epsilon_alpha: float = setting(7.0, 'sec. 4.1 (alpha of the epsilon schedule)',
                                   checks.Rule(checks.POSITIVE, "the schedule's exponent"))


@typed_config.config
class ApexDQNLearning(typed_config.Config):
    """The learner: double Q-learning with n-step returns on the dueling network, centred
    RMSProp (sec. 3.1, 4.1; appendix C)."""
    batch_size: int = setting(512, 'sec. 4.1', checks.SIZE)
    learning_rate: float = setting(0.00025 / 4, 'appendix C', checks.STEP_SIZE)
    rmsprop_decay: float = setting(0.95, 'appendix C (centered RMSProp)', checks.DECAY)
    rmsprop_epsilon: float = setting(1.5e-7, 'appendix C', checks.OPTIMIZER_OFFSET)
    rmsprop_momentum: float = setting(0.0, 'appendix C: no momentum', checks.DECAY)
    max_grad_norm: float = setting(40.0, 'appendix C', checks.CLIP_OR_NONE)
    target_update_period: int = setting(2500, 'appendix C: target copied every 2,500 batches',
                                        checks.PERIOD)
    total_frames: int = setting(22_800_000_000, 'table 1: 22,800M frames (5 days)',
                                checks.BUDGET)


@typed_config.config
class ApexDQNAtari(typed_config.Config):
    """Ape-X DQN on one Atari game (sec. 3.1, 4.1, appendix C; table 2)."""
    game: str = setting('pong', 'the game (--game)', fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(ApexDQNRuntime)
    environment: environment_config.Atari = member(ApexDQNEnvironment)
    replay: ApexReplay = member(ApexDQNReplay)
    acting: ApexDQNActing = member(ApexDQNActing)
    learning: ApexDQNLearning = member(ApexDQNLearning)
    RELATIONS = _RELATIONS


@typed_config.config
class ApexDPGRuntime(ApexRuntime):
    """Actors (sec. 4.2: 64): 8 processes of 8 environments."""
    experiment: str = setting('apex_dpg_control', 'launch/experiments.py')
    num_actors: int = setting(8, 'x envs_per_actor = 64 (sec. 4.2)')
    eval_protocol: str = setting('apex_control_noiseless', 'figure 3: the noiseless policy')


@typed_config.config
class ApexDPGEnvironment(environment_config.Control):
    action_repeat: int = setting(1, 'sec. 4.2: "here we do not use action repeats"')


@typed_config.config
class ApexDPGReplay(ApexReplay):
    """Appendix D's replay: a fixed capacity, full replays evicting by priority."""
    replay_capacity: int = setting(1_000_000, 'appendix D: fixed capacity of 10^6')
    eviction_exponent: float = setting(-0.4, 'appendix D: evict by prioritized sampling at -0.4',
                                       checks.Rule(checks.Range(high=0), 'eviction samples low '
                                                                         'priorities first; 0: '
                                                                         'uniform'),
                                       fixed_on_resume=True)
    parameter_update_frames: int = setting(400, 'not stated for control; as Atari (sec. 4.1)')


@typed_config.config
class ApexDPGActing(typed_config.Config):
    exploration_sigma: float = setting(0.3, 'appendix D: Gaussian action noise, sigma = 0.3',
                                       checks.Rule(checks.NON_NEGATIVE,
                                                   'a noise scale; 0: greedy actors'))


@typed_config.config
class ApexDPGLearning(typed_config.Config):
    """The learner: DPG's actor and critic with n-step returns, Adam (sec. 3.2; appendix D)."""
    network: str = setting('appendix_d', "appendix D's MLPs (critic 400-300, actor 300-200); "
                                         "'d4pg': Acme D4PG's LayerNorm MLPs, an experiment "
                                         "beside D4PG's curves (agents/networks/dpg.py)",
                           ('appendix_d', 'd4pg'), fixed_on_resume=True)
    batch_size: int = setting(256, 'sec. 4.2', checks.SIZE)
    learning_rate: float = setting(1e-4, 'appendix D: Adam 1e-4 (actor and critic)',
                                   checks.STEP_SIZE)
    actor_gradient_clip: float = setting(1.0, 'appendix D: "the gradient used to update the '
                                              'actor network is clipped to [-1, 1], '
                                              'element-wise": dq/da, as trfl\'s dpg op '
                                              '(docs/fidelity.md)', _CLIP)
    critic_max_grad_norm: float = setting(40.0, 'appendix D: "otherwise as per DQN" (appendix '
                                                'C: 40)', _CLIP)
    target_update_period: int = setting(100, 'appendix D: targets copied every 100 batches',
                                        checks.PERIOD)
    total_frames: int = setting(1_000_000_000, 'not stated (fig. 3 is in wall-clock hours)',
                                checks.BUDGET)


@typed_config.config
class ApexDPGControl(typed_config.Config):
    """Ape-X DPG on one DeepMind Control Suite task from features (sec. 3.2, 4.2, appendix D)."""
    task: str = setting('humanoid_walk', 'sec. 4.2: manipulator bring_ball, humanoid stand, '
                                         'walk, run; any other suite task by name',
                        fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(ApexDPGRuntime)
    environment: environment_config.Control = member(ApexDPGEnvironment)
    replay: ApexReplay = member(ApexDPGReplay)
    acting: ApexDPGActing = member(ApexDPGActing)
    learning: ApexDPGLearning = member(ApexDPGLearning)
    RELATIONS = _RELATIONS


def _quick(c, **values):
    """`--preset=quick`: a demo on a 2-core machine, not the paper."""
    return runtime_config.quick(
        c, num_actors=2,                 # this machine's 2 cores, not the paper's 360 or 64
        min_replay_size=2_000, batch_size=64, prefetch_batches=2, eval_episodes=5, **values)


# Each experiment's quick preset: Ape-X DQN on an Atari game, Ape-X DPG on a control task, the
# learner held to a fixed number of transitions sampled per transition inserted (DQN's own 8,
# Acme D4PG's 32), appendix D's networks, DQN's replay of 1M transitions (sec. 5's actor-scaling
# runs). Why each, with the runs that showed it: docs/fidelity.md, "The small-machine presets".
quick_dqn = functools.partial(_quick, total_frames=2_000_000, target_update_period=500,
                              envs_per_actor=8, samples_per_insert=8.0,
                              replay_capacity=1_000_000)
quick_dpg = functools.partial(_quick, total_frames=200_000, target_update_period=100,
                              envs_per_actor=4, samples_per_insert=32.0,
                              replay_capacity=100_000)   # appendix D: 1M


def tiny(c, **values):
    """`--preset=tiny`: seconds-long runs for tests (Ape-X DPG's; `tiny_dqn` for DQN)."""
    return runtime_config.tiny(
        c, total_frames=4_000, replay_capacity=2_000, min_replay_size=100, batch_size=8,
        prefetch_batches=1, transition_batch_size=10, target_update_period=5, **values)


tiny_dqn = functools.partial(tiny, max_episode_frames=2_000)   # Ape-X DQN's: games cut short

DQN_PRESETS = {'paper': lambda c: c, 'quick': quick_dqn, 'tiny': tiny_dqn}
DPG_PRESETS = {'paper': lambda c: c, 'quick': quick_dpg, 'tiny': tiny}

# The learner starts once the replay holds min_replay_size transitions (appendix C).
first_update_frames = checks.replay_start_frames

def check_dqn(config: ApexDQNAtari) -> ApexDQNAtari:
    """One-line errors for Ape-X DQN settings out of range; the config with its game name
    resolved."""
    config = checks.environment(settings.atari, config)
    checks.positive(config, 'max_grad_norm')   # unlike LASER's, 0 does not turn it off
    checks.runtime(config)
    return config


def check_dpg(config: ApexDPGControl) -> ApexDPGControl:
    """One-line errors for Ape-X DPG settings out of range, and the task's name."""
    from environments import control  # pylint: disable=import-outside-toplevel
    try:
        control.parse_task(config.task)
    except ValueError as e:
        raise checks.ConfigError(str(e)) from None
    checks.runtime(config)
    return config
