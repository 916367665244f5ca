"""Ape-X experiment configs (Horgan et al., 2018), one function per paper experiment.

Every paper-stated value names its section (restated in docs/paper_notes.md); values the
paper does not state say so. Presets for small machines live in the preset functions, never here.
"""
import functools

import ml_collections

from agents.core import config_checks
from agents.core import runtime_config
from environments import settings


def _replay_and_actors(c: ml_collections.ConfigDict) -> None:
    """What both Ape-X agents share (sec. 3 and 4; appendix D: "otherwise as per DQN")."""
    c.n_step = 3                         # sec. 4.1 / appendix C: multi-step loss, n = 3
    c.discount = 0.99                    # sec. 4.1 (gamma)
    c.priority_exponent = 0.6            # sec. 4.1, appendix D (alpha)
    c.importance_sampling_exponent = 0.4  # sec. 4.1 (beta)
    c.transition_batch_size = 50         # sec. 4.1: actors send transitions in batches of B = 50
    c.min_replay_size = 50_000           # appendix C: learning starts after 50,000 transitions
    c.samples_per_insert = 0.0           # not stated as such: the actors and the learner run
                                         # at their own speeds (sec. 3), 0 here; > 0 holds the
                                         # transitions sampled per transition inserted at that
                                         # (reverb_tables/tables.py), for small machines


def atari_dqn() -> ml_collections.ConfigDict:
    """Ape-X DQN on one Atari game (sec. 3.1, 4.1, appendix C; table 2)."""
    c = ml_collections.ConfigDict()
    c.experiment = 'apex_dqn_atari'
    c.game = 'pong'
    c.seed = 0

    # Environment: appendix C, "the standard transformations introduced by DQN"
    # (environments/settings.add_atari): greyscale 84x84, frame stacking (4), actions repeated
    # 4 times (sec. 4.1: "a fixed action repeat of 4"), rewards clipped to [-1, 1]. Not stated,
    # DQN's: minimal action sets, max over the last 2 frames, episodes ended at a lost life in
    # training (as Reactor's, docs/fidelity.md), no-op starts in training (up to 30).
    settings.add_atari(c, max_episode_frames=50_000)   # sec. 4.1: training episodes limited to
                                                       # 50,000 frames

    # Replay and actors (sec. 4.1).
    _replay_and_actors(c)
    c.replay_capacity = 2_000_000        # sec. 4.1: soft limit 2M, FIFO removal
    c.epsilon = 0.4                      # sec. 4.1: epsilon_i = epsilon^(1 + alpha i / (N-1))
    c.epsilon_alpha = 7.0                # sec. 4.1 (alpha of the epsilon schedule)
    c.parameter_update_frames = 400      # sec. 4.1: actors copy parameters every 400 frames

    # Learner (appendix C).
    c.batch_size = 512                   # sec. 4.1
    c.learning_rate = 0.00025 / 4        # appendix C
    c.rmsprop_decay = 0.95               # appendix C (centered RMSProp)
    c.rmsprop_epsilon = 1.5e-7           # appendix C
    c.rmsprop_momentum = 0.0             # appendix C: no momentum
    c.max_grad_norm = 40.0               # appendix C
    c.target_update_period = 2500        # appendix C: target copied every 2,500 batches
    c.prefetch_batches = 16              # sec. 4.1: the learner prefetches up to 16 batches
    c.total_frames = 22_800_000_000      # table 1: 22,800M frames (5 days)

    # Actors (sec. 4.1: 360, one CPU core each): 45 processes of 8 environments, each
    # environment one paper actor with its own epsilon_i; presets size them to a machine.
    # x envs_per_actor = 360 (sec. 4.1); 8 environments per process: not stated (one
    # environment per actor machine). The rest: agents/core/runtime_config.py.
    runtime_config.add(c, num_actors=45, envs_per_actor=8, eval_protocol='apex_atari_noop')
    c.replay_readers = 2                 # not stated; sample streams decompressed in parallel
                                         # with learning (sec. 4.1), one per core here
    return c


