"""DeepMind Control Suite tasks from state features (Ape-X sec. 4.2: manipulator bring_ball,
humanoid stand/walk/run), and any other suite task by name.

Observations are the task's feature arrays flattened and concatenated, in the suite's order, as
float32. Suite episodes end only at the task's time limit (1,000 control steps), with discount 1:
a truncation, which the shared actor bootstraps through. No action repeat (sec. 4.2).
"""
import functools
import os

# Features only, no pixels: no OpenGL backend (and no warning about a missing display).
os.environ.setdefault('MUJOCO_GL', 'disable')

# pylint: disable=wrong-import-position
from absl import logging
import dm_env
import numpy as np
from dm_env import specs

# MuJoCo's import logs INFO lines (its OpenGL backend, its version), which would precede a
# program's one-line error when a config check brings this module in after flag parsing.
_verbosity = logging.get_verbosity()
logging.set_verbosity(logging.WARNING)
from dm_control import suite
logging.set_verbosity(_verbosity)

# Ape-X fig. 3's four tasks.
PAPER_TASKS = ('manipulator_bring_ball', 'humanoid_stand', 'humanoid_walk', 'humanoid_run')


def parse_task(name: str) -> tuple[str, str]:
    """'humanoid_walk', 'humanoid/walk' or 'ball_in_cup-catch' -> ('humanoid', 'walk')."""
    key = name.strip().lower().replace('/', '_').replace('-', '_')
    for domain, task in suite.ALL_TASKS:
        if f'{domain}_{task}'.lower() == key:
            return domain, task
    raise ValueError(f'unknown dm_control task {name!r}; the suite has: '
                     f'{", ".join(f"{d}_{t}" for d, t in suite.ALL_TASKS)}')


class ControlEnvironment(dm_env.Environment):
    """One suite task with a flat float32 feature observation."""

    def __init__(self, task: str, seed: int | None = None):
        domain, task_name = parse_task(task)
        self._env = suite.load(domain, task_name, task_kwargs={'random': seed})
        self._size = sum(int(np.prod(spec.shape))
                         for spec in self._env.observation_spec().values())

    def _flatten(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
        observation = np.concatenate([np.asarray(x, np.float32).reshape(-1)
                                      for x in timestep.observation.values()])
        return timestep._replace(observation=observation)

    def reset(self) -> dm_env.TimeStep:
        return self._flatten(self._env.reset())

    def step(self, action) -> dm_env.TimeStep:
        return self._flatten(self._env.step(action))

    def observation_spec(self):
        return specs.Array((self._size,), np.float32, 'observation')

    def action_spec(self):
        return self._env.action_spec()

    def close(self):
        self._env.close()


class ControlTask:
    """The environment piece of a control builder (agents/core/builders.py): the one suite
    task `task`, its environments and specs. The task's environment reads nothing of the
    Control section (`settings`), kept as every piece keeps its own."""

    suite = None         # no reference scores: no PBT fitness (launch/fitness.py)
    frame_stack = 1      # features, not frames
    max_episode_frames = 0   # the task's own time limit ends its episodes

    def __init__(self, settings, task: str):
        self.settings = settings
        self._task = task

    def tasks(self) -> tuple[str, ...]:
        return ()

    def reported_task(self, task: str) -> str:
        return task

    def environment(self, seed: int, *, evaluation=None, task=None) -> ControlEnvironment:
        del evaluation, task   # the task's own episodes (apex_control_noiseless)
        return ControlEnvironment(self._task, seed=seed)

    def environment_specs(self) -> tuple[specs.Array, specs.BoundedArray]:
        """The observation and action specs."""
        return self._specs

    @functools.cached_property
    def _specs(self) -> tuple[specs.Array, specs.BoundedArray]:
        env = self.environment(seed=0)
        try:
            return env.observation_spec(), env.action_spec()
        finally:
            env.close()
