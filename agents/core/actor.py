"""The actor loop shared by every agent: K environments, one batched policy call per step.

Each step the actor stacks the K observations, asks the policy for K actions (one forward pass,
IMPALA sec. 3's batched inference), steps every environment, and hands each transition to that
environment's adder. Whole-game raw scores go to the episode-stats table for the learner's log.
"""
import time
from typing import Mapping, Protocol, Sequence

import dm_env
import numpy as np
import reverb
import tensorflow as tf

from agents.core import logging as run_logging
from reverb_tables import tables


class BatchedPolicy(Protocol):
    """What an agent's acting module provides to the shared actor."""

    variables: Sequence[tf.Variable]

    def select_actions(self, observations: np.ndarray
                       ) -> tuple[np.ndarray, Mapping[str, np.ndarray]]:
        """Actions [K] and per-step extras (e.g. behaviour logits) [K, ...] to store."""


class Adder(Protocol):
    def add(self, step: Mapping[str, np.ndarray]) -> None: ...


class ParameterSource(Protocol):
    learner_step: int

    def update(self) -> None:
        """Copies the newest learner parameters into the policy."""


class Actor:
    """Steps `envs` with `policy` and writes steps through `adders` (one per environment).

    Written steps hold: observation o_t, action a_t, the policy's extras at o_t, and the reward
    and discount that followed a_t; `mask` is 1 for real steps. When an episode is cut by a time
    limit (LAST with discount > 0) the final observation is written as one more step with mask 0,
    so the learner bootstraps from V(final observation) instead of treating the cut as a
    terminal state (docs/fidelity.md, "time limits").
    """

    def __init__(self, *, envs: Sequence[dm_env.Environment], policy: BatchedPolicy,
                 adders: Sequence[Adder], parameters: ParameterSource,
                 update_period: int, client: reverb.Client, actor_id: int,
                 frames_per_step: int, log_path: str | None = None,
                 log_interval_s: float = 30.0):
        if len(envs) != len(adders):
            raise ValueError('need one adder per environment')
        self._envs = list(envs)
        self._policy = policy
        self._adders = list(adders)
        self._parameters = parameters
        self._update_period = update_period
        self._client = client
        self._actor_id = actor_id
        self._frames_per_step = frames_per_step
        self._log = run_logging.CsvLogger(log_path) if log_path else None
        self._log_interval = log_interval_s

    def run(self, num_steps: int | None = None) -> None:
        """Runs `num_steps` batched steps (forever if None)."""
        timesteps = [env.reset() for env in self._envs]
        returns = np.zeros(len(self._envs), np.float64)
        lengths = np.zeros(len(self._envs), np.int64)
        steps = 0
        log_time, log_steps = time.monotonic(), 0
        while num_steps is None or steps < num_steps:
            if steps % self._update_period == 0:
                self._parameters.update()
            observations = np.stack([ts.observation for ts in timesteps])
            actions, extras = self._policy.select_actions(observations)
            for k, env in enumerate(self._envs):
                ts = env.step(actions[k])
                step = {'observation': observations[k], 'action': actions[k],
                        'reward': np.float32(ts.reward), 'discount': np.float32(ts.discount),
                        'mask': np.float32(1.0)}
                step.update({name: value[k] for name, value in extras.items()})
                self._adders[k].add(step)
                returns[k] += ts.reward
                lengths[k] += self._frames_per_step
                if ts.last():
                    if ts.discount > 0:
                        self._adders[k].add(_bootstrap_step(ts.observation, step))
                    if getattr(env, 'game_over', True):
                        self._report_game(k, returns[k], lengths[k])
                        returns[k], lengths[k] = 0.0, 0
                    ts = env.reset()
                timesteps[k] = ts
            steps += 1
            if self._log and time.monotonic() - log_time >= self._log_interval:
                now = time.monotonic()
                frames = (steps - log_steps) * len(self._envs) * self._frames_per_step
                self._log.write({'actor': self._actor_id, 'steps': steps,
                                 'frames_per_second': frames / (now - log_time),
                                 'learner_step': self._parameters.learner_step})
                log_time, log_steps = now, steps

    def _report_game(self, env: int, episode_return: float, episode_frames: int) -> None:
        self._client.insert(
            {'actor': np.int32(self._actor_id), 'env': np.int32(env),
             'episode_return': np.float32(episode_return),
             'episode_frames': np.int64(episode_frames)},
            priorities={tables.EPISODE_STATS: 1.0})


def _bootstrap_step(final_observation: np.ndarray, like: Mapping[str, np.ndarray]) -> dict:
    """A mask-0 step holding the last observation of a time-limited episode."""
    step = {name: np.zeros_like(value) for name, value in like.items()}
    step['observation'] = final_observation
    return step
