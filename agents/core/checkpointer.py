"""A learner's checkpoints (`tf.train.CheckpointManager`) and the lock on their directory.

Checkpoints cannot be half-written: TF writes a checkpoint's files under temporary names and
renames them, then names it in the `checkpoint` state file, itself replaced atomically; a
learner killed mid-write leaves the previous one newest. A checkpoint that still cannot be read
(truncated by a full disk or a crash) is skipped on restore with one line, for the one before.
A save that fails (a full disk, an unwritable directory) is one line and training goes on, the
newest good checkpoint kept; only the final save failing stops the learner (CheckpointError).
"""
from typing import Any, Callable

import tensorflow as tf
from absl import logging

from agents.core import learner as learner_lib
from agents.core import learning


class Checkpointer:
    """Saves and restores `state` (step and frames included) in `learner_dir`'s checkpoint
    directory, which it holds locked for the process's life; `on_checkpoint` runs after each
    save (Ape-X, LASER, Reactor: the replay server's checkpoint)."""

    def __init__(self, state: learning.LearningState, learner_dir: str, name: str,
                 on_checkpoint: Callable[[], Any] | None = None):
        directory = learner_lib.checkpoint_dir(learner_dir)
        self._lock = learner_lib.lock_directory(
            directory, 'learner', 'give each learner of a run its own --learner_id')
        self._state = state
        self._saver = tf.train.Checkpoint(learner=state)
        self._manager = tf.train.CheckpointManager(self._saver, directory, max_to_keep=3)
        self._name = name
        self._on_checkpoint = on_checkpoint

    @property
    def latest(self) -> str | None:
        """The newest checkpoint's path; None before the first."""
        return self._manager.latest_checkpoint

    def restore(self) -> None:
        """Restores the newest checkpoint that reads back whole, skipping unreadable ones."""
        paths = self._manager.checkpoints[::-1]     # newest first
        for path in paths:
            try:
                self._saver.restore(path)
            except Exception as e:  # pylint: disable=broad-except  (truncated files: IndexError)
                print(f'[{self._name}] warning: checkpoint {path} is unreadable '
                      f'({learner_lib.first_line(e)}); trying the one before', flush=True)
                continue
            step, frames = int(self._state.step.numpy()), int(self._state.frames.numpy())
            logging.info('restored %s: step %d, frames %d', path, step, frames)
            print(f'[{self._name}] resumed from {path} at frame {frames:,}', flush=True)
            return
        if paths:
            raise learner_lib.CheckpointError(
                f'none of the checkpoints in {self._manager.directory} can be read; move them '
                f'away to start this learner afresh')

    def read(self, checkpoint: str) -> None:
        """Loads `checkpoint` (another learner's: PBT's copy) into the state; an unreadable
        one fails before changing anything."""
        tf.train.load_checkpoint(checkpoint)
        self._saver.read(checkpoint).assert_existing_objects_matched()

    def save(self, final: bool = False) -> None:
        """Saves a checkpoint (then `on_checkpoint`); a failure is one line and training goes
        on with the newest good checkpoint kept, except for the `final` save."""
        frames = int(self._state.frames.numpy())
        try:
            self._manager.save(checkpoint_number=frames)
        except (tf.errors.OpError, OSError) as e:
            newest = self.latest or 'none yet'
            reason = (f'could not write its checkpoint at frame {frames:,} '
                      f'({learner_lib.first_line(e)})')
            if final:
                raise learner_lib.CheckpointError(
                    f'{reason}; stopped, newest checkpoint: {newest}') from e
            print(f'[{self._name}] warning: {reason}; training goes on, newest checkpoint: '
                  f'{newest}', flush=True)
            return
        if self._on_checkpoint:
            try:
                self._on_checkpoint()
            except RuntimeError as e:   # the replay server is down or cannot write
                print(f'[{self._name}] warning: replay checkpoint at frame {frames:,} not '
                      f'written ({learner_lib.first_line(e)})', flush=True)

    def release_lock(self) -> None:
        """Releases the directory's lock, as the end of the learner's process does."""
        self._lock.close()
