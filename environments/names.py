"""Game names: the one mapping from any paper's spelling to the id this code base uses.

Atari: the 57 games of IMPALA appendix C (table C.1), Ape-X table 2, Reactor table 5 and LASER
appendix C (table 2), named by their ALE ROM ids (`ale_py.roms.get_all_rom_ids()`). The papers
spell them `montezuma_revenge`, "Montezuma's Revenge", `MontezumaRevenge`, "Kung-Fu Master"...;
`atari_rom_id` resolves every spelling by normalisation plus `ATARI_ALIASES`.

DeepMind Lab: the 30 levels of DMLab-30 (IMPALA appendix B, table B.1) and the classic levels of
`DMLAB_CLASSIC` that IMPALA's single-task experiments add (sec. 5.2), by DeepMind Lab's names.
"""
import difflib
import re

ATARI57 = (
    'alien', 'amidar', 'assault', 'asterix', 'asteroids', 'atlantis', 'bank_heist',
    'battle_zone', 'beam_rider', 'berzerk', 'bowling', 'boxing', 'breakout', 'centipede',
    'chopper_command', 'crazy_climber', 'defender', 'demon_attack', 'double_dunk', 'enduro',
    'fishing_derby', 'freeway', 'frostbite', 'gopher', 'gravitar', 'hero', 'ice_hockey',
    'jamesbond', 'kangaroo', 'krull', 'kung_fu_master', 'montezuma_revenge', 'ms_pacman',
    'name_this_game', 'phoenix', 'pitfall', 'pong', 'private_eye', 'qbert', 'riverraid',
    'road_runner', 'robotank', 'seaquest', 'skiing', 'solaris', 'space_invaders', 'star_gunner',
    'surround', 'tennis', 'time_pilot', 'tutankham', 'up_n_down', 'venture', 'video_pinball',
    'wizard_of_wor', 'yars_revenge', 'zaxxon',
)

# Normalised spellings (see `_normalise`) that do not normalise to a ROM id.
ATARI_ALIASES = {
    'jamesbond007': 'jamesbond',                # Reactor table 5: "James Bond 007"
    'montezumasrevenge': 'montezuma_revenge',   # Reactor table 5: "Montezuma's Revenge"
}


def _normalise(name):
    """Lowercase and drop everything but ASCII letters and digits ("Q*bert" -> "qbert")."""
    return re.sub(r'[^a-z0-9]', '', name.lower())


_ATARI_BY_KEY = {**{_normalise(g): g for g in ATARI57}, **ATARI_ALIASES}


def atari_rom_id(name):
    """The ALE ROM id of one of the 57 games, from any paper's spelling; ValueError if unknown."""
    game = _ATARI_BY_KEY.get(_normalise(name))
    if game is None:
        near = difflib.get_close_matches(_normalise(name), _ATARI_BY_KEY, n=3, cutoff=0.6)
        hint = ', '.join(dict.fromkeys(_ATARI_BY_KEY[k] for k in near))
        hint = f'; did you mean: {hint}?' if hint else ''
        raise ValueError(f'unknown Atari game {name!r}{hint} '
                         '(see environments/names.py for the 57 games)')
    return game


# DMLab-30 as IMPALA scores it (table 3, appendix B table B.1): the 30 levels of DeepMind Lab's
# game_scripts/levels/contributed/dmlab30. Two levels come as a train/test pair; the paper
# evaluates "on the test tasks" (table 3), so those two are named by their test variant here.
DMLAB30 = (
    'rooms_collect_good_objects_test', 'rooms_exploit_deferred_effects_test',
    'rooms_select_nonmatching_object', 'rooms_watermaze', 'rooms_keys_doors_puzzle',
    'language_select_described_object', 'language_select_located_object',
    'language_execute_random_task', 'language_answer_quantitative_question',
    'lasertag_one_opponent_large', 'lasertag_three_opponents_large',
    'lasertag_one_opponent_small', 'lasertag_three_opponents_small',
    'natlab_fixed_large_map', 'natlab_varying_map_regrowth', 'natlab_varying_map_randomized',
    'skymaze_irreversible_path_hard', 'skymaze_irreversible_path_varied',
    'psychlab_arbitrary_visuomotor_mapping', 'psychlab_continuous_recognition',
    'psychlab_sequential_comparison', 'psychlab_visual_search',
    'explore_object_locations_small', 'explore_object_locations_large',
    'explore_obstructed_goals_small', 'explore_obstructed_goals_large',
    'explore_goal_locations_small', 'explore_goal_locations_large',
    'explore_object_rewards_few', 'explore_object_rewards_many',
)

