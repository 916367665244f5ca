"""Real Atari steps as an actor writes them (agents/core/actor.py), for replay benchmarks and
tests: random actions, the policy's extras and core state from the caller."""
from typing import Any, Callable, Mapping

import numpy as np

from agents.core import steps


def record(builder, min_steps: int, extras: Callable[[], Mapping[str, Any]],
           core_state: Callable[[], Any] | None = None, seed: int = 0) -> list[dict]:
    """Steps of whole episodes of `builder`'s game (at least `min_steps`), bootstrap steps of
    time-limited ones included. `extras()` gives the policy's extras of a step, batched over
    one environment; `core_state()` the core state held before it (None: feed-forward steps)."""
    rng = np.random.default_rng(seed)
    env = builder.environments.environment(seed=seed)
    action_spec = builder.step_spec()['action']
    recorded = []
    inputs = steps.StepInputs([env.reset()], action_spec)
    state = core_state() if core_state else None
    while True:
        action = action_spec.dtype.as_numpy_dtype(rng.integers(builder.environments.num_actions))
        timestep = env.step(action)
        recorded.append(steps.written_step(inputs.batch(), 0, action, timestep, extras(), state))
        state = core_state() if core_state else None
        if timestep.last():
            if timestep.discount > 0:
                recorded.append(steps.bootstrap_step(timestep.observation, recorded[-1], state))
            if len(recorded) >= min_steps:
                return recorded
            timestep = env.reset()
        inputs.advance(0, action, timestep)