def control_dpg() -> ml_collections.ConfigDict:
    """Ape-X DPG on one DeepMind Control Suite task from features (sec. 3.2, 4.2, appendix D)."""
    c = ml_collections.ConfigDict()
    c.experiment = 'apex_dpg_control'
    c.task = 'humanoid_walk'             # sec. 4.2: manipulator bring_ball, humanoid stand,
    c.seed = 0                           # walk, run; any other suite task by name
    c.action_repeat = 1                  # sec. 4.2: "here we do not use action repeats"
    c.reward_clip = 0.0                  # not stated; 0 = no clipping (rewards are in [0, 1])

    # Replay and actors (sec. 4.2, appendix D).
    _replay_and_actors(c)
    c.replay_capacity = 1_000_000        # appendix D: fixed capacity of 10^6
    c.eviction_exponent = -0.4           # appendix D: evict by prioritized sampling at -0.4
    c.exploration_sigma = 0.3            # appendix D: Gaussian action noise, sigma = 0.3
    c.parameter_update_frames = 400      # not stated for control; as Atari (sec. 4.1)

    # Learner (appendix D).
    c.batch_size = 256                   # sec. 4.2
    c.learning_rate = 1e-4               # appendix D: Adam 1e-4 (actor and critic)
    c.actor_gradient_clip = 1.0          # appendix D: "the gradient used to update the actor
                                         # network is clipped to [-1, 1], element-wise": dq/da,
                                         # as trfl's dpg op (docs/fidelity.md)
    c.critic_max_grad_norm = 40.0        # appendix D: "otherwise as per DQN" (appendix C: 40)
    c.target_update_period = 100         # appendix D: targets copied every 100 batches
    c.prefetch_batches = 16              # sec. 4.1
    c.total_frames = 1_000_000_000       # not stated (fig. 3 is in wall-clock hours)

    # Actors (sec. 4.2: 64): 8 processes of 8 environments; presets size them to a machine.
    # x envs_per_actor = 64 (sec. 4.2); 8 environments per process: not stated (one
    # environment per actor machine). The rest: agents/core/runtime_config.py.
    runtime_config.add(c, num_actors=8, envs_per_actor=8,
                       eval_protocol='apex_control_noiseless')
    c.replay_readers = 2                 # not stated; as Ape-X DQN
    return c


def _quick(c: ml_collections.ConfigDict, **values) -> ml_collections.ConfigDict:
    """`--preset=quick`: a demo on a 2-core machine, not the paper."""
    return runtime_config.quick(
        c, num_actors=2,                 # this machine's 2 cores, not the paper's 360 or 64
        replay_capacity=100_000,         # a demo (the paper's 2M Atari transitions: ~4.3 GiB)
        min_replay_size=2_000, batch_size=64, prefetch_batches=2, eval_episodes=5, **values)


# Each experiment's quick preset: Ape-X DQN on an Atari game, Ape-X DPG on a control task.
# Both hold the learner to a fixed number of transitions sampled per transition inserted: on 2
# cores an unthrottled learner samples 0.73 (DQN) or 2.5 (DPG) per inserted one and learns far
# less per frame than the paper's 22.8B frames make up for (results/README.md,
# `apex_dqn_breakout_spi8`, `apex_dpg_*_spi32`). DQN's 8 is DQN's own ratio (Mnih et al. 2015:
# a batch of 32 every 4 steps); DPG's 32 is Acme D4PG's default `samples_per_insert`.
quick_dqn = functools.partial(_quick, total_frames=2_000_000, target_update_period=500,
                              envs_per_actor=8, samples_per_insert=8.0)
quick_dpg = functools.partial(_quick, total_frames=200_000, target_update_period=100,
                              envs_per_actor=4, samples_per_insert=32.0)


def tiny(c: ml_collections.ConfigDict, **values) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests (Ape-X DPG's; `tiny_dqn` for DQN)."""
    return runtime_config.tiny(
        c, total_frames=4_000, replay_capacity=2_000, min_replay_size=100, batch_size=8,
        prefetch_batches=1, transition_batch_size=10, target_update_period=5, **values)


tiny_dqn = functools.partial(tiny, max_episode_frames=2_000)   # Ape-X DQN's: games cut short

DQN_PRESETS = {'paper': lambda c: c, 'quick': quick_dqn, 'tiny': tiny_dqn}
DPG_PRESETS = {'paper': lambda c: c, 'quick': quick_dpg, 'tiny': tiny}

# The learner starts once the replay holds min_replay_size transitions (appendix C).
first_update_frames = config_checks.replay_start_frames

# What the checkpoints of a run (learner and replay) hold networks and transitions for, and
# what the replay's table is made with: Reverb restores a checkpointed table whole.
FIXED_ON_RESUME = ('game', 'task', 'action_set', 'frame_stack', 'screen_size', 'n_step',
                   'num_learners', 'replay_capacity', 'min_replay_size', 'priority_exponent',
                   'eviction_exponent', 'samples_per_insert')


def check_dqn(config: ml_collections.ConfigDict) -> None:
    """One-line errors for Ape-X DQN settings out of range; resolves the game name."""
    config_checks.environment(settings.atari, config)
    config_checks.positive(config, 'max_grad_norm')   # unlike LASER's, 0 does not turn it off
    config_checks.runtime(config)


def check_dpg(config: ml_collections.ConfigDict) -> None:
    """One-line errors for Ape-X DPG settings out of range; checks the task name."""
    from environments import control  # pylint: disable=import-outside-toplevel
    try:
        control.parse_task(config.task)
    except ValueError as e:
        raise config_checks.ConfigError(str(e)) from None
    config_checks.runtime(config)
