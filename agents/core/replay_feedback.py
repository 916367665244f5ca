"""The learner hook of prioritized replays (Ape-X sec. 3; Reactor sec. 3.3): new priorities go
back to the table after each update, and frames are counted where the actors generate them."""
from typing import Callable, Sequence

import reverb
import tensorflow as tf
from absl import logging


class ReplayFeedback:
    """`Learner(after_update=...)`: writes the new priorities back, and sets `frames`.

    Frames are counted as Ape-X counts them (table 1, fig. 2): environment frames the actors
    generated, i.e. transitions inserted into replay times the action repeat, not frames the
    learner sampled. The count continues from the learner's checkpoint; inserts made while a
    learner was down are not counted; a restarted replay server counts on from its checkpoint's
    count, and the frames from there, never back. `write(keys, priorities)` replaces the plain
    write-back to `table` (Reactor: through the lazy bookkeeping, whose inserts `table` still
    counts).
    """

    def __init__(self, client: reverb.Client, table: str, frames: tf.Variable,
                 frames_per_transition: int,
                 write: Callable[[Sequence[int], Sequence[float]], object] | None = None):
        self._client = client
        self._table = table
        self._write = write or self._mutate
        self._frames = frames
        self._frames_per_transition = frames_per_transition
        self._last_inserts = self._inserts()

    def _inserts(self) -> int:
        return self._client.server_info()[self._table].rate_limiter_info.insert_stats.completed

    def _mutate(self, keys, priorities) -> None:
        self._client.mutate_priorities(self._table, updates=dict(zip(keys, priorities)))

    def __call__(self, outputs):
        outputs = dict(outputs)
        keys = outputs.pop('keys').numpy()
        priorities = outputs.pop('priorities').numpy()
        try:
            if not outputs.get('nonfinite'):   # a skipped update has no priorities to give
                self._write(keys.tolist(), priorities.tolist())
            inserts = self._inserts()
        except RuntimeError as e:   # the replay server is down: frames are counted next time
            logging.warning('priorities not written back: %s', e)
            return outputs
        # Fewer than last time: the server restarted from its checkpoint; count on from there.
        inserted = max(inserts - self._last_inserts, 0)
        self._last_inserts = inserts
        self._frames.assign_add(inserted * self._frames_per_transition)
        return outputs
