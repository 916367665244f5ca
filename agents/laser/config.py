"""LASER experiment configs (Schmitt et al., 2019), one class per paper experiment
(agents/core/typed_config.py).

Every paper-stated value names its source in the LASER paper; values it does not state say
"not stated" and why ours (most are those of the IMPALA agent LASER starts from, sec. 5.1:
"We use the V-trace distributed reinforcement learning agent (Espeholt et al., 2018) as our
baseline"). Presets for small machines live in `PRESETS`, never here.
"""
from agents.core import config_checks as checks
from agents.core import environment_config
from agents.core import population
from agents.core.population import Population
from agents.core import runtime_config
from agents.core import sweeps
from agents.core import typed_config
from agents.core.typed_config import member
from agents.core.typed_config import setting
from agents.impala import config as impala_config
from agents.ops import choices
from environments import settings

# Not stated in the paper. Chosen by a short sweep of b in {0.1, 0.3, 1.0, infinity} on a shared
# 3-agent Breakout sweep (benchmarks/README.md, "LASER"): the smallest value tried that stays
# several times above every agent's own online KL, while rejecting the most distant replay.
TRUST_REGION_THRESHOLD = 0.3
_IMPALA_DMLAB30 = impala_config.ImpalaDmLab30()


@typed_config.config
class LaserLearning(typed_config.Config):
    """LASER's learner: its batches mixing replay into the online queue, its replay and its
    trust region (sec. 4, 5.1; app. A.2)."""
    unroll_length: int = setting(19, 'sec. 5.1: trajectories "each corresponding to 19 steps"',
                                 checks.LENGTH, fixed_on_resume=True)
    batch_size: int = setting(128, 'sec. 5.1: mini-batches of "128 (replay)" trajectories; 32 '
                                   "is the no-replay baseline's (docs/fidelity.md)", checks.SIZE)
    replay_proportion: float = setting(0.96, 'sec. 5.1: "96% replay data per batch": 123 of 128',
                                       checks.Rule(checks.Range(0, 1, open_high=True),
                                                   'the online queue needs a part of every '
                                                   'batch'))
    replay_capacity_observations: int = setting(
        10_000_000, "not stated for Atari; DMLab-30's value (sec. 5.3-5.4, figs. 2-3: \"10 "
                    "million observations\")", checks.CAPACITY, fixed_on_resume=True)
    replay_episode_frames: int = setting(
        108_000, "the longest episode the replay stores whole: the time limit (app. C's 30 "
                 "minutes, the evaluation cap), so every episode (sec. 5.1: \"We store the "
                 "entire episodes\"); an actor environment's writer holds the episode under way "
                 "(docs/fidelity.md). A run saved with the former 18,000 resumes with it unless "
                 "given 108000", checks.Rule(checks.COUNT, 'frames'))
    replay_shared: bool = setting(True, "sec. 5.4-5.5: one replay shared by the sweep's agents",
                                  fixed_on_resume=True)
    trust_region: bool = setting(True, "sec. 4: trust-region V-trace; False: fig. 3's naive "
                                       "sharing, the failing baseline")
    trust_region_threshold: float = setting(TRUST_REGION_THRESHOLD, 'b of sec. 4.1: not stated '
                                                                    '(TRUST_REGION_THRESHOLD)',
                                            checks.Rule(checks.POSITIVE,
                                                        'the largest KL divergence kept'))
    discount: float = setting(0.995, 'sec. 5.1: "Following Xu et al. (2018) ... 0.995"',
                              checks.DISCOUNT)
    baseline_cost: float = setting(0.5, 'not stated; IMPALA table G.1', checks.LOSS_WEIGHT)
    entropy_cost: float = setting(0.01, 'sec. 5.1: the middle of the sweep {5e-3, 1e-2, 2e-2}',
                                  checks.LOSS_WEIGHT)
    queue_size: int = setting(64, "not from the paper: unrolls buffered between a learner's "
                                  "actors and it", checks.SIZE, fixed_on_resume=True)
    RELATIONS = (checks.REPLAY_AND_ONLINE_IN_EVERY_BATCH,)


