"""Parameter broadcast through a size-1 Reverb table (docs/architecture.md, "Data flow").

The learner inserts its newest parameters; each insert evicts the previous one. Actors sample the
table whenever they want fresh parameters (IMPALA: before each unroll, sec. 3).
"""
from typing import Sequence

import numpy as np
import reverb
import tensorflow as tf
from absl import logging

from reverb_tables import tables


class VariablePusher:
    """Learner side: publishes `variables` with the learner step that produced them."""

    def __init__(self, client: reverb.Client, variables: Sequence[tf.Variable],
                 table: str = tables.VARIABLES):
        self._client = client
        self._variables = list(variables)
        self._table = table

    def push(self, step: int) -> None:
        """Publishes; an insert cut by the replay server's death is skipped (the next push, once
        it is back, publishes newer parameters)."""
        values = [np.int64(step)] + [v.numpy() for v in self._variables]
        try:
            self._client.insert(values, priorities={self._table: 1.0})
        except RuntimeError as e:
            logging.warning('parameters of step %d not published: %s', step, e)


class VariableClient:
    """Actor side: copies the newest published parameters into `variables`.

    Blocks on the first call until the learner has published once, so that no actor acts with
    parameters the learner never had; later calls keep the current parameters while the table
    is empty (a restarted replay server, until the learner's next push).
    """

    def __init__(self, client: reverb.Client, variables: Sequence[tf.Variable],
                 table: str = tables.VARIABLES):
        self._client = client
        self._variables = list(variables)
        self._table = table
        self.learner_step = -1

    def update(self) -> None:
        if self.learner_step >= 0 and not self._published():
            return
        sample = next(self._client.sample(self._table, 1, emit_timesteps=False))
        step, *values = sample.data
        if len(values) != len(self._variables):
            raise ValueError(
                f'the learner published {len(values)} variables, this actor has '
                f'{len(self._variables)}: are both running the same network config?')
        step = int(step[0])
        if step == self.learner_step:
            return
        for variable, value in zip(self._variables, values):
            variable.assign(value[0])
        self.learner_step = step

    def _published(self) -> bool:
        try:
            return self._client.server_info(timeout=5)[self._table].current_size > 0
        except (RuntimeError, reverb.errors.ReverbError):   # the replay server is down
            return False


def copy_variables(source, target) -> None:
    """Assigns `source`'s variables to `target`'s (a target network's periodic copy)."""
    for s, t in zip(source.variables, target.variables):
        t.assign(s)
