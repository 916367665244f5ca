"""A stand-in for DeepMind Lab's Python module, for tests only: never installed, never shipped.

DeepMind Lab has no wheel (it is built with Bazel from github.com/deepmind/lab), so the tests
put this directory on `sys.path` (or PYTHONPATH) and import it as `deepmind_lab`. It follows
the real module's API as written in python/dmlab_module.c and docs/users/python_api.md:

  Lab(level, observations, config={}, renderer='software', level_cache=None)
  reset(episode=-1, seed=None) -> True      num_steps() -> frames since reset
  step(action, num_steps=1) -> float        is_running() -> bool
  observations() -> {name: array or str}    observation_spec(), action_spec(), fps(), events()
  close() -> True the first time            version(), runfiles_path(), set_runfiles_path()

with the real module's errors (types, unknown observations, a wrong action shape or dtype,
stepping or observing outside a running episode). Levels are DMLab-30's, named
'contributed/dmlab30/<level>', and the classic seekavoid_arena_01, named by itself as the real
game_scripts/levels/seekavoid_arena_01.lua is; the two `_test` levels refuse to start without
the `allowHoldOutLevels` setting (the real levels' `test_only` decorator). An episode lasts the
level's time limit (seekavoid_arena_01's 20 seconds, 60 for the others) at 60 frames per
second (override: DEEPMIND_LAB_FAKE_EPISODE_FRAMES), after which `is_running()` is False and
`observations()` raises, as in the real module. What the fake
does not reproduce: the 3D worlds themselves. Frames are seeded noise, rewards a fixed rule of
the actions (+1 every 25th frame moving forward, -1 every 50th frame firing), and language
levels give one instruction per episode from a small word list.
"""
import os

import numpy as np

from environments import names

_PREFIX = 'contributed/dmlab30/'
# The contributed/dmlab30 levels: the 30 of environments/names.py and the train variants of
# the two paired ones (the real directory holds both).
_LEVELS = frozenset(names.DMLAB30 + names.DMLAB30_TRAIN)
# Classic levels of game_scripts/levels (loaded without a prefix) and their episode lengths in
# seconds (the level scripts' episodeLengthSeconds); the DMLab-30 levels above last 60 here.
_CLASSIC_LEVELS = {'seekavoid_arena_01': 20}
_ACTIONS = (('LOOK_LEFT_RIGHT_PIXELS_PER_FRAME', -512, 512),
            ('LOOK_DOWN_UP_PIXELS_PER_FRAME', -512, 512), ('STRAFE_LEFT_RIGHT', -1, 1),
            ('MOVE_BACK_FORWARD', -1, 1), ('FIRE', 0, 1), ('JUMP', 0, 1), ('CROUCH', 0, 1))
_WORDS = ('pick', 'the', 'red', 'blue', 'green', 'hat', 'car', 'object', 'in', 'room', 'are',
          'all', 'cars', 'is', 'any', 'get', 'from')
_FPS = 60
_runfiles = '.'


def version():
    return '1.0'


def runfiles_path():
    return _runfiles


def set_runfiles_path(path):
    global _runfiles  # pylint: disable=global-statement
    _runfiles = path
    return True


