"""What actors write into Reverb: fixed-length overlapping sequences of steps."""
from typing import Mapping

import numpy as np
import reverb
import tree


class SequenceAdder:
    """Writes an item of the last `length` steps every `period` steps.

    IMPALA (sec. 3) uses length T+1 and period T: consecutive unrolls share one step, so the
    learner bootstraps from the last step's value and learns from every transition exactly once.
    Sequences run across episode boundaries; the per-step discount marks where episodes end.
    """

    def __init__(self, client: reverb.Client, table: str, length: int, period: int,
                 max_in_flight_items: int = 2):
        if not 1 <= period <= length:
            raise ValueError(f'need 1 <= period <= length, got period={period}, length={length}')
        self._writer = client.trajectory_writer(num_keep_alive_refs=length)
        self._table = table
        self._length = length
        self._period = period
        self._max_in_flight = max_in_flight_items
        self._num_steps = 0

    def add(self, step: Mapping[str, np.ndarray]) -> None:
        self._writer.append(step)
        self._num_steps += 1
        if (self._num_steps >= self._length
                and (self._num_steps - self._length) % self._period == 0):
            trajectory = tree.map_structure(lambda column: column[-self._length:],
                                            self._writer.history)
            self._writer.create_item(self._table, priority=1.0, trajectory=trajectory)
            # Blocks while the table is full: the learner's pace throttles the actors.
            self._writer.flush(block_until_num_items=self._max_in_flight)

    def close(self) -> None:
        self._writer.close()
