"""DeepMind Lab through its Python module `deepmind_lab` as a dm_env.Environment, set up as
IMPALA's DeepMind Lab experiments (DMLab-30, sec. 5.3.1, and single levels, sec. 5.2;
appendices B and D; the authors' scalable_agent).

Observations (table D.3): the RGB_INTERLEAVED frame at 96x72, [72, 96, 3] uint8, and the
level's language channel INSTR (sec. 5: "for tasks with a language channel we used an LSTM with
text embeddings as input"), given to the agent as word ids: the instruction is split at white
space, each word hashed into ids 1..`vocabulary_size - 1` (0 pads), and cut or padded to
`instruction_length` words. Levels without language give an empty instruction (all 0), so every
level has the same observation: {'pixels': frame, 'instruction': ids}.

Actions: the 9 of table D.2, each repeated for 4 frames (table D.3) by one
`Lab.step(action, num_steps=4)`. Rewards are the level's raw rewards summed over the repeat;
clipping (figure D.1's optimistic asymmetric clipping for DMLab-30, [-1, 1] for single tasks:
table D.3) belongs to the learner's loss.

Levels are DMLab-30's by any paper spelling (`environments.names`), loaded as
'contributed/dmlab30/<level>', and the classic levels of IMPALA's single-task experiments
(sec. 5.2: seekavoid_arena_01), loaded by their bare names (`level_path`). Training uses the
`_train` variant of the two train/test pairs; evaluation (`evaluation=True`) the `_test`
variant with the settings scalable_agent evaluates with: `allowHoldOutLevels` and the
evaluation `mixerSeed` 0x600D5EED.

Episodes end at the level's own time limit (or its own end). The module offers no observation
after the end (`observations()` raises once `is_running()` is False), so the end is a
termination (discount 0), as in scalable_agent; the LAST timestep repeats the last observation.
"""
import hashlib

import dm_env
import numpy as np
from dm_env import specs

from environments import names

LEVEL_PREFIX = 'contributed/dmlab30/'


def level_path(level: str) -> str:
    """The name `deepmind_lab.Lab` loads `level` (DeepMind Lab's name) by: DMLab-30's levels
    live in game_scripts/levels/contributed/dmlab30, the classic ones in game_scripts/levels."""
    return level if level in names.DMLAB_CLASSIC else LEVEL_PREFIX + level

# Table D.2: the action set of every DeepMind Lab experiment, in DeepMind Lab's native
# [look left/right, look down/up, strafe left/right, move back/forward, fire, jump, crouch].
ACTION_SET = (
    (0, 0, 0, 1, 0, 0, 0),      # Forward
    (0, 0, 0, -1, 0, 0, 0),     # Backward
    (0, 0, -1, 0, 0, 0, 0),     # Strafe Left
    (0, 0, 1, 0, 0, 0, 0),      # Strafe Right
    (-20, 0, 0, 0, 0, 0, 0),    # Look Left
    (20, 0, 0, 0, 0, 0, 0),     # Look Right
    (-20, 0, 0, 1, 0, 0, 0),    # Forward + Look Left
    (20, 0, 0, 1, 0, 0, 0),     # Forward + Look Right
    (0, 0, 0, 0, 1, 0, 0),      # Fire
)
_NATIVE_ACTIONS = [np.array(action, dtype=np.intc) for action in ACTION_SET]

# scalable_agent's evaluation mixer seed (its experiment.py, after DeepMind Lab's python_api.md).
EVALUATION_MIXER_SEED = 0x600D5EED

BUILD_HINT = (
    'DeepMind Lab is not installed (the Python module deepmind_lab has no wheel); build it '
    'from https://github.com/deepmind/lab: `bazel build -c opt '
    'python/pip_package:build_pip_package && ./bazel-bin/python/pip_package/build_pip_package '
    '/tmp/dmlab_pkg && pip install /tmp/dmlab_pkg/deepmind_lab-*.whl` (docs/users/build.md '
    'there lists the system packages Bazel needs)')


class DeepMindLabMissing(RuntimeError):
    """`deepmind_lab` cannot be imported; the message says how to build it, in one line."""


def import_deepmind_lab():
    """The `deepmind_lab` module; DeepMindLabMissing (one line: how to build it) if absent."""
    try:
        import deepmind_lab  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise DeepMindLabMissing(BUILD_HINT) from None
    return deepmind_lab


def word_id(word: str, vocabulary_size: int) -> int:
    """A word's id in 1..vocabulary_size - 1 by a stable hash (0 is padding). scalable_agent
    hashes words into 1000 buckets with TF's FarmHash; any stable hash serves."""
    digest = hashlib.blake2b(word.encode('utf-8'), digest_size=8).digest()
    return 1 + int.from_bytes(digest, 'little') % (vocabulary_size - 1)


def encode_instruction(text: str, length: int, vocabulary_size: int) -> np.ndarray:
    """[length] int32 word ids of `text`, its first `length` words, padded with 0."""
    ids = np.zeros(length, np.int32)
    words = text.split()[:length]
    ids[:len(words)] = [word_id(word, vocabulary_size) for word in words]
    return ids


