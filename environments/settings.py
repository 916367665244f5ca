"""The environment settings of an experiment config (agents/core/environment_config.py holds
their fields), checked before any emulator is imported: each check raises ValueError with the
one line the user sees (agents run it through agents/core/config_checks.environment).
"""
from environments import names


def atari(config):
    """The Atari settings of an experiment (environments/atari.py) checked; `config` with its
    game name resolved where it has one."""
    if 'game' in config:
        config = config.replace(game=names.atari_rom_id(config.game))
    for minimum, fields in ((1, ('action_repeat', 'frame_stack', 'screen_size')),
                            (0, ('noop_max', 'max_episode_frames', 'reward_clip'))):
        for field in fields:
            if not config[field] >= minimum:       # NaN included
                raise ValueError(f'--config.{field} must be >= {minimum}, got {config[field]}')
    if not 1 <= config.max_pool_frames <= config.action_repeat:
        raise ValueError(f'--config.max_pool_frames must be in [1, action_repeat='
                         f'{config.action_repeat}], got {config.max_pool_frames}')
    if config.action_set not in ('minimal', 'full'):
        raise ValueError(f"--config.action_set must be 'minimal' or 'full', "
                         f"got {config.action_set!r}")
    return config
