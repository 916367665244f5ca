"""The actor loop shared by every agent: K environments, one batched policy call per step.

Each step the actor stacks the K observations, asks the policy for K actions (one forward pass,
IMPALA sec. 3's batched inference), steps every environment, and hands each transition to that
environment's adder. Whole-game raw scores go to the episode-stats table for the learner's log.
"""
import dataclasses
import time
from typing import Any, Mapping, Protocol, Sequence

import dm_env
import numpy as np
import reverb
import tensorflow as tf
import tree

from agents.core import cpu_account
from agents.core import episode_log
from agents.core import logging as run_logging
from agents.core import steps
from reverb_tables import tables


class BatchedPolicy(Protocol):
    """What an agent's acting module provides to the shared actor and to evaluation.

    Feed-forward policies return an empty state and pass it through; recurrent ones reset
    environment k's state where `inputs.first[k]` before acting (steps.py).
    """

    variables: Sequence[tf.Variable]

    def initial_state(self, num_envs: int) -> Any:
        """The core state of `num_envs` environments before their first step (() if none)."""

    def select_actions(self, inputs: steps.PolicyInputs, state: Any
                       ) -> tuple[np.ndarray, Mapping[str, np.ndarray], Any]:
        """Actions [K], per-step extras [K, ...] to store (e.g. behaviour logits) and the next
        state, all numpy."""


class Adder(Protocol):
    def add(self, step: Mapping[str, np.ndarray]) -> None: ...


class ParameterSource(Protocol):
    learner_step: int

    def update(self) -> None:
        """Copies the newest learner parameters into the policy."""


@dataclasses.dataclass(kw_only=True)
class Actor:
    """Steps `envs` with `policy` and writes steps through `adders` (one per environment).

    Written steps follow agents/core/steps.py. When an episode is cut by a time limit (LAST
    with discount > 0) the final observation is written as one more step with mask 0, so the
    learner bootstraps from V(final observation) instead of treating the cut as a terminal
    state (docs/fidelity.md, "time limits"). A recurrent policy's state goes into every step;
    sequence adders keep it at each sequence's first step.

    Each batched step steps every environment first and then writes every environment's step:
    each kind of work done in one stretch costs less CPU than the two alternated game by game
    (benchmarks/README.md, "Steps written after all games stepped"); every adder gets the same
    steps in the same order either way.
    """

    envs: Sequence[dm_env.Environment]
    policy: BatchedPolicy                # its variables are the pulled parameters
    adders: Sequence[Adder]
    parameters: ParameterSource
    action_spec: tf.TensorSpec
    update_period: int                   # steps between parameter pulls
    client: reverb.Client
    actor_id: int
    frames_per_step: int
    episode_stats_table: str = tables.EPISODE_STATS
    log_path: str | None = None
    log_interval_s: float = 30.0
    _log: run_logging.CsvLogger | None = dataclasses.field(init=False, repr=False)
    _account: cpu_account.CpuAccount = dataclasses.field(init=False, repr=False)

    def __post_init__(self):
        if len(self.envs) != len(self.adders):
            raise ValueError('need one adder per environment')
        self._log = run_logging.CsvLogger(self.log_path) if self.log_path else None
        self._account = cpu_account.account(f'actor_{self.actor_id}')

    def run(self, num_steps: int | None = None) -> None:
        """Runs `num_steps` batched steps (forever if None)."""
        inputs = steps.StepInputs([env.reset() for env in self.envs], self.action_spec)
        state = self.policy.initial_state(len(self.envs))
        recurrent = bool(tree.flatten(state))
        returns = np.zeros(len(self.envs), np.float64)
        lengths = np.zeros(len(self.envs), np.int64)
        count = 0
        log_time, log_count = time.monotonic(), 0
        lap = self._account.lap     # CPU by part, with DISTRL_CPU_ACCOUNT set (cpu_account.py)
        while num_steps is None or count < num_steps:
            if count % self.update_period == 0:
                self.parameters.update()
                lap('parameters')
            batch = inputs.batch()
            actions, extras, next_state = self.policy.select_actions(batch, state)
            lap('inference')
            timesteps = [env.step(action) for env, action in zip(self.envs, actions)]
            lap('emulator')
            for k, (env, ts) in enumerate(zip(self.envs, timesteps)):
                step = steps.written_step(
                    batch, k, actions[k], ts, extras,
                    tree.map_structure(lambda s: s[k], state) if recurrent else None)
                self.adders[k].add(step)
                lap('adder')
                returns[k] += ts.reward
                lengths[k] += self.frames_per_step
                if ts.last():
                    if ts.discount > 0:
                        self.adders[k].add(steps.bootstrap_step(
                            ts.observation, step,
                            tree.map_structure(lambda s: s[k], next_state) if recurrent
                            else None))
                    lap('adder')
                    if getattr(env, 'game_over', True):
                        episode_log.report_game(self.client, self.episode_stats_table,
                                                self.actor_id, k, returns[k], lengths[k])
                        returns[k], lengths[k] = 0.0, 0
                    lap('other')
                    ts = env.reset()
                    lap('emulator')
                inputs.advance(k, actions[k], ts)
                lap('other')
            state = next_state
            count += 1
            if self._log and time.monotonic() - log_time >= self.log_interval_s:
                now = time.monotonic()
                frames = (count - log_count) * len(self.envs) * self.frames_per_step
                self._log.write({'actor': self.actor_id, 'steps': count,
                                 'frames_per_second': frames / (now - log_time),
                                 'learner_step': self.parameters.learner_step})
                log_time, log_count = now, count
            lap('other')
            self._account.write(frames=count * len(self.envs) * self.frames_per_step)
