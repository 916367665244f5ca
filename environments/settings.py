"""The environment settings of an experiment config (agents/core/environment_config.py holds
their fields, their ranges and relations): what an environment resolves before any emulator is
imported, raising ValueError with the one line the user sees (agents run it through
agents/core/config_checks.environment).
"""
from environments import names


def atari(config):
    """`config` with its Atari game's name resolved (environments/names.py) where it has one."""
    if 'game' in config:
        config = config.replace(game=names.atari_rom_id(config.game))
    return config
