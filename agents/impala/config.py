"""IMPALA experiment configs, one class per paper experiment (agents/core/typed_config.py).

Every paper-stated value names its source in the IMPALA paper (Espeholt et al., 2018). Values
the paper does not state say so. Presets for small machines live in `PRESETS`, never here.
"""
from typing import Callable

from agents.core import config_checks as checks
from agents.core import environment_config
from agents.core import population
from agents.core.population import Population
from agents.core import runtime_config
from agents.core import sweeps
from agents.core import typed_config
from agents.core.typed_config import member
from agents.core.typed_config import setting
from agents.ops import choices
from environments import settings


@typed_config.config
class UnrollNetwork(typed_config.Config):
    """Figure 3's networks (LASER's too, sec. 5.1): its citations name IMPALA, which LASER's
    configs take them from."""
    torso: str = setting('shallow', "IMPALA sec. 5.3.2 / table 4 report 'shallow' and 'deep' "
                                    "experts", ('shallow', 'deep'), fixed_on_resume=True)
    core: str = setting('feed_forward', "IMPALA sec. 5.3.2: Atari experts have no LSTM; 'lstm' "
                                        "is figure 3's core fed the last action and clipped "
                                        "reward", ('feed_forward', 'lstm'), fixed_on_resume=True)
    channel_multiplier: int = setting(1, "IMPALA figure 3's channels (LASER widens them 4x)",
                                      checks.Rule(checks.COUNT, 'a width factor'),
                                      fixed_on_resume=True)
    core_last_action_reward: bool = setting(
        True, "IMPALA figure 3: the LSTM is fed the last action and clipped reward beside the "
              "torso's output; False, not from the paper: the torso's output alone (the row "
              "laser_breakout_no_last_action_reward)",
        fixed_on_resume=True)
    core_lstm_init: str = setting(
        'sonnet2', "not stated in the papers: Sonnet 2's LSTM initialisation; 'lstm_block_cell' "
                   "is IMPALA's released agent's (scalable_agent's experiment.py, "
                   "tf.contrib.rnn.LSTMBlockCell: Glorot uniform over [input, state])",
        choices.LSTM_INITIALIZERS, fixed_on_resume=True)
    RELATIONS = (checks.Relation(
        lambda c: c.torso == 'deep' or c.channel_multiplier == 1,
        lambda c: '--config.channel_multiplier widens the deep torso only: use '
                  '--config.torso=deep, or channel_multiplier=1'),)


_TRUNCATION = checks.Rule(checks.POSITIVE, 'a truncation of the importance weights')


@typed_config.config
class VTrace(typed_config.Config):
    """V-trace's truncations (sec. 4; LASER's too, sec. 2.3): its citations name IMPALA."""
    clip_rho_threshold: float = setting(1.0, 'IMPALA sec. 5.2.2: rho-bar = 1', _TRUNCATION)
    clip_c_threshold: float = setting(1.0, 'IMPALA sec. 5.2.2: c-bar = 1', _TRUNCATION)
    clip_pg_rho_threshold: float = setting(1.0, 'IMPALA sec. 4.2: the policy gradient uses rho_s '
                                                '(clipped at rho-bar)', _TRUNCATION)
    vtrace_lambda: float = setting(1.0, 'IMPALA sec. 4, remark 2: lambda = 1 unless stated',
                                   checks.TRACE)


@typed_config.config
class RMSProp(typed_config.Config):
    """Table G.1's optimizer (LASER's too, not stated there), its learning rate annealed
    linearly to 0 over `anneal_frames`: its citations name IMPALA."""
    learning_rate: float = setting(6e-4, 'IMPALA table G.1, annealed linearly to 0 over '
                                         'anneal_frames', checks.STEP_SIZE)
    rmsprop_decay: float = setting(0.99, "not in IMPALA's paper; its authors' scalable_agent "
                                         "default", checks.DECAY)
    rmsprop_momentum: float = setting(0.0, 'IMPALA table G.1', checks.DECAY)
    rmsprop_epsilon: float = setting(0.01, 'IMPALA table G.1 (TF1 RMSProp: inside the square '
                                           'root)', checks.OPTIMIZER_OFFSET)
    rmsprop_form: str = setting('tf1', "not stated; IMPALA's authors' TF1 RMSProp "
                                       "(scalable_agent). 'pytorch' (PolyBeast's) only for "
                                       "results/README.md's study", choices.RMSPROP_FORMS)
    max_grad_norm: float = setting(40.0, 'IMPALA table G.1: clip global gradient norm',
                                   checks.CLIP_OR_NONE)
    total_frames: int = setting(200_000_000, 'IMPALA sec. 5.3.2: experts trained for 200M '
                                             'frames', checks.BUDGET)
    anneal_frames: int = setting(200_000_000, 'IMPALA table G.1: "Anneal linearly to 0" over the '
                                              "training's frames; a run stopped earlier "
                                              '(total_frames, the budget) keeps this schedule',
                                 checks.ANNEALING)


