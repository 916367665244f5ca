"""Reactor experiment config (Gruslys et al., 2018), one function per paper experiment.

Every paper-stated value names its section; values the paper does not state say "not stated"
and why ours (docs/fidelity.md, "Reactor", lists them). Presets for small machines live in
`PRESETS`, never here.
"""
import ml_collections

from agents.core import config_checks
from agents.core import runtime_config
from environments import settings


def atari() -> ml_collections.ConfigDict:
    """Reactor on one Atari game (sec. 3.4, 4.1; appendix 6.4, table 3)."""
    c = ml_collections.ConfigDict()
    c.experiment = 'reactor_atari'
    c.game = 'pong'
    c.seed = 0

    # Environment: "the same pre-processing pipeline including 4 action repeats was used as in
    # the original DQN paper" (sec. 4.1; environments/settings.add_atari): 84x84 frames (table
    # 3). Not stated, DQN's: minimal action sets, max over the last 2 frames, episodes ended at
    # a lost life in training (IMPALA's too), no-op starts in training (up to 30), rewards
    # clipped to [-1, 1]; the 30-minute cap (not stated for training), as evaluation's.
    settings.add_atari(c, frame_stack=1)   # table 3: Conv 1 input [84, 84, 1]; sec. 3.4.1
                                           # replaces frame stacking with the LSTMs

    # Network (table 3, appendix 6.4).
    c.num_atoms = 51                 # not stated ("#bins"); C51's, which Reactor extends
    c.v_min = -10.0                  # not stated; C51's support for clipped Atari rewards
    c.v_max = 10.0
    c.policy_epsilon = 0.01          # app. 6.4: the uniform mixed into the policy

    # Learner (sec. 3.4, 4.1).
    c.sequence_length = 33           # sec. 3.4: "sequences of length n = 33"
    c.sequence_period = 1            # sec. 3.3: priorities on "all (overlapping) sequences";
                                     # a new sequence starts at every step
    c.batch_size = 4                 # sec. 3.4: "in batches of 4"
    c.learning_rate = 5e-5           # sec. 3.4.1: Adam, 5e-5
    c.adam_beta1 = 0.0               # sec. 3.4.1: "zero momentum"
    c.adam_beta2 = 0.999             # not stated; Adam's default (Kingma & Ba)
    c.adam_epsilon = 1e-8            # not stated; Adam's default (Kingma & Ba)
    c.target_update_period = 1000    # sec. 4.1: T_update = 1000 learner updates
    c.discount = 0.99                # not stated; DQN's and C51's
    c.retrace_lambda = 1.0           # sec. 4.1: lambda = 1.0
    c.beta_loo_truncation = 1.0      # sec. 4.1: beta-LOO with beta = 1, i.e. c = 1 in
                                     # beta = min(c, 1/mu) (sec. 3.1)
    c.entropy_cost = 0.01            # not stated; app. 6.5: "the same entropy cost method used
                                     # by A3C", whose Atari value is 0.01
    c.acting_steps_per_learning_step = 5.0  # sec. 3.4: "4-6 acting steps per each learning
                                     # step"; Reverb's rate limiter keeps the middle, 5
    c.rate_limiter_tolerance = 100   # not stated: learning steps the ratio may run ahead or
                                     # behind at any moment (Reverb's error buffer)
    c.total_frames = 200_000_000     # sec. 4.1: 200M frames

    # Replay (sec. 3.3, appendix 6.3).
    c.replay_capacity = 1_000_000    # not stated; sequences (one per step: 1M steps, DQN's)
    c.replay_slack = 10_000          # ours: room for sequences not yet registered (Reverb
                                     # keeps capacity + slack; agents/reactor/lazy_priorities.py)
    c.replay_epsilon = 0.01          # not stated: the eps of uniform sampling (sec. 3.3)
    c.min_replay_size = 10_000       # not stated; sequences before learning starts

    # Runtime: how this machine runs it, not from the paper (10 or 20 actor-learner workers
    # and a parameter server, sec. 3.4; docs/fidelity.md).
    # One learner (Reactor runs no sweeps); 2 actors x 5 = 10 environments, one per paper
    # worker's acting thread (agents/core/runtime_config.py).
    runtime_config.add(c, envs_per_actor=5,
                       eval_protocol='reactor_atari_noop')   # sec. 4.1, table 5
    return c


def quick(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=quick`: a small machine, not the paper. The paper's algorithm and learner
    settings; a replay of 100k sequences filled to 2,000 before learning, 1M frames, one
    actor process of 4 environments, 5 evaluation episodes instead of 200."""
    return runtime_config.quick(
        c, replay_capacity=100_000, min_replay_size=2_000, total_frames=1_000_000,
        num_actors=1, envs_per_actor=4, eval_episodes=5)


def tiny(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests."""
    return runtime_config.tiny(
        quick(c), total_frames=3_000, max_episode_frames=2_000, sequence_length=6,
        batch_size=2, num_atoms=11, target_update_period=5, replay_capacity=400,
        replay_slack=400, min_replay_size=20, rate_limiter_tolerance=20)


PRESETS = {'paper': lambda c: c, 'quick': quick, 'tiny': tiny}

# The learner starts once the replay holds min_replay_size steps.
first_update_frames = config_checks.replay_start_frames

# What the checkpoints and the replay server of a run hold a shape for, and what the replay's
# tables are made with: Reverb restores a checkpointed table whole.
FIXED_ON_RESUME = ('game', 'action_set', 'frame_stack', 'screen_size', 'num_atoms',
                   'sequence_length', 'num_learners', 'replay_capacity', 'replay_slack',
                   'min_replay_size', 'acting_steps_per_learning_step', 'rate_limiter_tolerance')


def check(config: ml_collections.ConfigDict) -> None:
    """One-line errors for Reactor settings out of range; resolves the game name."""
    config_checks.environment(settings.atari, config)
    config_checks.runtime(config)
    if config.num_learners != 1:
        raise config_checks.ConfigError(
            f'--config.num_learners must be 1 (Reactor runs no sweeps), got '
            f'{config.num_learners}')