class DmLabEnvironment(dm_env.Environment):
    """One DeepMind Lab level; the defaults are IMPALA's (tables D.2 and D.3).

    Args:
      level: a DMLab-30 level or a classic one (`names.DMLAB_CLASSIC`) in any paper spelling;
        trained on in its `_train` variant, or evaluated in its `_test` variant with
        `evaluation=True` (a level without variants is its own).
      seed: seeds each episode's `Lab.reset(seed=...)`; None for a random one.
      action_repeat, width, height: table D.3.
      instruction_length, vocabulary_size: the word ids of the language channel.
      evaluation: the held-out test variant and scalable_agent's evaluation settings.
      dataset_path: the image data set psychlab_* levels read (DeepMind Lab's
        data/brady_konkle_oliva2008); '' for DeepMind Lab's default.
      renderer: 'software' or 'hardware' (DeepMind Lab's `renderer`).
    """

    def __init__(self, level, *, seed=None, action_repeat=4, width=96, height=72,
                 instruction_length=16, vocabulary_size=1000, evaluation=False,
                 dataset_path='', renderer='software'):
        deepmind_lab = import_deepmind_lab()
        self.level = (names.dmlab_test_level(level, classic=True) if evaluation
                      else names.dmlab_train_level(level, classic=True))
        config = {'width': str(width), 'height': str(height), 'logLevel': 'WARN'}
        if dataset_path:
            config['datasetPath'] = dataset_path
        if evaluation:
            config.update(allowHoldOutLevels='true', mixerSeed=str(EVALUATION_MIXER_SEED))
        self._lab = deepmind_lab.Lab(level_path(self.level), ['RGB_INTERLEAVED', 'INSTR'],
                                     config=config, renderer=renderer)
        self._rng = np.random.default_rng(seed)
        self._action_repeat = action_repeat
        self._shape = (height, width, 3)
        self._instruction_length = instruction_length
        self._vocabulary_size = vocabulary_size
        self._observation = None
        self._needs_reset = True

    @property
    def num_actions(self):
        return len(ACTION_SET)

    @property
    def lab(self):
        """The `deepmind_lab.Lab` this environment steps (its level path and config as made)."""
        return self._lab

    def reset(self):
        """FIRST timestep of a new episode, seeded from this environment's generator."""
        self._lab.reset(seed=int(self._rng.integers(2**31 - 1)))
        self._needs_reset = False
        return dm_env.restart(self._observe())

    def step(self, action):
        """One agent step: table D.2's action `action` for `action_repeat` frames."""
        if self._needs_reset:
            return self.reset()
        reward = np.float32(self._lab.step(_NATIVE_ACTIONS[action],
                                           num_steps=self._action_repeat))
        if not self._lab.is_running():
            self._needs_reset = True
            return dm_env.termination(reward, self._observation)
        return dm_env.transition(reward, self._observe())

    def _observe(self):
        observations = self._lab.observations()
        self._observation = {
            'pixels': observations['RGB_INTERLEAVED'],
            'instruction': encode_instruction(observations['INSTR'], self._instruction_length,
                                              self._vocabulary_size)}
        return self._observation

    def observation_spec(self):
        return {'pixels': specs.BoundedArray(self._shape, np.uint8, 0, 255, name='pixels'),
                'instruction': specs.BoundedArray(
                    (self._instruction_length,), np.int32, 0, self._vocabulary_size - 1,
                    name='instruction')}

    def action_spec(self):
        return specs.DiscreteArray(self.num_actions, name='action')

    def close(self):
        self._lab.close()


def from_config(settings, level: str, seed: int, evaluation=None) -> DmLabEnvironment:
    """Level `level` as an experiment's DeepMind Lab section sets it up (`settings`:
    agents/core/environment_config.py's `DmLab`); its test variant under an evaluation
    protocol (paper_tables/protocols.py)."""
    s = settings
    return DmLabEnvironment(
        level, seed=seed, action_repeat=s.action_repeat, width=s.width, height=s.height,
        instruction_length=s.instruction_length, vocabulary_size=s.instruction_vocabulary,
        evaluation=evaluation is not None, dataset_path=s.dataset_path, renderer=s.renderer)


class DmLabLevels:
    """The environment piece of a DMLab builder (agents/core/builders.py): its levels (the
    config's `tasks`: DMLab-30's of the multi-task agent, IMPALA sec. 5.3.1, or the one level of
    a single-task agent, sec. 5.2), their environments and shapes. The experiments' checks say
    which levels each accepts."""

    suite = 'dmlab30'    # whose references score its levels (PBT's fitness: launch/fitness.py)
    frame_stack = 1      # one frame per observation: no stacking on DMLab
    max_episode_frames = 0   # a level's own time limit ends its episodes

    def __init__(self, settings, tasks: str):
        self.settings = settings
        self._tasks = names.task_list(tasks, names.dmlab_classic_train_level)

    def tasks(self) -> tuple[str, ...]:
        """The levels trained on, by DeepMind Lab's names of their training variants."""
        return self._tasks

    def environment(self, seed: int, *, evaluation=None, task=None) -> DmLabEnvironment:
        """Level `task` (default: the first) for training, or under an evaluation protocol."""
        return from_config(self.settings, task or self._tasks[0], seed, evaluation)

    def reported_task(self, task: str) -> str:
        """The name a level's evaluation is reported under: its test variant (table B.1)."""
        return names.dmlab_test_level(task, classic=True)

    @property
    def num_actions(self) -> int:
        return len(ACTION_SET)

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        return (self.settings.height, self.settings.width, 3)

    def environment_specs(self) -> tuple[dict, specs.DiscreteArray]:
        """The observation (the frame and the instruction's word ids, padded to
        `instruction_length`, bounded by the vocabulary: 0 is padding) and action specs."""
        s = self.settings
        return ({'pixels': specs.Array(self.observation_shape, np.uint8, 'pixels'),
                 'instruction': specs.BoundedArray((s.instruction_length,), np.int32, 0,
                                                   s.instruction_vocabulary - 1,
                                                   'instruction')},
                specs.DiscreteArray(self.num_actions, name='action'))