@typed_config.config
class ImpalaLearning(typed_config.Config):
    """The IMPALA learner's loss, batches and queue (table G.1 unless noted)."""
    reward_clipping: str = setting('symmetric', "table G.1: 'symmetric' (to +-reward_clip); "
                                                "figure D.1's 'optimistic_asymmetric' (0.3 "
                                                "min(tanh r, 0) + 5 max(tanh r, 0)) is "
                                                "DMLab-30's (table D.3)", choices.CLIPPINGS)
    unroll_length: int = setting(20, 'table G.1 (n)', checks.LENGTH)
    batch_size: int = setting(32, 'table G.1', checks.SIZE)
    discount: float = setting(0.99, 'table G.1', checks.DISCOUNT)
    baseline_cost: float = setting(0.5, 'table G.1: baseline loss scaling', checks.LOSS_WEIGHT)
    entropy_cost: float = setting(0.01, 'table G.1: entropy regularizer', checks.LOSS_WEIGHT)
    off_policy_correction: str = setting('vtrace', "sec. 5.2.2, table 2: 'vtrace', "
                                                   "'one_step_is' (1-Step), 'epsilon' "
                                                   "(epsilon-correction), 'none' "
                                                   "(No-correction)", choices.CORRECTIONS)
    replay_proportion: float = setting(0.0, 'sec. 5.2.2: 0.5 in the replay experiments; '
                                            'experts: none',
                                       checks.Rule(checks.Range(0, 1, open_high=True),
                                                   'the online queue needs a part of every '
                                                   'batch'))
    replay_capacity: int = setting(10_000, 'table D.3: 10,000 trajectories, uniform, FIFO '
                                           'removal', checks.CAPACITY)
    replay_shared: bool = setting(True, 'not from the paper: with several learners, one replay '
                                        'table they all share')
    queue_size: int = setting(64, 'not from the paper: unrolls buffered between actors and '
                                  'learner', checks.SIZE)
    RELATIONS = (checks.BATCH_WITHIN_REPLAY, checks.REPLAY_AND_ONLINE_IN_EVERY_BATCH)


# Across the optimizer and the population, in every IMPALA and LASER experiment: the learning
# rate is 0 from `anneal_frames` on, unless a population adapts it unannealed
# (agents/core/population.py).
ANNEALS_WITHIN_BUDGET = checks.Relation(
    lambda c: c.total_frames <= c.anneal_frames or not population.anneals_learning_rate(c),
    lambda c: f'--config.total_frames={c.total_frames} runs past --config.anneal_frames='
              f'{c.anneal_frames}, where the learning rate reaches 0: give anneal_frames at '
              f'least total_frames')


@typed_config.config
class ImpalaAtariRuntime(runtime_config.Runtime):
    experiment: str = setting('impala_atari', 'launch/experiments.py')
    # 16 games per actor (not stated; the runtime default is 8): each batched forward pass
    # serves twice the frames, and the actor's loop (the emulator and the network stepped in
    # turn) runs about 20% faster per core; at batch 32 an actor's 16 unrolls are half a batch,
    # so its policy lags by about one update (benchmarks/README.md, "Games per actor").
    envs_per_actor: int = setting(16, 'not stated; 16 games per actor (above)')
    eval_protocol: str = setting('impala_atari_noop', 'tables C.1 and 4 (experts): no-op starts')
    # Population-based training (app. F; agents/core/population.py and pbt.py): off (0) for
    # the experts, trained with fixed hyperparameters (app. G). --config.pbt_population=N
    # makes the run's N learners a population (num_learners = N), starting from table D.1
    # (TABLE_D1) and adapting table G.1's four hyperparameters, as the multi-task agent does.
    pbt_population: int = setting(0, 'app. G: the experts train with fixed hyperparameters',
                                  fixed_on_resume=True)


