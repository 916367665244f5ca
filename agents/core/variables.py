"""Parameter broadcast through a size-1 Reverb table (docs/architecture.md, "Data flow").

The learner inserts its newest parameters; each insert evicts the previous one. Actors sample the
table whenever they want fresh parameters (IMPALA: before each unroll, sec. 3).
"""
import threading
import time
import weakref
from typing import Sequence

import numpy as np
import reverb
import tensorflow as tf
from absl import logging

from agents.core import draws
from reverb_tables import tables


class VariablePusher:
    """Learner side: publishes `variables` with the learner step that produced them.

    One trajectory writer serves every push: `client.insert` would open and close a stream
    each time, which cost 2x the CPU and 8x the wall time of a push through an open one
    (benchmarks/README.md, "Every CPU-second of a local run"). Each push is in the table when
    `push` returns, as with `insert`.

    After a replay server's restart the table is empty until the next push, and an actor
    started since (a restarted one) waits for parameters before it acts: with no other actor
    feeding the learner, the learner would wait for that actor's data and never push. So a
    thread of the pusher's own looks every `republish_s` seconds and publishes the last push
    again while the table is empty."""

    def __init__(self, client: reverb.Client, variables: Sequence[tf.Variable],
                 table: str = tables.VARIABLES, timeout_s: float = 10.0,
                 republish_s: float = 5.0):
        self._client = client
        self._variables = list(variables)
        self._table = table
        self._timeout_ms = int(timeout_s * 1000)
        self._republish_s = republish_s
        self._writer = None
        self._last = None          # the last push's [step, *values]
        self._lock = threading.Lock()
        self._republisher = None

    def push(self, step: int) -> None:
        """Publishes; a push cut by the replay server's death (or not confirmed within the
        timeout) is skipped, and the next one opens a new stream (once the server is back, it
        publishes newer parameters)."""
        values = [np.int64(step)] + [v.numpy() for v in self._variables]
        with self._lock:
            self._last = values
            try:
                if self._writer is None:
                    self._writer = self._client.trajectory_writer(num_keep_alive_refs=1)
                self._writer.append(values)
                self._writer.create_item(self._table, 1.0, [column[-1:] for column
                                                            in self._writer.history])
                self._writer.flush(timeout_ms=self._timeout_ms)
            except (RuntimeError, reverb.errors.ReverbError) as e:
                self._writer = None
                logging.warning('parameters of step %d not published: %s', step, e)
        if self._republisher is None:
            self._republisher = threading.Thread(
                target=_republish_while_empty, args=(weakref.ref(self), self._republish_s),
                name='republish', daemon=True)
            self._republisher.start()

    def republish_if_empty(self) -> None:
        """Publishes the last push again if the table is empty and no push has come since
        the look; nothing if the server is down (the next look finds it back)."""
        last = self._last
        try:
            if self._client.server_info(timeout=5)[self._table].current_size:
                return
            with self._lock:
                if self._last is last:
                    self._client.insert(last, priorities={self._table: 1.0})
                    logging.info('parameters of step %d published again (the table was '
                                 'empty: a restarted replay server)', last[0])
        except (RuntimeError, reverb.errors.ReverbError):
            pass


def _republish_while_empty(pusher_ref, interval_s: float) -> None:
    """The pusher's republishing thread; it ends with its pusher."""
    while True:
        time.sleep(interval_s)
        pusher = pusher_ref()
        if pusher is None:
            return
        pusher.republish_if_empty()
        del pusher


class VariableClient:
    """Actor side: copies the newest published parameters into `variables`.

    Blocks on the first call until the learner has published once, so that no actor acts with
    parameters the learner never had; later calls keep the current parameters while the table
    is empty (a restarted replay server, until the learner's next push). A call draws the
    parameters only when the table has taken a push since the last draw (its count of
    inserts, which `server_info` reports, has moved): drawing 2.7 MB costs an actor about 3 ms
    of CPU, and at the paper's batch three pulls in four find the parameters they already
    have (benchmarks/README.md, "Every CPU-second of a local run").

    A later draw that the table does not serve within `timeout_s` is left pending and the actor
    acts on its current parameters: a restarted replay server's table stays empty until the
    learner's next push, which needs this actor's unrolls (agents/core/draws.py).
    """

    def __init__(self, client: reverb.Client, variables: Sequence[tf.Variable],
                 table: str = tables.VARIABLES, timeout_s: float = 10.0):
        self._client = client
        self._variables = list(variables)
        self._table = table
        self._draw = draws.BoundedDraw(client, table, timeout_s)
        self._pushes_drawn = None    # the table's insert count before the last draw
        self.learner_step = -1

    def update(self) -> None:
        if not self._draw.pending:
            pushes = self._pushes()
            if self.learner_step >= 0 and (pushes is None or pushes == self._pushes_drawn):
                return
            self._pushes_drawn = pushes
        samples = self._draw(1, wait=self.learner_step < 0)
        if samples is None:
            return
        step, *values = samples[0].data
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

    def _pushes(self) -> int | None:
        """The inserts the table has taken, or None while it is empty or the server down."""
        try:
            info = self._client.server_info(timeout=5)[self._table]
        except (RuntimeError, reverb.errors.ReverbError):   # the replay server is down
            return None
        return info.rate_limiter_info.insert_stats.completed if info.current_size else None


def copy_variables(source, target) -> None:
    """Assigns `source`'s variables to `target`'s (a target network's periodic copy)."""
    for s, t in zip(source.variables, target.variables):
        t.assign(s)