# The levels agents train on: the same, with the train variants of the two paired levels.
DMLAB30_TRAIN = tuple(level.replace('_test', '_train') for level in DMLAB30)

# Spellings in the papers that are not DeepMind Lab's (IMPALA table B.1 misspells these).
DMLAB_ALIASES = {
    'lasertag_three_oponents_large': 'lasertag_three_opponents_large',
    'pyschlab_arbitrary_visuomotor_mapping': 'psychlab_arbitrary_visuomotor_mapping',
    'pyschlab_continuous_recognition': 'psychlab_continuous_recognition',
    'pyschlab_sequential_comparison': 'psychlab_sequential_comparison',
    'pyschlab_visual_search': 'psychlab_visual_search',
}

# The classic DeepMind Lab levels IMPALA trains single-task agents on (sec. 5.2: table 1's
# task 1, table 2's task 5), outside DMLab-30: game_scripts/levels/<level>.lua, loaded by the
# bare name (environments/dmlab.level_path).
DMLAB_CLASSIC = ('seekavoid_arena_01',)

_DMLAB_BY_KEY = {**{level: level for level in DMLAB30 + DMLAB30_TRAIN}, **DMLAB_ALIASES}
_CLASSIC_BY_KEY = {level: level for level in DMLAB_CLASSIC}


def dmlab_level_name(name, *, classic=False):
    """DeepMind Lab's name of a DMLab-30 level (train and test variants kept apart), or with
    `classic` also of a classic level of `DMLAB_CLASSIC`; ValueError with near matches if
    unknown. Spellings: any case, spaces or hyphens for underscores, DMLab-30's path prefix."""
    known = {**_DMLAB_BY_KEY, **_CLASSIC_BY_KEY} if classic else _DMLAB_BY_KEY
    key = re.sub(r'[\s-]+', '_', name.strip().lower()).removeprefix('contributed/dmlab30/')
    level = known.get(key)
    if level is None:
        near = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
        hint = ', '.join(dict.fromkeys(known[k] for k in near))
        hint = f'; did you mean: {hint}?' if hint else ''
        if classic:
            raise ValueError(f'unknown DeepMind Lab level {name!r}{hint} (see '
                             f'environments/names.py for the 30 DMLab-30 levels and '
                             f'{", ".join(DMLAB_CLASSIC)})')
        raise ValueError(f'unknown DMLab-30 level {name!r}{hint} '
                         '(see environments/names.py for the 30 levels)')
    return level


def dmlab_test_level(name, *, classic=False):
    """The variant of a DMLab-30 level that IMPALA evaluates (table 3: "evaluated on the test
    tasks"): the `_test` level of a train/test pair, the level itself otherwise (`classic`
    levels included)."""
    level = dmlab_level_name(name, classic=classic)
    return level.removesuffix('_train') + '_test' if level.endswith('_train') else level


def dmlab_train_level(name, *, classic=False):
    """The variant of a DMLab-30 level that agents train on (the `_train` level of a pair);
    a `classic` level is its own."""
    level = dmlab_level_name(name, classic=classic)
    return level.removesuffix('_test') + '_train' if level.endswith('_test') else level


def dmlab_classic_train_level(name):
    """`dmlab_train_level` of any level IMPALA trains on: DMLab-30's and `DMLAB_CLASSIC`."""
    return dmlab_train_level(name, classic=True)


# Task lists of the multi-task agents (IMPALA sec. 5.3): a suite's name, or names joined by
# commas in any paper spelling.
SUITES = {'atari57': ATARI57, 'dmlab30': DMLAB30_TRAIN}


def task_list(spec, resolve):
    """The tasks `spec` names: 'atari57', 'dmlab30', or 'name,name,...' resolved one by one by
    `resolve` (`atari_rom_id`, `dmlab_train_level`, ...); ValueError for an unknown or repeated
    name, or an empty list."""
    if spec in SUITES:
        return tuple(resolve(name) for name in SUITES[spec])
    tasks = tuple(resolve(name) for name in filter(None, map(str.strip, spec.split(','))))
    if not tasks:
        raise ValueError(f'no tasks in {spec!r}: name a suite ({", ".join(SUITES)}) or games '
                         'or levels joined by commas')
    repeated = sorted({task for task in tasks if tasks.count(task) > 1})
    if repeated:
        raise ValueError(f'{", ".join(repeated)} named more than once in the task list {spec!r}')
    return tasks