@typed_config.config
class ImpalaAtariPopulation(population.Population):
    pbt_adapted: str = setting('entropy_cost,learning_rate,rmsprop_epsilon,max_grad_norm',
                               "table G.1's four hyperparameters")


@typed_config.config
class ImpalaAtari(typed_config.Config):
    """Per-game IMPALA experts on Atari (sec. 5.3.2, appendix G, table G.1; table 4).

    Environment (appendix G, table G.1): DQN's pipeline, which table G.1 states value for value
    (agents/core/environment_config.py); app. G: "experts use game-specific action sets". Not
    stated: A3C-style random no-op starts in training (up to 30) and the standard 30-minute cap
    (docs/fidelity.md)."""
    game: str = setting('pong', 'the game (--game)', fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(ImpalaAtariRuntime)
    environment: environment_config.Atari = member(environment_config.Atari)
    network: UnrollNetwork = member(UnrollNetwork)
    vtrace: VTrace = member(VTrace)
    optimizer: RMSProp = member(RMSProp)
    learning: ImpalaLearning = member(ImpalaLearning)
    population: Population = member(ImpalaAtariPopulation)
    RELATIONS = (ANNEALS_WITHIN_BUDGET,)


def quick(c: ImpalaAtari) -> ImpalaAtari:
    """`--preset=quick`: the demo on a 2-core machine (under 15 minutes), not the paper: 2.5M
    frames (the learning rate on table G.1's 200M-frame schedule), batches of 4, RMSProp epsilon
    1e-5 (table D.1's sweep), 8 games per actor, 5 evaluation episodes. Why each, with the runs
    that showed it: docs/fidelity.md, "The small-machine presets"."""
    return runtime_config.quick(c, total_frames=2_500_000, batch_size=4, rmsprop_epsilon=1e-5,
                                eval_episodes=5, envs_per_actor=8)


def tiny(c: ImpalaAtari) -> ImpalaAtari:
    """`--preset=tiny`: seconds-long runs for tests, games cut short."""
    return _tiny(c, max_episode_frames=2_000)


def _tiny(c, total_frames: int = 20_000, **values):
    """Every IMPALA tiny preset's learner and runtime, then `values`."""
    return runtime_config.tiny(c, total_frames=total_frames, unroll_length=5, batch_size=2,
                               queue_size=8, **values)


PRESETS = {'paper': lambda c: c, 'quick': quick, 'tiny': tiny}

# The learner's first update takes one batch of the actors' unrolls.
first_update_frames = checks.first_batch_frames

# Table D.1: "The ranges used in sampling hyperparameters across all experiments that used a
# sweep and for the initial hyperparameters for PBT"; a population's member i starts from the
# i-th draw (seeded by `seed`). max_grad_norm is not in table D.1: every member starts from
# the config's (table G.1: 40), PBT adapting it from there (not stated).
TABLE_D1 = {
    'entropy_cost': population.LogUniform(5e-5, 1e-2),      # "[5e-5, 1e-2] Log uniform"
    'learning_rate': population.LogUniform(5e-6, 5e-3),     # "[5e-6, 5e-3] Log uniform"
    'rmsprop_epsilon': population.Categorical((1e-1, 1e-3, 1e-5, 1e-7)),  # "Categorical"
}
SWEEPS = sweeps.Sweeps(named={}, sweepable=(), initial_population=TABLE_D1)


def check(config: ImpalaAtari) -> ImpalaAtari:
    """One-line errors for IMPALA Atari settings out of range; the config with its game name
    resolved."""
    return _check_learning(checks.environment(settings.atari, config))


def _check_learning(config):
    """The checks of every IMPALA experiment's runtime and learner settings; the config with
    its population's learners."""
    checks.runtime(config)
    check_unroll_learning(config, config.replay_capacity, 'replay_capacity')
    return population.check(config, ADAPTABLE)


# The multi-task agents (sec. 5.3): one set of weights for every task of a suite. A run's
# `tasks` are a suite ('atari57', 'dmlab30') or names joined by commas; environment g of a
# learner's actors plays task g mod N (agents/core/builders.assigned_task), so every task gets
# the same fixed number of environments. Their populations (app. F): 24 members, each a learner.
_POPULATION = 'table D.1: "population size are 24"; table G.1: 24'


@typed_config.config
class ImpalaAtari57Runtime(runtime_config.Runtime):
    experiment: str = setting('impala_atari57', 'launch/experiments.py')
    num_actors: int = setting(57, 'sec. 5.3: a fixed number of actors per game; the number is '
                                  'not stated for Atari: one each, the fewest')
    envs_per_actor: int = setting(1, 'not stated: one environment per actor')
    eval_protocol: str = setting('impala_atari_multitask_noop', 'tables C.1 and 4 '
                                                                '(multi-task): no-op starts')
    pbt_population: int = setting(24, _POPULATION, fixed_on_resume=True)


@typed_config.config
class ImpalaAtari57Environment(environment_config.Atari):
    action_set: str = setting('full', 'app. G: "the full Atari action set consisting of 18 '
                                      'actions", one policy layer for every game')


@typed_config.config
class ImpalaAtari57Network(UnrollNetwork):
    torso: str = setting('deep', 'app. G: "a feed forward residual network (see Figure 3)"')


@typed_config.config
class ImpalaAtari57Optimizer(RMSProp):
    total_frames: int = setting(57 * 200_000_000, 'table C.1: 200M frames per game, here over '
                                                  'all games')
    anneal_frames: int = setting(57 * 200_000_000, "table G.1: annealed to 0 over the "
                                                   "training's frames")


@typed_config.config
class ImpalaAtari57Population(ImpalaAtariPopulation):
    pbt_anneal_learning_rate: bool = setting(True, 'table G.1: "Anneal linearly to 0", for '
                                                   'every Atari agent')


@typed_config.config
class ImpalaAtari57(typed_config.Config):
    """The multi-task agent on Atari-57 (sec. 5.3.2, appendix G, table G.1; tables 4 and C.1,
    multi-task column): one deep feed-forward network for all 57 games on the full action set,
    PBT over 24 members. Everything else is the experts' table G.1 (`ImpalaAtari`)."""
    # A multi-task run's tasks are fixed: its logged games name their task by environment
    # (builders.game_task), so other tasks would report them under other names.
    tasks: str = setting('atari57', 'sec. 5.3.2: all 57 games (or games joined by commas)',
                         fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(ImpalaAtari57Runtime)
    environment: environment_config.Atari = member(ImpalaAtari57Environment)
    network: UnrollNetwork = member(ImpalaAtari57Network)
    vtrace: VTrace = member(VTrace)
    optimizer: RMSProp = member(ImpalaAtari57Optimizer)
    learning: ImpalaLearning = member(ImpalaLearning)
    population: Population = member(ImpalaAtari57Population)
    RELATIONS = (ANNEALS_WITHIN_BUDGET,)


@typed_config.config
class ImpalaDmLab30Runtime(runtime_config.Runtime):
    experiment: str = setting('impala_dmlab30', 'launch/experiments.py')
    num_actors: int = setting(150, "sec. 5.3.1: 'IMPALA, deep' has 150 actors, 5 per level "
                                   "(210, 7 per level, for 'IMPALA, shallow')")
    envs_per_actor: int = setting(1, 'sec. 5.3.1: one level per actor')
    eval_protocol: str = setting('impala_dmlab30_test', 'tables B.1 and 3: the test levels')
    pbt_population: int = setting(24, _POPULATION, fixed_on_resume=True)


@typed_config.config
class ImpalaDmLab30Network(UnrollNetwork):
    torso: str = setting('deep', "table 3: 'IMPALA, deep, PBT'; 'shallow' is figure 3 left")
    core: str = setting('lstm', 'figure 3: LSTM 256 fed the last action and reward')


@typed_config.config
class ImpalaDmLab30Learning(ImpalaLearning):
    reward_clipping: str = setting('optimistic_asymmetric', "table D.3: DMLab-30 rewards through "
                                                            "figure D.1's 0.3 min(tanh r, 0) + 5 "
                                                            "max(tanh r, 0)")
    unroll_length: int = setting(100, 'table D.3 (n)')
    batch_size: int = setting(32, 'not stated for the learning runs; table 1\'s caption, of the '
                                  'throughput runs: "batch size 32 if not otherwise mentioned"')
    discount: float = setting(0.99, 'table D.3')
    baseline_cost: float = setting(0.5, 'table D.3')
    entropy_cost: float = setting(0.0033391318945337044, "not stated for one agent: PBT draws "
                                                         "it from table D.1; scalable_agent's "
                                                         "DMLab-30 value, used without PBT")


@typed_config.config
class ImpalaDmLab30Optimizer(RMSProp):
    rmsprop_momentum: float = setting(0.0, 'table D.3')
    learning_rate: float = setting(0.00031866995608948655, "not stated for one agent: PBT draws "
                                                           "it from table D.1; scalable_agent's "
                                                           "DMLab-30 value, annealed to 0")
    rmsprop_epsilon: float = setting(0.1, "table D.1's choices; scalable_agent's default")
    max_grad_norm: float = setting(0.0, 'not in table D.3; scalable_agent does not clip '
                                        'gradients')
    total_frames: int = setting(10_000_000_000, "not stated in the text; scalable_agent's "
                                                "DMLab-30 run and LASER table 1's DMLab-30 "
                                                "budget")
    anneal_frames: int = setting(10_000_000_000, 'not stated; annealed over the training, as '
                                                 'scalable_agent')


@typed_config.config
class ImpalaDmLab30Population(population.Population):
    pbt_adapted: str = setting('entropy_cost,learning_rate,rmsprop_epsilon',
                               'sec. 5.3.1, app. F')


@typed_config.config
class ImpalaDmLab30(typed_config.Config):
    """The multi-task agent on DMLab-30 (sec. 5.3.1; appendices B, D and F; tables 3 and B.1):
    figure 3's network with its LSTM core and instruction encoder on all 30 levels, 'IMPALA,
    deep, PBT' of table 3 (`--config.torso=shallow --config.num_actors=210` is its shallow
    net). Learner values as table D.3 (the frames, actions and instructions:
    agents/core/environment_config.py), loss and optimizer as the experts' (`ImpalaAtari`)."""
    tasks: str = setting('dmlab30', 'sec. 5.3.1: the 30 levels of appendix B, trained on the '
                                    '_train variants of the two train/test pairs',
                         fixed_on_resume=True)
    runtime: runtime_config.Runtime = member(ImpalaDmLab30Runtime)
    environment: environment_config.DmLab = member(environment_config.DmLab)
    network: UnrollNetwork = member(ImpalaDmLab30Network)
    vtrace: VTrace = member(VTrace)
    optimizer: RMSProp = member(ImpalaDmLab30Optimizer)
    learning: ImpalaLearning = member(ImpalaDmLab30Learning)
    population: Population = member(ImpalaDmLab30Population)
    RELATIONS = (ANNEALS_WITHIN_BUDGET,)


@typed_config.config
class ImpalaDmLabRuntime(ImpalaDmLab30Runtime):
    experiment: str = setting('impala_dmlab', 'launch/experiments.py')
    num_actors: int = setting(48, 'table 1: single-machine "IMPALA 48 actors"')
    eval_protocol: str = setting('impala_dmlab_training', 'table 2\'s "average final return": '
                                                          "the training games' "
                                                          "(paper_tables/protocols.py)")
    pbt_population: int = setting(0, 'sec. 5.2: hyperparameter sweeps, not PBT')


@typed_config.config
class ImpalaDmLabEnvironment(environment_config.DmLab):
    reward_clip: float = setting(1.0, 'table D.3')


@typed_config.config
class ImpalaDmLabNetwork(ImpalaDmLab30Network):
    torso: str = setting('shallow', 'sec. 5.2.1 and table 1: "the shallow model in Figure 3"')
    core: str = setting('lstm', 'figure 3 (left): LSTM 256 fed the last action and reward')


@typed_config.config
class ImpalaDmLabLearning(ImpalaDmLab30Learning):
    reward_clipping: str = setting('symmetric', 'table D.3: reward clipping "Single tasks '
                                                '[-1, 1]"')
    entropy_cost: float = setting(0.00025, "not stated for one run: sec. 5.2 sweeps table D.1's "
                                           "ranges; scalable_agent's single-level default")


@typed_config.config
class ImpalaDmLabOptimizer(ImpalaDmLab30Optimizer):
    learning_rate: float = setting(0.00048, "not stated for one run: sec. 5.2 sweeps table "
                                            "D.1's ranges; scalable_agent's single-level "
                                            "default, annealed to 0 as there")
    rmsprop_epsilon: float = setting(0.1, "not stated for one run; scalable_agent's "
                                          "single-level default (inside table D.1)")
    total_frames: int = setting(1_000_000_000, "not stated in the text; scalable_agent's "
                                               "default (total_environment_frames)")
    anneal_frames: int = setting(1_000_000_000, 'not stated; annealed over the training, as '
                                                'scalable_agent')


@typed_config.config
class ImpalaDmLab(ImpalaDmLab30):
    """IMPALA on one DeepMind Lab level (sec. 5.2: the single-task agents of figure 4 and of
    tables 1 and 2): figure 3's shallow network with its LSTM core, trained on the level alone
    with one set of hyperparameters. The paper sweeps 24 sets drawn from table D.1 (sec. 5.2)
    and reports the 3 best; a run here is one set, the rest fixed by table D.3. Everything not
    set below is DMLab-30's (`ImpalaDmLab30`): frame size, actions, unroll length, loss,
    optimizer."""
    tasks: str = setting('seekavoid_arena_01', "the one level (--level; a DMLab-30 level or a "
                                               "classic one, environments/names.py). Default: "
                                               "table 1's task 1 and table 2's task 5, whose "
                                               "20-second episodes (a \"simple fruit collection "
                                               "task\", sec. 5.2) give the most finished games "
                                               "per frame")
    runtime: runtime_config.Runtime = member(ImpalaDmLabRuntime)
    environment: environment_config.DmLab = member(ImpalaDmLabEnvironment)
    network: UnrollNetwork = member(ImpalaDmLabNetwork)
    optimizer: RMSProp = member(ImpalaDmLabOptimizer)
    learning: ImpalaLearning = member(ImpalaDmLabLearning)


def multitask_quick(c):
    """`--preset=quick` of the multi-task agents: a small machine, not the paper. One learner
    (no population), 3 actor processes whose environments cover each task once for Atari-57
    (3 x 19) or DMLab-30 (3 x 10), the demo's batch of 4 and RMSProp epsilon 1e-5 (`quick`),
    100,000 frames per task and 5 evaluation episodes per task."""
    atari = c.tasks == 'atari57'
    return runtime_config.quick(
        c, pbt_population=0, num_actors=3, envs_per_actor=19 if atari else 10,
        total_frames=100_000 * (57 if atari else 30), batch_size=4, rmsprop_epsilon=1e-5,
        checkpoint_interval_s=300.0, eval_episodes=5)


def atari57_tiny(c: ImpalaAtari57) -> ImpalaAtari57:
    """`--preset=tiny`: seconds-long runs for tests, on three games, one environment each."""
    return tiny(c).replace(tasks='asterix,berzerk,qbert',  # games a near-uniform policy ends
                           pbt_population=0, envs_per_actor=3)  # in seconds


# The tiny presets' DMLab-30 levels: a train/test pair and a language level.
TINY_DMLAB_LEVELS = ('rooms_collect_good_objects_train,language_select_described_object,'
                     'rooms_watermaze')


def dmlab30_tiny(c: ImpalaDmLab30) -> ImpalaDmLab30:
    """`--preset=tiny`: seconds-long runs for tests, on three levels (a train/test pair and a
    language level), one environment each; DMLab levels end at their own time limits."""
    return _tiny(c, tasks=TINY_DMLAB_LEVELS, pbt_population=0, total_frames=2_000,
                 envs_per_actor=3)


def dmlab_quick(c: ImpalaDmLab) -> ImpalaDmLab:
    """`--preset=quick` of the single-level agent: the Atari demo's settings (`quick`: 2.5M
    frames, batches of 4, RMSProp epsilon 1e-5) on a small machine's 2 actor processes of 4
    environments each; scored on the last 100 training games (the protocol's count). Not timed on
    a real DeepMind Lab here (none is installed)."""
    return quick(c).replace(num_actors=2, envs_per_actor=4, eval_episodes=-1)


def dmlab_tiny(c: ImpalaDmLab) -> ImpalaDmLab:
    """`--preset=tiny`: seconds-long runs for tests, on the config's level (which ends at its
    own time limit)."""
    return _tiny(c, total_frames=2_000)


ATARI57_PRESETS = {'paper': lambda c: c, 'quick': multitask_quick, 'tiny': atari57_tiny}
DMLAB30_PRESETS = {'paper': lambda c: c, 'quick': multitask_quick, 'tiny': dmlab30_tiny}
DMLAB_PRESETS = {'paper': lambda c: c, 'quick': dmlab_quick, 'tiny': dmlab_tiny}


def check_tasks(config, resolve) -> tuple[str, ...]:
    """The run's tasks by `resolve` (one line naming an unknown one, with near matches), and
    equal, fixed shares of environments for them (sec. 5.3)."""
    from environments import names  # pylint: disable=import-outside-toplevel
    try:
        tasks = names.task_list(config.tasks, resolve)
    except ValueError as e:
        raise checks.ConfigError(f'--tasks: {e}') from None
    envs = config.num_actors * config.envs_per_actor
    if envs % len(tasks):
        raise checks.ConfigError(
            f'--config.num_actors={config.num_actors} x --config.envs_per_actor='
            f'{config.envs_per_actor} = {envs} environments cannot give each of the '
            f'{len(tasks)} tasks the same number (IMPALA sec. 5.3): use a multiple of '
            f'{len(tasks)}')
    return tasks


def check_atari57(config: ImpalaAtari57) -> ImpalaAtari57:
    """One-line errors for the Atari-57 multi-task settings (and `check`'s Atari settings); the
    config with its population's learners."""
    from environments import names  # pylint: disable=import-outside-toplevel
    check_tasks(config, names.atari_rom_id)
    return _check_learning(checks.environment(settings.atari, config))


def check_dmlab30(config: ImpalaDmLab30) -> ImpalaDmLab30:
    """One-line errors for the DMLab-30 settings, then for a missing `deepmind_lab` (how to
    build it), before any process starts; the config with its population's learners."""
    from environments import names  # pylint: disable=import-outside-toplevel
    check_tasks(config, names.dmlab_train_level)
    return check_dmlab_settings(config)


def check_dmlab(config: ImpalaDmLab) -> ImpalaDmLab:
    """One-line errors for the single-level settings (an unknown level with near matches, a
    list of levels, PBT), then `check_dmlab30`'s, before any process starts."""
    from environments import names  # pylint: disable=import-outside-toplevel
    try:
        levels = names.task_list(config.tasks, names.dmlab_classic_train_level)
    except ValueError as e:
        raise checks.ConfigError(f'--level: {e}') from None
    if len(levels) != 1:
        raise checks.ConfigError(
            f'--level={config.tasks} names {len(levels)} levels: impala_dmlab trains on one '
            f'(IMPALA sec. 5.2); launch/impala_dmlab30.py trains one agent on several')
    if config.pbt_population:
        raise checks.ConfigError(
            f'--config.pbt_population={config.pbt_population}: impala_dmlab trains with fixed '
            f'hyperparameters (IMPALA sec. 5.2 sweeps them instead); leave it at 0')
    return check_dmlab_settings(config)


def check_dmlab_settings(config, check_learning: Callable | None = None):
    """The checks of every DeepMind Lab experiment after its levels': settings, learning (the
    agent's `check_learning`, IMPALA's by default), and last a missing `deepmind_lab` (how to
    build it); the config `check_learning` returns."""
    from environments import dmlab  # pylint: disable=import-outside-toplevel
    checks.one_of(config, 'core', ('lstm',))    # figure 3: the DMLab net has its LSTM
    config = (check_learning or _check_learning)(config)
    try:
        dmlab.import_deepmind_lab()
    except dmlab.DeepMindLabMissing as e:
        raise checks.ConfigError(str(e)) from None
    return config


# What population-based training can adapt during a run (app. F and G).
ADAPTABLE = ('learning_rate', 'entropy_cost', 'rmsprop_epsilon', 'max_grad_norm')


def replay_batch_size(config) -> int:
    """Trajectories of each batch drawn from replay: `replay_proportion` of the batch."""
    return round(config.replay_proportion * config.batch_size)


def check_unroll_learning(config, replay_capacity: int, capacity_field: str) -> None:
    """The settings of an agent learning from unrolls (IMPALA, and LASER built on it), whose
    replay holds `replay_capacity` unrolls as `--config.<capacity_field>` sets it (the choices
    of `torso`, `core` and `rmsprop_form`: their metadata, `UnrollNetwork` and `RMSProp`)."""
    replayed = replay_batch_size(config)   # its range and batch share: checks.declared
    if config.replay_proportion and replay_capacity < replayed:
        raise checks.ConfigError(
            f'--config.{capacity_field}={config[capacity_field]} holds {replay_capacity} '
            f'trajectories, fewer than one replay batch ({replayed})')


# Every IMPALA experiment's config: what the agent's unpacking functions take
# (learning.loss_scalars, learning.unroll_learning_arguments, impala_learning).
ImpalaConfig = ImpalaAtari | ImpalaAtari57 | ImpalaDmLab30
