"""The learning state every agent's learner trains and checkpoints.

`LearningState` holds the network, the `step` and `frames` counters and the compiled `update`;
an agent subclasses it with its optimizers and `_update(batch) -> metrics`, and applies its
gradients through `apply_if_finite`, the one rule for a bad step: an update whose loss or
gradients are not finite is not applied and `step` does not advance (the learner counts and
logs it, agents/core/learner.py). `TargetNetworkLearning` adds a target network copied every
`target_update_period` applied updates (Ape-X, Reactor).

Frames are the environment frames the actors generated, each counted once, as they reach the
learner (docs/architecture.md, "Frames"): a queue-fed agent adds the online steps of each batch
(`count_online_frames`, inside its update), a replay-fed one the steps inserted into its replay
(agents/core/replay_feedback.py), since it learns from each many times.
"""
import types
from typing import Any, Callable, Mapping

import sonnet as snt
import tensorflow as tf

from agents.core import datasets
from agents.core import optimizers
from agents.core import variables


class LearningState(tf.Module):
    """`network`, `step`, `frames` and the compiled `update(batch) -> metrics`; everything in
    it is checkpointed. `hyperparameters` are the ones it holds as variables, which
    population-based training adapts (none here)."""

    hyperparameters: Mapping[str, tf.Variable] = types.MappingProxyType({})

    def __init__(self, network: snt.Module, *, jit_compile: bool, name: str):
        super().__init__(name=name)
        self.network = network
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name='step')
        self.frames = tf.Variable(0, dtype=tf.int64, trainable=False, name='frames')
        # Traced without AutoGraph: the update's branches on tensors are `tf.cond`s, and
        # AutoGraph's conversion of every function an update calls was about half the CPU of a
        # learner's start (a restart, each member of a sweep).
        self.update = tf.function(self._update, jit_compile=jit_compile, autograph=False)

    def _update(self, batch: Any) -> Mapping[str, tf.Tensor]:
        """One step on `batch`; the metrics include `nonfinite` (from `apply_if_finite`)."""
        raise NotImplementedError

    def apply_if_finite(self, checked, apply: Callable[[], None]) -> tf.Tensor:
        """Runs `apply` and advances `step` only if every tensor of `checked` (the losses and
        gradients) is finite; returns the `nonfinite` metric (1.0: skipped)."""
        def applied():
            apply()
            self.step.assign_add(1)
            self._after_step()
            return tf.constant(0.0)
        # A non-finite update is skipped, never applied (the learner counts it).
        return tf.cond(optimizers.all_finite(checked), applied, lambda: tf.constant(1.0))

    def _after_step(self) -> None:
        """What follows each applied update (a target network's copy); here nothing."""

    def after_copy(self) -> None:
        """What follows population-based training's copy of another learner's checkpoint into
        this state (agents/core/pbt_hook.py): what the state keeps outside its checkpoint and
        computed with the replaced weights starts again (LASER's replayed rows); here nothing."""


class TargetNetworkLearning(LearningState):
    """A `LearningState` with `target_network`, a copy of `network` made at the start and
    after every `target_update_period` applied updates."""

    def __init__(self, network: snt.Module, target_network: snt.Module, *,
                 target_update_period: int, jit_compile: bool, name: str):
        super().__init__(network, jit_compile=jit_compile, name=name)
        self.target_network = target_network
        self._target_update_period = target_update_period
        variables.copy_variables(network, target_network)

    def _after_step(self) -> None:
        def copy():
            variables.copy_variables(self.network, self.target_network)
            return tf.constant(True)
        tf.cond(self.step % self._target_update_period == 0, copy, lambda: tf.constant(False))


def count_online_frames(frames: tf.Variable, data: Mapping[str, tf.Tensor],
                        action_repeat: int) -> None:
    """Adds to `frames` the real (mask 1) online steps of time-major unrolls of T+1 steps
    (step T only bootstraps; replayed unrolls were counted when new), times `action_repeat`."""
    real_steps = tf.reduce_sum(data['mask'][:-1] * datasets.online(data)[None])
    frames.assign_add(tf.cast(real_steps, tf.int64) * action_repeat)
