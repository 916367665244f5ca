"""Draws from a Reverb table that a restarted replay server cannot hang.

`reverb.Client.sample` waits for as long as the table cannot serve, and its sampler reconnects
across a replay server's restart. So a draw in flight when the server dies, or sent just after
a check found the table non-empty, waits on the restarted server's empty table. For an actor's
parameter pull that is a deadlock: the learner publishes only after a step, and it steps only on
the actors' unrolls. A replay kill in tests/test_launch.py hit exactly this once in CI.
`BoundedDraw` bounds that wait and keeps the draw: it runs on a thread of its own, and a later
call collects it once the table has served it, so nothing it drew is lost.
"""
import threading
from typing import Any

import reverb


class BoundedDraw:
    """Draws items of one table, waiting at most `timeout_s` for a new draw.

    A draw that has not come by then is left pending; later calls look at it without
    waiting, and return its items once it is done."""

    def __init__(self, client: reverb.Client, table: str, timeout_s: float,
                 unpack_as_table_signature: bool = False):
        self._client = client
        self._table = table
        self._timeout_s = timeout_s
        self._unpack = unpack_as_table_signature
        self._thread: threading.Thread | None = None
        self._outcome: list[Any] = []     # [samples] or [exception] once the draw is done

    @property
    def pending(self) -> bool:
        """A draw started by an earlier call has not been collected yet."""
        return self._thread is not None

    def __call__(self, num_samples: int, wait: bool = False) -> list[reverb.ReplaySample] | None:
        """`num_samples` items (`emit_timesteps=False`), or None while they have not come.

        A new draw is waited for `timeout_s` seconds, or with `wait` until it comes. A draw left
        pending by an earlier call is only looked at; its items are returned whatever
        `num_samples` is now."""
        if self._thread is None:
            self._outcome = []
            self._thread = threading.Thread(target=self._draw, args=(num_samples,),
                                            name=f'draw_{self._table}', daemon=True)
            self._thread.start()
            self._thread.join(None if wait else self._timeout_s)
        if self._thread.is_alive():
            return None
        self._thread = None
        outcome, = self._outcome
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def _draw(self, num_samples: int) -> None:
        try:
            self._outcome.append(list(self._client.sample(
                self._table, num_samples, emit_timesteps=False,
                unpack_as_table_signature=self._unpack)))
        except Exception as e:  # pylint: disable=broad-except  (raised on the caller's thread)
            self._outcome.append(e)
