"""Atari 2600 through ale-py as a dm_env.Environment, preprocessed as in IMPALA appendix G.

IMPALA table G.1 (after A3C and DQN): 84x84 grayscale frames, 4 action repetitions, a max-pool
over the last 2 frames of each repetition, 4 stacked frames, end of episode when a life is lost;
no-op starts and 30-minute (108,000-frame) episodes as in DQN (Mnih et al. 2015, table C.1).

One agent step, in this order:
  1. the action is repeated `action_repeat` times on a non-sticky emulator
     (`repeat_action_probability` 0; ale-py's default is 0.25);
  2. the last `max_pool_frames` raw frames are read in grayscale by ALE's `getScreenGrayscale`
     (the palette's luminance, identical to `cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)`) and
     max-pooled pixel-wise at 210x160, which removes the flicker of sprites drawn on alternate
     frames;
  3. the pooled frame is resized to 84x84 by `cv2.resize(..., interpolation=cv2.INTER_AREA)`.
The papers do not give the order or the resize method. This is Dopamine's and Gym's
`AtariPreprocessing`; DQN's Lua code max-pools the RGB frames, takes their luminance, and then
resizes bilinearly; OpenAI baselines max-pools RGB, converts, and resizes with INTER_AREA.

The observation stacks the last `frame_stack` frames on the channel axis, oldest first. A real
reset zero-fills the stack before pushing its first frame, like DQN's replay memory, which
zeroes the frames from before an episode's start; a life-loss episode continues the stack that
the lost life left.

Rewards are the raw game scores summed over the repetition: clipping to [-1, 1] (table G.1)
belongs to the learner, so that logged returns are game scores.

A real game over is a termination (discount 0). With `life_loss_ends_episode` a lost life is
also a termination, but the next `reset()` continues the same game; without it and with
`life_loss_zero_discount` it is a transition of discount 0 inside the episode, which goes on to
the game's end (DeepMind's later pipelines, DQN Zoo's and Acme's `zero_discount_on_life_loss`):
the returns stop at the lost life as before, and a recurrent core's state carries across lives.
The time limit, `max_episode_frames` emulator frames since the real reset (no-ops included;
checked after each agent step, so it may run over by up to `action_repeat - 1` frames), is a
truncation: discount 1, since V-trace must bootstrap through it; the next reset is real. Every
real reset is followed by a uniform number in [1, `noop_max`] of single-frame no-ops, whose
rewards are dropped.
"""
import collections
import functools

import cv2
import dm_env
import numpy as np
from ale_py import Action, ALEInterface, LoggerMode, roms
from dm_env import specs

from environments import names
from environments.names import atari_rom_id

ALEInterface.setLoggerMode(LoggerMode.Error)    # No banner and ROM messages from every actor.


