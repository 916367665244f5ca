"""Environment settings, declared and checked before any emulator is imported: `add_atari`
writes the Atari pipeline every agent here takes; each check raises ValueError with the one
line the user sees (agents run it through agents/core/config_checks.environment).
"""
from environments import names


def add_atari(config, **values) -> None:
    """Adds the Atari fields `atari.from_config` reads, and `reward_clip`, to an experiment's
    config: the pipeline of DQN (Mnih et al., 2015), which IMPALA's table G.1 states value for
    value and Ape-X (appendix C), Reactor (sec. 4.1) and LASER (through IMPALA, sec. 5.1) defer
    to; then `values`, an experiment's own, each cited where its config gives it."""
    config.action_set = 'minimal'        # DQN: each game's minimal action set (IMPALA app. G:
                                         # "game-specific action sets")
    config.action_repeat = 4             # DQN: an action every 4th frame (IMPALA table G.1)
    config.max_pool_frames = 2           # DQN: max over the last 2 frames (IMPALA table G.1)
    config.frame_stack = 4               # DQN: the 4 last frames stacked (IMPALA table G.1)
    config.screen_size = 84              # DQN: greyscale 84x84 (IMPALA table G.1)
    config.life_loss_ends_episode = True  # DQN's training episodes end at a lost life (IMPALA
                                         # table G.1: training only)
    config.noop_max = 30                 # DQN's no-op starts; stated for evaluation only, kept
                                         # in training as A3C-era code did (docs/fidelity.md)
    config.max_episode_frames = 108_000  # not stated; the standard 30-minute cap at 60 Hz
                                         # (docs/fidelity.md)
    config.reward_clip = 1.0             # DQN: rewards clipped to [-1, 1] (IMPALA table G.1)
    for field, value in values.items():
        if field not in config:
            raise ValueError(f'not an Atari field: {field!r}')
        config[field] = value


def atari(config) -> None:
    """The Atari settings of an experiment (environments/atari.py); resolves the game name."""
    config.game = names.atari_rom_id(config.game)
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
