"""Reactor's acting: the policy head's probabilities, sampled (sec. 3.4), and the adder that
numbers every sequence of an actor environment for the lazy priorities (sec. 3.3)."""
import secrets
from typing import Any, Mapping

import numpy as np
import sonnet as snt
import tensorflow as tf

from agents.core import adders
from agents.core import packing as packing_lib
from agents.core import steps
from agents.reactor import lazy_priorities


class ReactorPolicy:
    """Samples a ~ pi(.|x) (the policy head, mixed with a uniform of weight 0.01 inside the
    network, app. 6.4) for K environments at once, carrying both LSTM states; stores mu(a|x)
    with the action (sec. 3.2, footnote 1). Evaluation acts with the same policy."""

    def __init__(self, network: snt.Module):
        self._network = network
        self._step = tf.function(self._sample, autograph=False)

    @property
    def variables(self):
        return self._network.trainable_variables

    def initial_state(self, num_envs: int):
        return tf.nest.map_structure(lambda s: s.numpy(), self._network.initial_state(num_envs))

    def _sample(self, observation, first, state):
        outputs, next_state = self._network.unroll(observation[None], first[None], state)
        probs = outputs.policy[0]
        actions = tf.random.categorical(tf.math.log(probs), 1, dtype=tf.int32)[:, 0]
        return actions, tf.gather(probs, actions, batch_dims=1), next_state

    def select_actions(self, inputs: steps.PolicyInputs, state):
        actions, behaviour_probs, next_state = self._step(inputs.observation, inputs.first,
                                                          state)
        return (actions.numpy(), {'behaviour_prob': behaviour_probs.numpy()},
                tf.nest.map_structure(lambda s: s.numpy(), next_state))


class StreamAdder:
    """A `SequenceAdder` whose steps also carry their stream (a random id per environment and
    adder, so an actor's restart starts a new stream) and position in it, the fields lazy
    priorities order sequences by (agents/reactor/lazy_priorities.py); every field but the
    observation goes packed into one column (`packing`)."""

    def __init__(self, sequences: adders.SequenceAdder, packing: packing_lib.StepPacking):
        self._sequences = sequences
        self._packing = packing
        self._stream = np.int64(secrets.randbits(62))
        self._position = 0

    def add(self, step: Mapping[str, Any]) -> None:
        self._sequences.add(self._packing.pack({
            **step, lazy_priorities.STREAM: self._stream,
            lazy_priorities.POSITION: np.int64(self._position)}))
        self._position += 1

    def close(self) -> None:
        self._sequences.close()