# Across the learner's and the environment's sections, in each experiment: the replay keeps
# whole episodes of up to replay_episode_frames // action_repeat + 1 steps
# (agents/laser/builder.py), so at least one unroll of T + 1.
_EPISODE_HOLDS_AN_UNROLL = checks.Relation(
    lambda c: c.replay_episode_frames >= c.unroll_length * c.action_repeat,
    lambda c: f'--config.replay_episode_frames={c.replay_episode_frames} is shorter than one '
              f'unroll ({c.unroll_length} steps x action_repeat {c.action_repeat} = '
              f'{c.unroll_length * c.action_repeat} frames): the replay would keep only episodes '
              f'shorter than an unroll; give it at least {c.unroll_length * c.action_repeat}')


# IMPALA's sections (their citations name IMPALA's paper): the network, V-trace's truncations
# (LASER sec. 2.3: "typically chosen rho-bar = c-bar = 1") and the optimizer, none of whose
# values LASER states for Atari but those redeclared below.


@typed_config.config
class LaserAtariRuntime(runtime_config.Runtime):
    experiment: str = setting('laser_atari', 'launch/experiments.py')
    eval_protocol: str = setting('laser_atari_training', 'app. C: training returns')
    # `sweep` (sec. 5.1): '' trains one agent, 'paper' is the 9-agent grid (SWEEPS below); it
    # sets num_learners, one learner per member.
    sweep: str = setting('', 'sec. 5.1: the agents of a sweep share one replay',
                         fixed_on_resume=True)


@typed_config.config
class LaserAtariEnvironment(environment_config.Atari):
    """IMPALA's Atari setup, DQN's pipeline as IMPALA table G.1 states it
    (agents/core/environment_config.py), except the no-ops and the episodes: app. C's episodes
    are whole games, cut at 30 minutes, and a lost life zeroes the discount inside them. Not
    stated, IMPALA's: the experts' game-specific action sets, rewards clipped to [-1, 1]."""
    noop_max: int = setting(37, 'app. C: random no-ops at the start, "up to 37 in our case"')
    life_loss_ends_episode: bool = setting(
        False, 'app. C: an episode is a game, started with no-ops and "terminated after 30 '
               'minutes of gameplay", scored by its return (table 2); sec. 5.1 replays "the '
               'entire episodes" from their beginning (docs/fidelity.md)')
    life_loss_zero_discount: bool = setting(
        True, "not stated; IMPALA table G.1's \"end of episode when life lost\" kept for the "
              "return, as DeepMind's DQN Zoo and Acme apply it inside a game: discount 0")
    max_episode_frames: int = setting(108_000, 'app. C: "episodes are terminated after 30 '
                                               'minutes of gameplay" (at 60 frames/s)')


@typed_config.config
class LaserAtariNetwork(impala_config.UnrollNetwork):
    torso: str = setting('deep', 'sec. 5.1: "we use the IMPALA deep network"')
    channel_multiplier: int = setting(4, 'sec. 5.1: "and increased the number of channels 4x"')
    core: str = setting('lstm', 'sec. 5.1: "the IMPALA deep network" (figure 3\'s, with its '
                                'LSTM), replaying whole episodes with full state correction '
                                "(app. A.2); 'feed_forward' (IMPALA's Atari experts' net, sec. "
                                '5.3.2): the small-machine option')


@typed_config.config
class LaserAtariOptimizer(impala_config.RMSProp):
    learning_rate: float = setting(6e-4, 'sec. 5.1: the middle of the sweep {3e-4, 6e-4, '
                                         '1.2e-3}; annealed to 0 as IMPALA table G.1 (not '
                                         'stated)')
    max_grad_norm: float = setting(0.0, 'sec. 5.1: "we do not use gradient clipping by norm"')
    total_frames: int = setting(200_000_000, 'sec. 5.5, table 1: 200M steps (the sweeps: 50M)')
    anneal_frames: int = setting(200_000_000, "not stated; IMPALA table G.1's schedule over the "
                                              "training")


