"""IMPALA experiment configs, one function per paper experiment.

Every paper-stated value names its source in the IMPALA paper (Espeholt et al., 2018). Values
the paper does not state say so. Presets for small machines live in `presets`, never here.
"""
from typing import Callable

import ml_collections

from agents.core import config_checks
from agents.core import runtime_config
from agents.core import population
from agents.core import sweeps
from agents.ops import choices
from environments import settings


def atari_experts() -> ml_collections.ConfigDict:
    """Per-game IMPALA experts on Atari (sec. 5.3.2, appendix G, table G.1; table 4)."""
    c = ml_collections.ConfigDict()
    c.experiment = 'impala_atari'
    c.game = 'pong'
    c.torso = 'shallow'              # sec. 5.3.2 / table 4 report 'shallow' and 'deep' experts
    c.core = 'feed_forward'          # sec. 5.3.2: Atari experts have no LSTM; 'lstm' is figure
                                     # 3's core fed the last action and clipped reward
    c.channel_multiplier = 1         # figure 3's channels (LASER widens them 4x)
    c.seed = 0

    # Environment (appendix G, table G.1): DQN's pipeline, which table G.1 states value for
    # value (environments/settings.add_atari): action repeat 4, max-pool over the last 2
    # action-repeat frames, 4 stacked 84x84 grayscale frames, the end of an episode when a life
    # is lost (training only), rewards clipped to [-1, 1] in the loss; app. G: "experts use
    # game-specific action sets". Not stated: A3C-style random no-op starts in training (up to
    # 30) and the standard 30-minute cap (docs/fidelity.md).
    settings.add_atari(c)
    c.reward_clipping = 'symmetric'  # table G.1: 'symmetric' (to +-reward_clip); figure D.1's
                                     # 'optimistic_asymmetric' (0.3 min(tanh r, 0) + 5 max(tanh
                                     # r, 0)) is DMLab-30's (table D.3)

    # Learner (table G.1 unless noted).
    c.unroll_length = 20             # table G.1 (n)
    c.batch_size = 32                # table G.1
    c.discount = 0.99                # table G.1
    c.baseline_cost = 0.5            # table G.1: baseline loss scaling
    c.entropy_cost = 0.01            # table G.1: entropy regularizer
    c.learning_rate = 6e-4           # table G.1, annealed linearly to 0 over anneal_frames
    c.rmsprop_decay = 0.99           # not in the paper; the authors' scalable_agent default
    c.rmsprop_momentum = 0.0         # table G.1
    c.rmsprop_epsilon = 0.01         # table G.1 (TF1 RMSProp: inside the square root)
    c.rmsprop_form = 'tf1'           # not stated; the authors' TF1 RMSProp (scalable_agent).
                                     # 'pytorch' (PolyBeast's) only for results/README.md's study
    c.max_grad_norm = 40.0           # table G.1: clip global gradient norm
    c.total_frames = 200_000_000     # sec. 5.3.2: experts trained for 200M frames
    c.anneal_frames = c.total_frames  # table G.1: "Anneal linearly to 0" over the training's
                                     # frames; a run stopped earlier (total_frames, the budget)
                                     # keeps this schedule
    c.clip_rho_threshold = 1.0       # sec. 5.2.2: rho-bar = 1
    c.clip_c_threshold = 1.0         # sec. 5.2.2: c-bar = 1
    c.clip_pg_rho_threshold = 1.0    # sec. 4.2 policy gradient uses rho_s (clipped at rho-bar)
    c.vtrace_lambda = 1.0            # sec. 4, remark 2: lambda = 1 unless stated
    c.off_policy_correction = 'vtrace'  # sec. 5.2.2, table 2: 'vtrace', 'one_step_is' (1-Step),
                                     # 'epsilon' (epsilon-correction), 'none' (No-correction)
    c.replay_proportion = 0.0        # sec. 5.2.2: 0.5 in the replay experiments; experts: none
    c.replay_capacity = 10_000       # table D.3: 10,000 trajectories, uniform, FIFO removal

    # Runtime: how this machine runs it, not from the paper (agents/core/runtime_config.py).
    # 16 games per actor (not stated; the runtime default is 8): each batched forward pass
    # serves twice the frames, and the actor's loop (the emulator and the network stepped in
    # turn) runs about 20% faster per core; at batch 32 an actor's 16 unrolls are half a batch,
    # so its policy lags by about one update (benchmarks/README.md, "Games per actor").
    runtime_config.add(c, eval_protocol='impala_atari_noop', envs_per_actor=16)
    c.replay_shared = True           # with several learners: one replay table they all share
    c.queue_size = 64                # unrolls buffered between actors and learner

    # Population-based training (app. F; agents/core/population.py and pbt.py): off (0) for
    # the experts, trained with fixed hyperparameters (app. G). --config.pbt_population=N
    # makes the run's N learners a population (num_learners = N), starting from table D.1
    # (TABLE_D1) and adapting table G.1's four hyperparameters, as the multi-task agent does.
    population_settings(c, 'entropy_cost,learning_rate,rmsprop_epsilon,max_grad_norm')
    c.pbt_population = 0
    return c