class Lab:
    """One DMLab-30 or classic level (see the module docstring for what is real and what is
    not)."""

    def __init__(self, level, observations, config=None, renderer='software',
                 level_cache=None):
        del level_cache
        if not isinstance(observations, list):
            raise TypeError(f'must be list, not {type(observations).__name__}')
        config = {} if config is None else config
        if not isinstance(config, dict):
            raise TypeError(f'must be dict, not {type(config).__name__}')
        if any(not isinstance(v, str) for v in config.values()):
            raise TypeError('bad argument type for built-in operation')
        if renderer not in ('software', 'hardware'):
            raise RuntimeError(f'Failed to set renderer must be "hardware" or "software" '
                               f'actual "{renderer}"!')
        name = level.removeprefix(_PREFIX)
        known = name in _LEVELS if level.startswith(_PREFIX) else level in _CLASSIC_LEVELS
        if not known:
            raise RuntimeError(f'Failed to init environment - "Could not find level '
                               f'\'{level}\'"')
        if name.endswith('_test') and config.get('allowHoldOutLevels') != 'true':
            raise RuntimeError('Failed to init environment - "This level must only be used '
                               'during evaluation. For training, use the *_train.lua version '
                               'of the level."')
        self._width = int(config.get('width', '320'))
        self._height = int(config.get('height', '240'))
        self._specs = {spec['name']: spec for spec in self.observation_spec()}
        for observation in observations:
            if observation not in self._specs:
                raise ValueError(f"Unknown observation '{observation}'.")
        self._observations = list(observations)
        self._language = name.startswith('language_')
        self._episode_frames = int(os.environ.get(
            'DEEPMIND_LAB_FAKE_EPISODE_FRAMES', _CLASSIC_LEVELS.get(level, 60) * _FPS))
        self._running = False
        self._closed = False
        self._episode = 0
        self._frames = 0
        self._rng = np.random.default_rng(0)
        self._instruction = ''

    def reset(self, episode=-1, seed=None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"'seed' must be int or None, was '{type(seed).__name__}'.")
        if self._closed:
            raise RuntimeError('Failed to start environment - "closed"')
        if episode >= 0:
            self._episode = episode
        self._rng = np.random.default_rng(
            None if seed is None else [int(seed) % 2**32, self._episode])
        self._episode += 1
        self._frames = 0
        self._running = True
        words = self._rng.choice(_WORDS, size=int(self._rng.integers(3, 8)))
        self._instruction = ' '.join(words) if self._language else ''
        return True

    def num_steps(self):
        return self._frames

    def is_running(self):
        return self._running and not self._closed

    def step(self, action, num_steps=1):
        if not isinstance(action, np.ndarray):
            raise TypeError(f'argument 1 must be numpy.ndarray, not {type(action).__name__}')
        if not self.is_running():
            raise RuntimeError('Environment in wrong status to advance.')
        if action.ndim != 1 or action.shape[0] != len(_ACTIONS):
            raise ValueError(f'action must have shape ({len(_ACTIONS)})')
        if action.dtype != np.intc:
            raise ValueError('action must have dtype np.intc')
        reward = 0.0
        for _ in range(num_steps):
            self._frames += 1
            if action[3] == 1 and self._frames % 25 == 0:
                reward += 1.0
            if action[4] == 1 and self._frames % 50 == 0:
                reward -= 1.0
            if self._frames >= self._episode_frames:
                self._running = False
                break
        return reward

    def observation_spec(self):
        h, w = self._height, self._width
        return [{'name': 'RGB_INTERLEAVED', 'shape': (h, w, 3), 'dtype': np.uint8},
                {'name': 'RGBD_INTERLEAVED', 'shape': (h, w, 4), 'dtype': np.uint8},
                {'name': 'RGB', 'shape': (3, h, w), 'dtype': np.uint8},
                {'name': 'RGBD', 'shape': (4, h, w), 'dtype': np.uint8},
                {'name': 'INSTR', 'shape': (), 'dtype': str}]

    def observations(self):
        if not self.is_running():
            raise RuntimeError('Environment in wrong status for call to observations()')
        result = {}
        for name in self._observations:
            spec = self._specs[name]
            if spec['dtype'] is str:
                result[name] = self._instruction
            else:
                result[name] = self._rng.integers(0, 256, spec['shape'], np.uint8)
        return result

    def action_spec(self):
        return [{'min': low, 'max': high, 'name': name} for name, low, high in _ACTIONS]

    def fps(self):
        return _FPS

    def events(self):
        return []

    def close(self):
        if self._closed:
            return False
        self._closed = True
        return True