class AtariEnvironment(dm_env.Environment):
    """One Atari game; the defaults are IMPALA's training settings (appendix G, table G.1).

    Evaluation (table C.1, DQN's no-op starts): `life_loss_ends_episode=False`.

    Args:
      game: any paper's spelling of one of the 57 games (`environments.names.atari_rom_id`).
      seed: seeds the no-ops and the emulator; None for a random one.
      action_set: 'minimal', the game's own actions (single-game experts, appendix G), or
        'full', all 18 (the multi-task agent).
      action_repeat, max_pool_frames, screen_size, grayscale, frame_stack: table G.1;
        `grayscale=False` stacks RGB frames into `3 * frame_stack` channels.
      life_loss_ends_episode: table G.1's "end of episode when life lost" (training only).
      life_loss_zero_discount: where a lost life does not end the episode, a discount of 0
        at it inside the episode.
      noop_max: most no-ops after a real reset; 0 for none (LASER appendix C uses 37).
      max_episode_frames: the time limit in emulator frames, 30 minutes at 60 Hz.
      sticky_action_prob: ALE's `repeat_action_probability`; none of the four papers uses it.
    """

    def __init__(self, game, *, seed=None, action_set='minimal', action_repeat=4,
                 max_pool_frames=2, screen_size=84, grayscale=True, frame_stack=4,
                 life_loss_ends_episode=True, life_loss_zero_discount=False, noop_max=30,
                 max_episode_frames=108_000, sticky_action_prob=0.0):
        rom_id = atari_rom_id(game)
        if action_set not in ('minimal', 'full'):
            raise ValueError(f"action_set must be 'minimal' or 'full', got {action_set!r}")
        if not 1 <= max_pool_frames <= action_repeat:
            raise ValueError(f'max_pool_frames must be in [1, action_repeat={action_repeat}], '
                             f'got {max_pool_frames}')
        self._rng = np.random.default_rng(seed)
        self._ale = ALEInterface()
        self._ale.setInt('random_seed', int(self._rng.integers(2**31)))
        self._ale.setFloat('repeat_action_probability', sticky_action_prob)
        self._ale.loadROM(str(roms.get_rom_path(rom_id)))
        # 'full': ALE's 18 joystick actions in their order, for every game (ale-py 0.10's legal
        # set leaves FIRE out of Skiing, 9 actions; the emulator takes all 18 there too).
        self._actions = (self._ale.getMinimalActionSet() if action_set == 'minimal'
                         else [Action(i) for i in range(18)])
        self._action_repeat = action_repeat
        self._life_loss_ends_episode = life_loss_ends_episode
        self._life_loss_zero_discount = life_loss_zero_discount
        self._noop_max = noop_max
        self._max_episode_frames = max_episode_frames

        # Raw frames are [H, W] in grayscale, [H, W, 3] in colour; the pool is preallocated.
        channels = () if grayscale else (3,)
        self._grab = self._ale.getScreenGrayscale if grayscale else self._ale.getScreenRGB
        self._pool = np.zeros((max_pool_frames, *self._ale.getScreenDims(), *channels), np.uint8)
        self._pooled = np.zeros(self._pool.shape[1:], np.uint8)
        self._size = (screen_size, screen_size)
        self._blank = np.zeros((*self._size, *channels), np.uint8)
        self._frames = collections.deque(maxlen=frame_stack)   # Preprocessed, oldest first.
        self._stack_shape = (*self._size, (3 if channels else 1) * frame_stack)
        self._stack = None
        self._lives = 0
        self._game_over = True    # The first reset is a real one.
        self._needs_reset = True

    @property
    def ale(self):
        """The underlying `ale_py.ALEInterface` (read it; acting on it breaks the bookkeeping)."""
        return self._ale

    @property
    def num_actions(self):
        return len(self._actions)

    @property
    def game_over(self):
        """True iff the latest timestep is a LAST that ended the whole game or hit its time limit.

        A life-loss LAST leaves it False: the game goes on after `reset()`. True before the
        first reset.
        """
        return self._game_over

    def reset(self):
        """FIRST timestep: a real reset with no-ops after a game over, else the next life."""
        if self._game_over:
            self._ale.reset_game()
            noops = int(self._rng.integers(1, self._noop_max + 1)) if self._noop_max else 0
            for frame in self._pool:    # The reset screen, in case of fewer no-ops than frames.
                self._grab(frame)
            self._repeat(Action.NOOP, noops)
            self._frames.extend([self._blank] * self._frames.maxlen)
            self._push_frame()
        self._lives = self._ale.lives()
        self._game_over = False
        self._needs_reset = False
        return dm_env.restart(self._stack)

    def step(self, action):
        """One agent step: `action_repeat` emulator frames of `action`, preprocessed."""
        if self._needs_reset:
            return self.reset()
        reward = self._repeat(self._actions[action], self._action_repeat)
        self._push_frame()
        lives, self._lives = self._lives, self._ale.lives()
        ended = self._ale.game_over()
        time_up = self._ale.getEpisodeFrameNumber() >= self._max_episode_frames
        self._game_over = ended or time_up
        lost = self._lives < lives
        if ended or (self._life_loss_ends_episode and lost):
            self._needs_reset = True
            return dm_env.termination(reward, self._stack)
        if time_up:
            self._needs_reset = True
            return dm_env.truncation(reward, self._stack)
        return dm_env.transition(reward, self._stack,
                                 discount=0.0 if self._life_loss_zero_discount and lost else 1.0)

    def _repeat(self, action, frames):
        """Acts `frames` times, reading the last frames into the pool; the summed raw reward.

        A game over mid-repetition stops it, and its final frame alone is the observation.
        """
        reward = 0
        first_pooled = frames - len(self._pool)
        for i in range(frames):
            reward += self._ale.act(action)
            if self._ale.game_over():
                self._grab(self._pool[0])
                self._pool[1:] = self._pool[0]
                break
            if i >= first_pooled:
                self._grab(self._pool[i - first_pooled])
        return np.float32(reward)

    def _push_frame(self):
        """Max-pools and resizes the pool into a new frame; stacks the frames in a new array.

        Frames and stacks are never written after they are made, so observations can be kept.
        `cv2.merge` interleaves channels ten times faster than a numpy slice assignment.
        """
        np.max(self._pool, axis=0, out=self._pooled)
        self._frames.append(cv2.resize(self._pooled, self._size, interpolation=cv2.INTER_AREA))
        self._stack = cv2.merge(list(self._frames)).reshape(self._stack_shape)

    def observation_spec(self):
        return specs.BoundedArray(self._stack_shape, np.uint8, 0, 255, name='pixels')

    def action_spec(self):
        return specs.DiscreteArray(self.num_actions, name='action')

    def reward_spec(self):
        return specs.Array((), np.float32, name='reward')

    def discount_spec(self):
        return specs.BoundedArray((), np.float32, 0.0, 1.0, name='discount')

    def close(self):
        self._ale = None