def quick(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=quick`: the demo on a 2-core machine (under 15 minutes), not the paper.

    Table G.1 is tuned for 200M frames; in the 2.5M frames a 2-core machine trains in the
    demo's time, those settings leave the policy uniform on Breakout. Two changes make it learn
    there (measured in benchmarks/README.md): RMSProp epsilon 1e-5, one of table D.1's sweep
    values, so that steps are normalised by the gradient scale instead of being capped by the
    epsilon; and batches of 4 unrolls, so that a frame buys 8x more updates. Its actors step
    8 games each, not the paper preset's 16: at batch 4 an actor's 16 unrolls are 4 updates,
    which doubles the policy's lag, and one demo run with 16 ended at 4.7 where two with 8
    ended at 7.4 and 10.2 (benchmarks/README.md, "Games per actor"). The budget of 2.5M frames
    stops the run; the learning rate keeps table G.1's schedule over 200M (`anneal_frames`):
    annealed to 0 at the budget instead, a 10M-frame Breakout run scored half as much
    (results/README.md, `impala_breakout_anneal_10m`).
    """
    return runtime_config.quick(c, total_frames=2_500_000, batch_size=4, rmsprop_epsilon=1e-5,
                                eval_episodes=5, envs_per_actor=8)


def tiny(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests, games cut short."""
    return _tiny(c, max_episode_frames=2_000)


def _tiny(c: ml_collections.ConfigDict, total_frames: int = 20_000,
          **values) -> ml_collections.ConfigDict:
    """Every IMPALA tiny preset's learner and runtime, then `values`."""
    return runtime_config.tiny(c, total_frames=total_frames, unroll_length=5, batch_size=2,
                               queue_size=8, **values)


PRESETS = {'paper': lambda c: c, 'quick': quick, 'tiny': tiny}

# The learner's first update takes one batch of the actors' unrolls.
first_update_frames = config_checks.first_batch_frames

# What the checkpoints of a run hold a network (or a directory layout) for.
FIXED_ON_RESUME = ('game', 'torso', 'core', 'channel_multiplier', 'action_set', 'frame_stack',
                   'screen_size', 'num_learners', 'pbt_population')

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


def check(config: ml_collections.ConfigDict) -> None:
    """One-line errors for IMPALA Atari settings out of range; resolves the game name."""
    config_checks.environment(settings.atari, config)
    _check_learning(config)


def _check_learning(config: ml_collections.ConfigDict) -> None:
    """The checks of every IMPALA experiment's runtime and learner settings."""
    config_checks.runtime(config)
    config_checks.one_of(config, 'off_policy_correction', choices.CORRECTIONS)
    config_checks.one_of(config, 'reward_clipping', choices.CLIPPINGS)
    check_unroll_learning(config, config.replay_capacity, 'replay_capacity')
    population.check(config, ADAPTABLE)


# The multi-task agents (sec. 5.3): one set of weights for every task of a suite. A run's
# `tasks` are a suite ('atari57', 'dmlab30') or names joined by commas; environment g of a
# learner's actors plays task g mod N (agents/core/builders.assigned_task), so every task gets
# the same fixed number of environments.

def population_settings(c: ml_collections.ConfigDict, adapted: str) -> None:
    """Population-based training as appendix F runs it (agents/core/pbt.py): 24 members
    (tables D.1 and G.1), each a learner of the run, adapting `adapted`; the fitness is stated
    by table G.1, the mean over tasks of each task's capped human-normalised score
    (launch/fitness.py)."""
    c.pbt_population = 24            # table D.1: "population size are 24"; table G.1: 24
    c.pbt_adapted = adapted
    c.pbt_burn_in_frames = 20_000_000   # app. F: "burn-in period of 20 million frames"
    c.pbt_fitness_episodes = 5_000   # app. F: "after collecting 5,000 episode rewards in total"
    c.pbt_copy_threshold = 0.05      # app. F: "more than an absolute 5% higher"
    c.pbt_perturb_probability = 0.33    # app. F: "permuted with 33% probability"
    c.pbt_perturb_factor = 1.2       # app. F: "multiplying with either 1.2 or 1/1.2"
    c.pbt_anneal_learning_rate = False  # not stated; figure F.1's learning rates move by
                                     # PBT alone, so PBT's schedule replaces the annealing


def atari57() -> ml_collections.ConfigDict:
    """The multi-task agent on Atari-57 (sec. 5.3.2, appendix G, table G.1; tables 4 and C.1,
    multi-task column): one deep feed-forward network for all 57 games on the full action set,
    PBT over 24 members. Everything else is the experts' table G.1 (`atari_experts`)."""
    c = atari_experts()
    c.experiment = 'impala_atari57'
    del c['game']
    c.tasks = 'atari57'              # sec. 5.3.2: all 57 games (or games joined by commas)
    c.torso = 'deep'                 # app. G: "a feed forward residual network (see Figure 3)"
    c.action_set = 'full'            # app. G: "the full Atari action set consisting of 18
                                     # actions", one policy layer for every game
    c.total_frames = 57 * 200_000_000  # table C.1: 200M frames per game, here over all games
    c.anneal_frames = c.total_frames  # table G.1: annealed to 0 over the training's frames
    c.num_actors = 57                # sec. 5.3: a fixed number of actors per game; the number
    c.envs_per_actor = 1             # is not stated for Atari: one each, the fewest
    c.eval_protocol = 'impala_atari_multitask_noop'
    population_settings(c, 'entropy_cost,learning_rate,rmsprop_epsilon,max_grad_norm')  # G.1
    c.pbt_anneal_learning_rate = True   # table G.1: "Anneal linearly to 0", for every Atari agent
    return c


def dmlab30_environment(c: ml_collections.ConfigDict) -> None:
    """An Atari config's environment made DMLab-30's (tables D.2 and D.3): the levels in
    place of the game, figure 3's LSTM core; what every DMLab-30 agent shares (LASER's too)."""
    for atari_only in ('game', 'action_set', 'max_pool_frames', 'frame_stack', 'screen_size',
                       'life_loss_ends_episode', 'noop_max', 'max_episode_frames'):
        del c[atari_only]
    c.tasks = 'dmlab30'              # sec. 5.3.1: the 30 levels of appendix B, trained on the
                                     # _train variants of the two train/test pairs
    c.core = 'lstm'                  # figure 3: LSTM 256 fed the last action and reward
    c.width = 96                     # table D.3
    c.height = 72                    # table D.3
    c.action_repeat = 4              # table D.3 (the 9 actions of table D.2)
    c.instruction_length = 16        # not stated; words kept per instruction, more than the
                                     # DMLab-30 language levels use
    c.instruction_vocabulary = 1000  # not stated; scalable_agent hashes words into 1000 ids
    c.dataset_path = ''              # psychlab_* levels' images (DeepMind Lab's
                                     # data/brady_konkle_oliva2008): '' = DeepMind Lab's default
    c.renderer = 'software'          # DeepMind Lab's renderer: 'software' or 'hardware'


def dmlab30() -> ml_collections.ConfigDict:
    """The multi-task agent on DMLab-30 (sec. 5.3.1; appendices B, D and F; tables 3 and B.1):
    figure 3's network with its LSTM core and instruction encoder on all 30 levels, 'IMPALA,
    deep, PBT' of table 3 (`--config.torso=shallow --config.num_actors=210` is its shallow
    net). Learner values as table D.3, loss and optimizer as the experts' (`atari_experts`)."""
    c = atari_experts()
    c.experiment = 'impala_dmlab30'
    dmlab30_environment(c)
    c.torso = 'deep'                 # table 3: 'IMPALA, deep, PBT'; 'shallow' is figure 3 left
    c.reward_clipping = 'optimistic_asymmetric'  # table D.3: DMLab-30 rewards through figure
                                     # D.1's 0.3 min(tanh r, 0) + 5 max(tanh r, 0)

    # Learner (table D.3 unless noted).
    c.unroll_length = 100            # table D.3 (n)
    c.batch_size = 32                # table 1: "batch size 32 if not otherwise mentioned"
    c.discount = 0.99                # table D.3
    c.baseline_cost = 0.5            # table D.3
    c.rmsprop_momentum = 0.0         # table D.3
    c.entropy_cost = 0.0033391318945337044  # not stated for one agent: PBT draws it from
    c.learning_rate = 0.00031866995608948655  # table D.1; these are scalable_agent's DMLab-30
                                     # values, used without PBT and annealed to 0
    c.rmsprop_epsilon = 0.1          # table D.1's choices; scalable_agent's default
    c.max_grad_norm = 0.0            # not in table D.3; scalable_agent does not clip gradients
    c.total_frames = 10_000_000_000  # not stated in the text; scalable_agent's DMLab-30 run
                                     # and LASER table 1's DMLab-30 budget
    c.anneal_frames = c.total_frames  # not stated; annealed over the training, as scalable_agent
    c.num_actors = 150               # sec. 5.3.1: 'IMPALA, deep' has 150 actors, 5 per level
    c.envs_per_actor = 1             # (210, 7 per level, for 'IMPALA, shallow')
    c.eval_protocol = 'impala_dmlab30_test'
    population_settings(c, 'entropy_cost,learning_rate,rmsprop_epsilon')   # sec. 5.3.1, app. F
    return c


def dmlab() -> ml_collections.ConfigDict:
    """IMPALA on one DeepMind Lab level (sec. 5.2: the single-task agents of figure 4 and of
    tables 1 and 2): figure 3's shallow network with its LSTM core, trained on the level alone
    with one set of hyperparameters. The paper sweeps 24 sets drawn from table D.1 (sec. 5.2)
    and reports the 3 best; a run here is one set, the rest fixed by table D.3. Everything not
    set below is DMLab-30's (`dmlab30`): frame size, actions, unroll length, loss, optimizer."""
    c = dmlab30()
    c.experiment = 'impala_dmlab'
    c.tasks = 'seekavoid_arena_01'   # the one level (--level; a DMLab-30 level or a classic
                                     # one, environments/names.py). Default: table 1's task 1
                                     # and table 2's task 5, whose 20-second episodes (a
                                     # "simple fruit collection task", sec. 5.2) give the most
                                     # finished games per frame
    c.torso = 'shallow'              # sec. 5.2.1 and table 1: "the shallow model in Figure 3"
    c.core = 'lstm'                  # figure 3 (left): LSTM 256 fed the last action and reward
    c.reward_clipping = 'symmetric'  # table D.3: reward clipping "Single tasks [-1, 1]"
    c.reward_clip = 1.0              # table D.3
    c.entropy_cost = 0.00025         # not stated for one run: sec. 5.2 sweeps table D.1's
    c.learning_rate = 0.00048        # ranges; these are scalable_agent's single-level
    c.rmsprop_epsilon = 0.1          # defaults (inside table D.1), the learning rate annealed
                                     # to 0 as there
    c.total_frames = 1_000_000_000   # not stated in the text; scalable_agent's default
                                     # (total_environment_frames)
    c.anneal_frames = c.total_frames  # not stated; annealed over the training, as scalable_agent
    c.num_actors = 48                # table 1: single-machine "IMPALA 48 actors"
    c.envs_per_actor = 1
    c.eval_protocol = 'impala_dmlab_training'   # table 2's "average final return": the
                                     # training games' (paper_tables/protocols.py)
    c.pbt_population = 0             # sec. 5.2: hyperparameter sweeps, not PBT
    return c


def multitask_quick(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=quick` of the multi-task agents: a small machine, not the paper. One learner
    (no population), 3 actor processes whose environments cover each task once for Atari-57
    (3 x 19) or DMLab-30 (3 x 10), the demo's batch of 4 and RMSProp epsilon 1e-5 (`quick`),
    100,000 frames per task and 5 evaluation episodes per task."""
    atari = c.tasks == 'atari57'
    return runtime_config.quick(
        c, pbt_population=0, num_actors=3, envs_per_actor=19 if atari else 10,
        total_frames=100_000 * (57 if atari else 30), batch_size=4, rmsprop_epsilon=1e-5,
        checkpoint_interval_s=300.0, eval_episodes=5)

def atari57_tiny(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests, on three games, one environment each."""
    c = tiny(c)
    c.tasks = 'asterix,berzerk,qbert'    # games a near-uniform policy ends in seconds
    c.pbt_population = 0
    c.envs_per_actor = 3
    return c


# The tiny presets' DMLab-30 levels: a train/test pair and a language level.
TINY_DMLAB_LEVELS = ('rooms_collect_good_objects_train,language_select_described_object,'
                     'rooms_watermaze')


def dmlab30_tiny(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests, on three levels (a train/test pair and a
    language level), one environment each; DMLab levels end at their own time limits."""
    return _tiny(c, tasks=TINY_DMLAB_LEVELS, pbt_population=0, total_frames=2_000,
                 envs_per_actor=3)


def dmlab_quick(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=quick` of the single-level agent: the Atari demo's settings (`quick`: 2.5M
    frames, batches of 4, RMSProp epsilon 1e-5) on a small machine's 2 actor processes of 4
    environments each; scored on the last 100 training games (the protocol's count). Not timed on
    a real DeepMind Lab here (none is installed)."""
    c = quick(c)
    c.num_actors = 2
    c.envs_per_actor = 4
    c.eval_episodes = -1
    return c


def dmlab_tiny(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests, on the config's level (which ends at its
    own time limit)."""
    return _tiny(c, total_frames=2_000)


ATARI57_PRESETS = {'paper': lambda c: c, 'quick': multitask_quick, 'tiny': atari57_tiny}
DMLAB30_PRESETS = {'paper': lambda c: c, 'quick': multitask_quick, 'tiny': dmlab30_tiny}
DMLAB_PRESETS = {'paper': lambda c: c, 'quick': dmlab_quick, 'tiny': dmlab_tiny}
# A multi-task run's tasks are fixed too: its logged games name their task by environment
# (builders.game_task), so other tasks would report them under other names.
ATARI57_FIXED_ON_RESUME = ('tasks', 'torso', 'core', 'channel_multiplier', 'action_set',
                           'frame_stack', 'screen_size', 'num_learners', 'pbt_population')
DMLAB30_FIXED_ON_RESUME = ('tasks', 'torso', 'core', 'channel_multiplier', 'width', 'height',
                           'instruction_vocabulary', 'num_learners', 'pbt_population')
DMLAB_FIXED_ON_RESUME = DMLAB30_FIXED_ON_RESUME


def check_tasks(config: ml_collections.ConfigDict, resolve) -> tuple[str, ...]:
    """The run's tasks by `resolve` (one line naming an unknown one, with near matches), and
    equal, fixed shares of environments for them (sec. 5.3)."""
    from environments import names  # pylint: disable=import-outside-toplevel
    try:
        tasks = names.task_list(config.tasks, resolve)
    except ValueError as e:
        raise config_checks.ConfigError(f'--tasks: {e}') from None
    envs = config.num_actors * config.envs_per_actor
    if envs % len(tasks):
        raise config_checks.ConfigError(
            f'--config.num_actors={config.num_actors} x --config.envs_per_actor='
            f'{config.envs_per_actor} = {envs} environments cannot give each of the '
            f'{len(tasks)} tasks the same number (IMPALA sec. 5.3): use a multiple of '
            f'{len(tasks)}')
    return tasks


def check_atari57(config: ml_collections.ConfigDict) -> None:
    """One-line errors for the Atari-57 multi-task settings (and `check`'s on each game)."""
    from environments import names  # pylint: disable=import-outside-toplevel
    tasks = check_tasks(config, names.atari_rom_id)
    one_game = ml_collections.ConfigDict(config.to_dict())
    one_game.game = tasks[0]
    config_checks.environment(settings.atari, one_game)
    _check_learning(config)


def check_dmlab30(config: ml_collections.ConfigDict) -> None:
    """One-line errors for the DMLab-30 settings, then for a missing `deepmind_lab` (how to
    build it), before any process starts."""
    from environments import names  # pylint: disable=import-outside-toplevel
    check_tasks(config, names.dmlab_train_level)
    check_dmlab_settings(config)


def check_dmlab(config: ml_collections.ConfigDict) -> None:
    """One-line errors for the single-level settings (an unknown level with near matches, a
    list of levels, PBT), then `check_dmlab30`'s, before any process starts."""
    from environments import names  # pylint: disable=import-outside-toplevel
    try:
        levels = names.task_list(config.tasks, names.dmlab_classic_train_level)
    except ValueError as e:
        raise config_checks.ConfigError(f'--level: {e}') from None
    if len(levels) != 1:
        raise config_checks.ConfigError(
            f'--level={config.tasks} names {len(levels)} levels: impala_dmlab trains on one '
            f'(IMPALA sec. 5.2); launch/impala_dmlab30.py trains one agent on several')
    if config.pbt_population:
        raise config_checks.ConfigError(
            f'--config.pbt_population={config.pbt_population}: impala_dmlab trains with fixed '
            f'hyperparameters (IMPALA sec. 5.2 sweeps them instead); leave it at 0')
    check_dmlab_settings(config)


def check_dmlab_settings(config: ml_collections.ConfigDict,
                         check_learning: Callable[[ml_collections.ConfigDict], None] = None
                         ) -> None:
    """The checks of every DeepMind Lab experiment after its levels': settings, learning (the
    agent's `check_learning`, IMPALA's by default), and last a missing `deepmind_lab` (how to
    build it)."""
    from environments import dmlab  # pylint: disable=import-outside-toplevel
    config_checks.one_of(config, 'renderer', ('software', 'hardware'))
    config_checks.one_of(config, 'core', ('lstm',))    # figure 3: the DMLab net has its LSTM
    (check_learning or _check_learning)(config)
    try:
        dmlab.import_deepmind_lab()
    except dmlab.DeepMindLabMissing as e:
        raise config_checks.ConfigError(str(e)) from None


# What population-based training can adapt during a run (app. F and G).
ADAPTABLE = ('learning_rate', 'entropy_cost', 'rmsprop_epsilon', 'max_grad_norm')


def replay_batch_size(config: ml_collections.ConfigDict) -> int:
    """Trajectories of each batch drawn from replay: `replay_proportion` of the batch."""
    return round(config.replay_proportion * config.batch_size)


def check_unroll_learning(config: ml_collections.ConfigDict, replay_capacity: int,
                          capacity_field: str) -> None:
    """The settings of an agent learning from unrolls (IMPALA, and LASER built on it), whose
    replay holds `replay_capacity` unrolls as `--config.<capacity_field>` sets it."""
    config_checks.one_of(config, 'torso', ('shallow', 'deep'))
    config_checks.one_of(config, 'core', ('feed_forward', 'lstm'))
    config_checks.one_of(config, 'rmsprop_form', choices.RMSPROP_FORMS)
    replayed = replay_batch_size(config)   # its range and batch share: config_checks.declared
    if config.replay_proportion and replay_capacity < replayed:
        raise config_checks.ConfigError(
            f'--config.{capacity_field}={config[capacity_field]} holds {replay_capacity} '
            f'trajectories, fewer than one replay batch ({replayed})')