@typed_config.config
class LaserAtari(typed_config.Config):
    """LASER on one Atari game (sec. 5.1, 5.5; appendices A.2, A.3, C; tables 1 and 2).

    The default is the shared-replay agent of table 1's last row; `replay_shared=False` is the
    row above it, `replay_proportion=0` the no-replay baseline."""
    game: str = setting('pong', 'the game (--game)', fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(LaserAtariRuntime)
    environment: environment_config.Atari = member(LaserAtariEnvironment)
    network: impala_config.UnrollNetwork = member(LaserAtariNetwork)
    vtrace: impala_config.VTrace = member(impala_config.VTrace)
    optimizer: impala_config.RMSProp = member(LaserAtariOptimizer)
    learning: LaserLearning = member(LaserLearning)
    RELATIONS = (impala_config.ANNEALS_WITHIN_BUDGET, _EPISODE_HOLDS_AN_UNROLL)


@typed_config.config
class LaserDmLab30Runtime(runtime_config.Runtime):
    experiment: str = setting('laser_dmlab30', 'launch/experiments.py')
    num_actors: int = setting(_IMPALA_DMLAB30.runtime.num_actors,
                              "not stated; IMPALA sec. 5.3.1's 150 (5 per level), one "
                              "environment each")
    envs_per_actor: int = setting(_IMPALA_DMLAB30.runtime.envs_per_actor,
                                  'not stated; as IMPALA')
    eval_protocol: str = setting('laser_dmlab30_training', 'app. A.3: training returns')
    sweep: str = setting('', 'sec. 5.1: the agents of a sweep share one replay',
                         fixed_on_resume=True)
    # Population-based training (sec. 5.1: "sweeps with population based training (PBT)",
    # figure 3 right): off (0) here, --config.pbt_population=10 for sec. 5.1's 10 agents. How
    # PBT runs is not stated: IMPALA appendix F's, adapting what sec. 5.1 samples (RMSProp
    # epsilon is fixed).
    pbt_population: int = setting(0, 'sec. 5.1: off; 10 for its sweep with PBT',
                                  fixed_on_resume=True)


@typed_config.config
class LaserDmLab30Population(population.Population):
    pbt_adapted: str = setting('entropy_cost,learning_rate', 'not stated: what sec. 5.1 samples')


@typed_config.config
class LaserDmLab30Network(impala_config.UnrollNetwork):
    torso: str = setting('deep', "not stated for DMLab-30; IMPALA's DMLab-30 network (IMPALA "
                                 "table 3)")
    core: str = setting('lstm', 'figure 3 of IMPALA: LSTM 256 fed the last action and reward '
                                '(a PreCo LSTM in the paper)')


@typed_config.config
class LaserDmLab30Optimizer(impala_config.RMSProp):
    rmsprop_epsilon: float = setting(0.1, 'sec. 5.1: "fixed RMSProp epsilon = 0.1"')
    learning_rate: float = setting(_IMPALA_DMLAB30.optimizer.learning_rate,
                                   'not stated for one agent: the sweeps draw them from IMPALA '
                                   "table D.1 (`DMLAB30_SWEEPS`); one agent takes IMPALA's "
                                   'DMLab-30 values')
    max_grad_norm: float = setting(0.0, 'sec. 5.1: "we do not use gradient clipping by norm"')
    total_frames: int = setting(10_000_000_000, 'table 1: DMLab-30 "trained until 10B steps"')
    anneal_frames: int = setting(10_000_000_000, 'not stated; annealed over the training')


@typed_config.config
class LaserDmLab30Learning(LaserLearning):
    reward_clipping: str = setting(_IMPALA_DMLAB30.learning.reward_clipping,
                                   "not stated: the paper normalises rewards with PopArt (not "
                                   "implemented); IMPALA's DMLab-30 clipping", choices.CLIPPINGS)
    unroll_length: int = setting(79, 'sec. 5.1: "each corresponding to 79 steps"')
    batch_size: int = setting(128, 'stated, sec. 5.1: DMLab\'s mini-batches are "chosen as '
                                   'above", 32 (regular) and 128 (replay): 112 replayed + 16 '
                                   "online; 32 is the no-replay baseline's")
    replay_proportion: float = setting(0.875, 'sec. 5.3, figs. 2-3: 87.5% replay (7 of 8)')
    replay_capacity_observations: int = setting(10_000_000, 'sec. 5.3, fig. 2 (right): 10M is '
                                                            'best')
    replay_episode_frames: int = setting(18_000, "DMLab-30's longest episode: 300 s at 60 "
                                                 "frames/s, the longest in the level scripts "
                                                 "read (psychlab factories'; the others set "
                                                 "60-240 s)")
    discount: float = setting(_IMPALA_DMLAB30.learning.discount,
                              'not stated for DMLab; IMPALA table D.3')
    entropy_cost: float = setting(_IMPALA_DMLAB30.learning.entropy_cost,
                                  'not stated for one agent: the sweeps draw them from IMPALA '
                                  "table D.1 (`DMLAB30_SWEEPS`); one agent takes IMPALA's "
                                  'DMLab-30 values')


@typed_config.config
class LaserDmLab30(typed_config.Config):
    """LASER on DMLab-30 (sec. 5.1, 5.3, 5.4; figures 2-3; table 1): one agent trained on all
    30 levels at once, or (`sweep='paper'`) sec. 5.1's sweep of 10 agents sharing one replay,
    or (`pbt_population=10`) figure 3 (right)'s sweep with PBT. The environment is IMPALA's
    DMLab-30 one (agents/core/environment_config.py): sec. 5.1, "the multi-task suite DMLab-30
    (Espeholt et al., 2018)", with its LSTM core (a PreCo LSTM in the paper; docs/fidelity.md).
    PopArt, PixelControl and the PreCo LSTM of sec. 5.1 are not implemented (docs/fidelity.md).
    """
    tasks: str = setting('dmlab30', 'sec. 5.1: "the multi-task suite DMLab-30 (Espeholt et al., '
                                    '2018)": IMPALA sec. 5.3.1\'s 30 levels of its appendix B, '
                                    'trained on the _train variants of the two train/test pairs',
                         fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(LaserDmLab30Runtime)
    environment: environment_config.DmLab = member(environment_config.DmLab)
    network: impala_config.UnrollNetwork = member(LaserDmLab30Network)
    vtrace: impala_config.VTrace = member(impala_config.VTrace)
    optimizer: impala_config.RMSProp = member(LaserDmLab30Optimizer)
    learning: LaserLearning = member(LaserDmLab30Learning)
    population: Population = member(LaserDmLab30Population)
    RELATIONS = (impala_config.ANNEALS_WITHIN_BUDGET, _EPISODE_HOLDS_AN_UNROLL)


def quick(c):
    """`--preset=quick`: a small machine, not the paper: the shallow net, batches of 8 with 75%
    replay, 100k observations of replay, RMSProp epsilon 1e-4, 5M frames per agent with the
    learning rate annealed to 0 at them (a larger budget needs `anneal_frames` as large), one
    actor process of 8 environments per agent. Why each:
    docs/fidelity.md, "The small-machine presets"."""
    return runtime_config.quick(
        c, torso='shallow', channel_multiplier=1, batch_size=8, replay_proportion=0.75,
        replay_capacity_observations=100_000, rmsprop_epsilon=1e-4, total_frames=5_000_000,
        anneal_frames=5_000_000, num_actors=1)


def tiny(c: LaserAtari) -> LaserAtari:
    """`--preset=tiny`: seconds-long runs for tests; whole games (app. C) capped at 400 frames,
    so that the episode replay fills within a run's first seconds."""
    return _tiny(c, max_episode_frames=400)


def _tiny(c, total_frames: int = 20_000, **values):
    return runtime_config.tiny(
        quick(c), total_frames=total_frames, unroll_length=5, batch_size=4,
        replay_proportion=0.5, replay_capacity_observations=2_000, queue_size=8, **values)


def dmlab30_quick(c: LaserDmLab30) -> LaserDmLab30:
    """`--preset=quick` on DMLab-30: Atari's quick learner (`quick`) on IMPALA's multi-task
    quick preset's actors, 3 processes whose 30 environments play each level once, and 100,000
    frames per level, the learning rate annealed to 0 at them as `quick` does, RMSProp epsilon
    1e-3 (Atari's 1e-4 was measured with app. C's whole games only, docs/fidelity.md). Not timed
    on a real DeepMind Lab here (none is installed)."""
    return quick(c).replace(num_actors=3, envs_per_actor=10, total_frames=100_000 * 30,
                            anneal_frames=100_000 * 30, rmsprop_epsilon=1e-3)


def dmlab30_tiny(c: LaserDmLab30) -> LaserDmLab30:
    """`--preset=tiny`: seconds-long runs for tests, on IMPALA's three tiny levels, one
    environment each (DMLab levels end at their own time limits)."""
    return _tiny(c, tasks=impala_config.TINY_DMLAB_LEVELS, total_frames=2_000, envs_per_actor=3,
                 checkpoint_interval_s=60.0)  # learner 0 checkpoints the replay with its own,
                                              # whose frames take seconds to write: every 5 s
                                              # stalls it


def quick_feed_forward(c: LaserAtari) -> LaserAtari:
    """`--preset=quick_feed_forward`: `quick` with IMPALA's feed-forward Atari net on 4
    stacked frames (IMPALA sec. 5.3.2) in place of the LSTM: no core to unroll, replayed
    unrolls drawn one by one; the cheapest learner per update (benchmarks/README.md, "LASER"),
    with IMPALA's quick preset's RMSProp epsilon 1e-5."""
    return quick(c).replace(core='feed_forward', rmsprop_epsilon=1e-5)


PRESETS = {'paper': lambda c: c, 'quick': quick, 'quick_feed_forward': quick_feed_forward,
           'tiny': tiny}
DMLAB30_PRESETS = {'paper': lambda c: c, 'quick': dmlab30_quick, 'tiny': dmlab30_tiny}

SWEEPS = sweeps.Sweeps(
    named={
        # Sec. 5.1: "9 agents with different learning rate and entropy cost combinations
        # {3e-4, 6e-4, 1.2e-3} x {5e-3, 1e-2, 2e-2}".
        'paper': {'learning_rate': (3e-4, 6e-4, 1.2e-3), 'entropy_cost': (5e-3, 1e-2, 2e-2)},
        # A 3-agent sweep for a small machine: the paper's learning rates.
        'quick': {'learning_rate': (3e-4, 6e-4, 1.2e-3)},
    },
    # What members can differ in while sharing actors' settings, tables and the network shape.
    sweepable=('learning_rate', 'entropy_cost', 'baseline_cost', 'rmsprop_epsilon',
               'rmsprop_decay', 'rmsprop_momentum', 'max_grad_norm', 'discount',
               'trust_region_threshold', 'clip_rho_threshold', 'clip_c_threshold',
               'clip_pg_rho_threshold', 'vtrace_lambda', 'seed'))

# Sec. 5.1: "On DMLab-30 sweeps contain 10 agents with hyper-parameters sampled similar as
# Espeholt et al. (2018) but fixed RMSProp epsilon = 0.1": IMPALA table D.1's entropy cost and
# learning rate, drawn for each member (and for a PBT population's start).
DMLAB30_SWEEPS = sweeps.Sweeps(
    named={'paper': sweeps.Sampled(10),
           'quick': sweeps.Sampled(2)},     # the fewest agents that share a replay
    sweepable=SWEEPS.sweepable,
    initial_population={field: impala_config.TABLE_D1[field]
                        for field in ('entropy_cost', 'learning_rate')})

# The learner's first update takes one batch of unrolls (online and replayed).
first_update_frames = checks.first_batch_frames

def replay_capacity(config) -> int:
    """Trajectories the replay holds: its capacity in observations over the T new observations
    of each trajectory of T+1 steps (consecutive trajectories share one)."""
    return -(-config.replay_capacity_observations // config.unroll_length)


def check(config: LaserAtari) -> LaserAtari:
    """One-line errors for LASER settings out of range; the config with its game name
    resolved."""
    return _check_learning(checks.environment(settings.atari, config))


def check_dmlab30(config: LaserDmLab30) -> LaserDmLab30:
    """One-line errors for LASER on DMLab-30 (unknown levels with near matches, unequal shares
    of environments), then for a missing `deepmind_lab` (how to build it); the config with its
    population's learners."""
    from environments import names  # pylint: disable=import-outside-toplevel
    impala_config.check_tasks(config, names.dmlab_train_level)
    return impala_config.check_dmlab_settings(config, _check_learning)


def _check_learning(config):
    checks.runtime(config)
    impala_config.check_unroll_learning(config, replay_capacity(config),
                                        'replay_capacity_observations')
    return population.check(config, impala_config.ADAPTABLE)


# Every LASER experiment's config: what the agent's unpacking functions take
# (learning.loss_scalars, full_state_correction, laser_learning).
LaserConfig = LaserAtari | LaserDmLab30