def from_config(settings, game: str, seed: int, evaluation=None) -> AtariEnvironment:
    """`game`'s training environment as an experiment's Atari section sets it up
    (`settings`: agents/core/environment_config.py's `Atari` or a subclass), or the one an
    evaluation protocol (paper_tables/protocols.py) sets up: full games, its no-ops, cap and
    action set."""
    s = settings
    kept = dict(action_set=s.action_set, action_repeat=s.action_repeat,
                max_pool_frames=s.max_pool_frames, screen_size=s.screen_size,
                frame_stack=s.frame_stack, life_loss_ends_episode=s.life_loss_ends_episode,
                life_loss_zero_discount=s.life_loss_zero_discount, noop_max=s.noop_max,
                max_episode_frames=s.max_episode_frames)
    if evaluation is not None:
        kept.update(action_set=evaluation.action_set, life_loss_ends_episode=False,
                    life_loss_zero_discount=False,
                    noop_max=evaluation.noop_max,
                    max_episode_frames=evaluation.max_episode_frames)
    return AtariEnvironment(game, seed=seed, **kept)


def multi_task_games(settings, tasks: str) -> 'AtariGames':
    """The environment piece of a multi-task agent: every game of `tasks` (comma-separated)."""
    return AtariGames(settings, tasks=tasks)


class AtariGames:
    """The environment piece of an Atari builder (agents/core/builders.py): one game, `game`,
    or every game of `tasks` (a multi-task agent, IMPALA sec. 5.3.2), each environment on the
    game it is given, as the experiment's Atari section (`settings`) sets them up; their
    environments and shapes."""

    suite = 'atari'      # whose references score its games (PBT's fitness: launch/fitness.py)

    def __init__(self, settings, game: str = '', tasks: str = ''):
        if bool(game) == bool(tasks):
            raise ValueError('AtariGames takes one game or a list of tasks')
        self.settings = settings
        self._game = game
        self._tasks = names.task_list(tasks, atari_rom_id) if tasks else ()

    def tasks(self) -> tuple[str, ...]:
        """The games of a multi-task agent; () for one game."""
        return self._tasks

    def reported_task(self, task: str) -> str:
        return task

    def environment(self, seed: int, *, evaluation=None, task=None) -> AtariEnvironment:
        """A training environment (of game `task`, default the first, for a multi-task agent),
        or one set up by an evaluation protocol."""
        game = (task or self._tasks[0]) if self._tasks else self._game
        return from_config(self.settings, game, seed, evaluation)

    @functools.cached_property
    def num_actions(self) -> int:
        env = self.environment(seed=0)
        try:
            return env.num_actions
        finally:
            env.close()

    @property
    def frame_stack(self) -> int:
        return self.settings.frame_stack

    @property
    def max_episode_frames(self) -> int:
        return self.settings.max_episode_frames

    def environment_specs(self) -> tuple[specs.Array, specs.DiscreteArray]:
        """The observation (the stacked frames) and action specs."""
        return (specs.Array(self.observation_shape, np.uint8, 'observation'),
                specs.DiscreteArray(self.num_actions, name='action'))

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        s = self.settings
        return (s.screen_size, s.screen_size, s.frame_stack)
