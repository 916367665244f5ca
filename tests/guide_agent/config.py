"""Step 2 of docs/architecture.md's "Where a new agent plugs in": the config of the guide's
agent, one-step actor-critic (Sutton and Barto, 2018, sec. 13.5) on one Atari game.

The algorithm's paper states no Atari settings: the environment is IMPALA's Atari setup
(IMPALA table G.1, as `environments/atari.py` implements it), and the learner's values are
"not stated", chosen to be those of IMPALA's experts where the two agents share a term.
"""
import ml_collections

from agents.core import config_checks
from agents.core import runtime_config
from environments import settings


def atari() -> ml_collections.ConfigDict:
    """One-step actor-critic on one Atari game (Sutton and Barto, 2018, sec. 13.5)."""
    c = ml_collections.ConfigDict()
    c.experiment = 'guide_actor_critic_atari'
    c.game = 'pong'
    c.seed = 0

    # Environment: IMPALA table G.1 (not stated for this algorithm; environments/settings.py),
    # rewards clipped to [-1, 1] in the loss.
    settings.add_atari(c)

    # Learner: sec. 13.5 learns from one transition at a time; batches of them, the
    # optimizer and every value below are not stated.
    c.unroll_length = 1              # one learnt step per item: (o_t, a_t, r, d) and o_{t+1}
    c.batch_size = 32
    c.discount = 0.99
    c.baseline_cost = 0.5
    c.entropy_cost = 0.01
    c.learning_rate = 6e-4
    c.rmsprop_decay = 0.99
    c.rmsprop_epsilon = 0.01
    c.max_grad_norm = 40.0
    c.total_frames = 50_000_000

    # Runtime: how this machine runs it (agents/core/runtime_config.py).
    runtime_config.add(c, eval_protocol='atari_noop')   # no paper's table reports it
    c.queue_size = 64                # transitions buffered between actors and learner
    return c


def tiny(c: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`--preset=tiny`: seconds-long runs for tests."""
    return runtime_config.tiny(c, total_frames=4_000, max_episode_frames=2_000, batch_size=8,
                               queue_size=16)


PRESETS = {'paper': lambda c: c, 'tiny': tiny}

# The learner's first update takes one batch of items.
first_update_frames = config_checks.first_batch_frames

# What the checkpoints of a run hold a network for.
FIXED_ON_RESUME = ('game', 'action_set', 'frame_stack', 'screen_size', 'num_learners')


def check(config: ml_collections.ConfigDict) -> None:
    """One-line errors for settings out of range; resolves the game name."""
    config_checks.environment(settings.atari, config)
    config_checks.runtime(config)     # every field's declared range (batch, costs, rates...)
    config_checks.one_of(config, 'unroll_length', (1,))
