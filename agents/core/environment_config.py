"""The environment sections of experiment configs (agents/core/typed_config.py): `Atari`, the
pipeline every Atari agent here takes; `DmLab`, DeepMind Lab's frames and instructions;
`Control`, the Control Suite's. An experiment redeclares the fields its paper sets otherwise,
with its citation. environments/ reads these fields (`atari.from_config`, `dmlab.from_config`,
`control.ControlTask`; environments/settings.py resolves a game's name); what each field allows,
and the relations between them, are declared here.
"""
from agents.core import config_checks as checks
from agents.core import typed_config
from agents.core.typed_config import setting


_PIXELS = checks.Rule(checks.COUNT, 'pixels')


@typed_config.config
class Atari(typed_config.Config):
    """The Atari fields `atari.from_config` reads, and `reward_clip`: the pipeline of DQN (Mnih
    et al., 2015), which IMPALA's table G.1 states value for value and Ape-X (appendix C),
    Reactor (sec. 4.1) and LASER (through IMPALA, sec. 5.1) defer to."""
    action_set: str = setting('minimal', "DQN: each game's minimal action set (IMPALA app. G: "
                                         "\"game-specific action sets\")",
                              ('minimal', 'full'), fixed_on_resume=True)
    action_repeat: int = setting(4, 'DQN: an action every 4th frame (IMPALA table G.1)',
                                 checks.Rule(checks.COUNT, 'steps of each action'))
    max_pool_frames: int = setting(2, 'DQN: max over the last 2 frames (IMPALA table G.1)',
                                   checks.Rule(checks.COUNT, 'frames'))
    frame_stack: int = setting(4, 'DQN: the 4 last frames stacked (IMPALA table G.1)',
                               checks.Rule(checks.COUNT, 'frames'), fixed_on_resume=True)
    screen_size: int = setting(84, 'DQN: greyscale 84x84 (IMPALA table G.1)',
                               checks.SIZE, fixed_on_resume=True)
    life_loss_ends_episode: bool = setting(True, "DQN's training episodes end at a lost life "
                                                 "(IMPALA table G.1: training only)")
    life_loss_zero_discount: bool = setting(
        False, "where a lost life does not end the episode (`life_loss_ends_episode` off): "
               "whether it zeroes the discount inside the episode, which goes on to the game's "
               "end, as DeepMind's DQN Zoo and Acme apply DQN's rule "
               "(`zero_discount_on_life_loss`): a recurrent core keeps its state across lives")
    noop_max: int = setting(30, "DQN's no-op starts; stated for evaluation only, kept in "
                                "training as A3C-era code did (docs/fidelity.md)",
                            checks.Rule(checks.NON_NEGATIVE, 'most no-ops at a reset; 0: none'))
    max_episode_frames: int = setting(108_000, 'not stated; the standard 30-minute cap at 60 Hz '
                                               '(docs/fidelity.md)',
                                      checks.Rule(checks.COUNT,
                                                  'the time limit in emulator frames'))
    reward_clip: float = setting(1.0, 'DQN: rewards clipped to [-1, 1] (IMPALA table G.1)',
                                 checks.CLIP_OR_NONE)
    RELATIONS = (checks.Relation(
        lambda c: 1 <= c.max_pool_frames <= c.action_repeat,
        lambda c: f'--config.max_pool_frames must be in [1, action_repeat={c.action_repeat}], '
                  f'got {c.max_pool_frames}'),)


@typed_config.config
class DmLab(typed_config.Config):
    """DeepMind Lab's frames, actions and instructions (IMPALA tables D.2 and D.3)."""
    width: int = setting(96, 'IMPALA table D.3', _PIXELS, fixed_on_resume=True)
    height: int = setting(72, 'IMPALA table D.3', _PIXELS, fixed_on_resume=True)
    action_repeat: int = setting(4, 'IMPALA table D.3 (the 9 actions of table D.2)',
                                 checks.Rule(checks.COUNT, 'steps of each action'))
    instruction_length: int = setting(16, 'not stated; words kept per instruction, more than '
                                          'the DMLab-30 language levels use', checks.LENGTH)
    instruction_vocabulary: int = setting(1000, 'not stated; scalable_agent hashes words into '
                                                '1000 ids',
                                          checks.Rule(checks.Range(2), 'words beside padding'),
                                          fixed_on_resume=True)
    dataset_path: str = setting('', "psychlab_* levels' images (DeepMind Lab's "
                                    "data/brady_konkle_oliva2008): '' = DeepMind Lab's default")
    renderer: str = setting('software', "DeepMind Lab's renderer", ('software', 'hardware'))
    reward_clip: float = setting(1.0, 'IMPALA table D.3: single tasks clipped to [-1, 1]',
                                 checks.CLIP_OR_NONE)


@typed_config.config
class Control(typed_config.Config):
    """A DeepMind Control Suite task from features (dm_control)."""
    action_repeat: int = setting(1, 'the suite steps each action once',
                                 checks.Rule(checks.COUNT, 'steps of each action'))
    reward_clip: float = setting(0.0, 'not stated; 0 = no clipping (rewards are in [0, 1])',
                                 checks.CLIP_OR_NONE)
