"""One-line checks of experiment configs, run before any process starts.

Each agent's `config.py` has a `check(config)` built from these; the experiment registry
(launch/experiments.py) runs it. A failed check raises `ConfigError`, whose message is the one
line the user sees.
"""
import ml_collections


class ConfigError(ValueError):
    """A one-line, user-facing reason why a config cannot run."""


def at_least(config, minimum, *fields) -> None:
    for field in fields:
        if not config[field] >= minimum:           # NaN included
            raise ConfigError(f'--config.{field} must be >= {minimum}, got {config[field]}')


def in_unit_interval(config, *fields) -> None:
    for field in fields:
        if not 0.0 <= config[field] <= 1.0:
            raise ConfigError(f'--config.{field} must be in [0, 1], got {config[field]}')


def positive(config, *fields) -> None:
    for field in fields:
        if not config[field] > 0:
            raise ConfigError(f'--config.{field} must be > 0, got {config[field]}')


def one_of(config, field, choices) -> None:
    if config[field] not in choices:
        allowed = ', '.join(repr(c) for c in choices)
        raise ConfigError(f'--config.{field} must be one of {allowed}, got {config[field]!r}')


def runtime(config: ml_collections.ConfigDict) -> None:
    """What every experiment's runtime section shares: learners, actors, XLA."""
    at_least(config, 1, 'num_learners', 'num_actors', 'envs_per_actor', 'total_frames',
             'max_nonfinite_updates')
    if config.jit_compile not in ('auto', True, False):
        raise ConfigError(f"--config.jit_compile must be true, false or 'auto', "
                          f"got {config.jit_compile!r}")


def atari_environment(config: ml_collections.ConfigDict) -> None:
    """The Atari settings of an experiment (environments/atari.py); resolves the game name."""
    from environments import names  # pylint: disable=import-outside-toplevel
    try:
        config.game = names.atari_rom_id(config.game)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    at_least(config, 1, 'action_repeat', 'frame_stack', 'screen_size')
    at_least(config, 0, 'noop_max', 'max_episode_frames', 'reward_clip')
    if not 1 <= config.max_pool_frames <= config.action_repeat:
        raise ConfigError(f'--config.max_pool_frames must be in [1, action_repeat='
                          f'{config.action_repeat}], got {config.max_pool_frames}')
    if config.action_set not in ('minimal', 'full'):
        raise ConfigError(f"--config.action_set must be 'minimal' or 'full', "
                          f"got {config.action_set!r}")


def unroll_learning(config: ml_collections.ConfigDict, replay_capacity: int,
                    capacity_field: str) -> None:
    """The settings of an agent built on agents/core/unrolls.py (IMPALA, LASER), whose replay
    holds `replay_capacity` unrolls as `--config.<capacity_field>` sets it."""
    at_least(config, 1, 'unroll_length', 'batch_size', 'queue_size', 'channel_multiplier')
    at_least(config, 0, 'entropy_cost', 'baseline_cost', 'max_grad_norm')
    in_unit_interval(config, 'discount', 'rmsprop_decay', 'rmsprop_momentum', 'vtrace_lambda')
    positive(config, 'learning_rate', 'rmsprop_epsilon')
    one_of(config, 'torso', ('shallow', 'deep'))
    one_of(config, 'core', ('feed_forward', 'lstm'))
    if config.torso == 'shallow' and config.channel_multiplier != 1:
        raise ConfigError('--config.channel_multiplier widens the deep torso only: use '
                          '--config.torso=deep, or channel_multiplier=1')
    proportion = config.replay_proportion
    if not 0.0 <= proportion < 1.0:
        raise ConfigError(f'--config.replay_proportion must be in [0, 1) (the online queue needs '
                          f'a part of every batch), got {proportion}')
    replayed = round(proportion * config.batch_size)
    if proportion and not 1 <= replayed < config.batch_size:
        raise ConfigError(
            f'--config.replay_proportion={proportion} of --config.batch_size='
            f'{config.batch_size} is {proportion * config.batch_size:g} trajectories: each '
            f'batch needs at least one replayed and one online trajectory (batches take '
            f'round(proportion x batch) from replay)')
    if proportion and replay_capacity < replayed:
        raise ConfigError(
            f'--config.{capacity_field}={config[capacity_field]} holds {replay_capacity} '
            f'trajectories, fewer than one replay batch ({replayed})')
