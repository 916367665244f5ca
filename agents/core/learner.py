"""The learner loop shared by every agent, and the errors that stop a learner.

Reverb dataset -> the agent's compiled update -> parameters pushed to the actors, with
learner.csv, the progress line, the episode log (agents/core/episode_log.py), checkpoints
(agents/core/checkpointer.py) and a population member's turns (agents/core/pbt_hook.py) on
the way; `builders.make_learner` puts the pieces together. A restarted learner restores its
newest readable checkpoint, frame counter included, and goes on.
"""
import dataclasses
import fcntl
import os
import signal
import time
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import tensorflow as tf
from absl import logging

from agents.core import config_checks
from agents.core import cpu_account
from agents.core import learning
from agents.core import logging as run_logging
from agents.core import variables as variables_lib


class NonFiniteError(RuntimeError):
    """The learner stopped: too many consecutive updates had a non-finite loss or gradient."""


class CheckpointError(RuntimeError):
    """The learner stopped: no checkpoint could be read, or its final one could not be written."""


class ReplayBehindError(RuntimeError):
    """The learner stopped: its replay state belongs to its checkpoint (Reactor's lazy
    priorities), and the live replay server is not at that checkpoint. The launcher restarts
    the replay server from its checkpoint, then the learner (launch/runtime.py)."""


def lock_directory(directory: str, owner: str, remedy: str):
    """Holds an exclusive lock on `directory` for as long as the returned file stays open
    (the process's life): a second writer gets a one-line ConfigError instead of corrupting
    the first one's checkpoints."""
    try:
        os.makedirs(directory, exist_ok=True)
        lock = open(os.path.join(directory, '.lock'), 'a+')  # pylint: disable=consider-using-with
    except OSError as e:
        raise config_checks.ConfigError(f'cannot write to {directory}: {e.strerror}; choose a '
                                        f'writable --run_dir') from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise config_checks.ConfigError(
            f'{directory} is in use by another {owner}: {remedy}') from None
    return lock


def checkpoint_dir(learner_dir: str) -> str:
    """Where the learner of `learner_dir` keeps its checkpoints."""
    return os.path.join(learner_dir, 'checkpoints')


@dataclasses.dataclass(frozen=True)
class Schedule:
    """When the loop stops (`total_frames`), logs and checkpoints, and how many non-finite
    updates in a row stop it (the run config's fields of the same names)."""
    total_frames: int
    checkpoint_interval_s: float
    log_interval_s: float
    max_nonfinite_updates: int = 10


class Learner:
    """Runs `state.update` on batches from `iterator` until `state.frames` reaches the
    schedule's `total_frames`, `pusher` sending `state.network`'s trainable variables to the
    actors.

    `state` is the agent's `learning.LearningState`: its compiled update advances `step` (and
    `frames`, where the agent counts frames by what it learns from) and returns scalar
    metrics. With `after_update`, the update's outputs go through it first, outside the graph,
    and what it returns is logged: Ape-X writes new priorities back to replay there and counts
    the frames its actors generated. Each log writes `logs_dir`/learner.csv, the metrics to
    `tensorboard` and the finished games to `episode_log` (an `episode_log.EpisodeLog`, which
    shares `tensorboard`), then prints the progress line headed `name`; `checkpointer` (a
    `checkpointer.Checkpointer`) restores and saves `state`. With `hook` (a
    `pbt_hook.PopulationHook`), the learner is a member of a population-based training run:
    the hook gets the finished games and takes its turn after the restore and after each log.
    """

    def __init__(self, *, state: learning.LearningState, iterator: Iterator[Any],
                 pusher: variables_lib.VariablePusher, checkpointer, episode_log,
                 tensorboard: run_logging.TensorBoardLogger, logs_dir: str,
                 schedule: Schedule, name: str = 'learner',
                 after_update: Callable[[Mapping[str, Any]], Mapping[str, tf.Tensor]]
                 | None = None, hook=None):
        self._state = state
        self._iterator = iterator
        self._after_update = after_update
        self._pusher = pusher
        self._checkpointer = checkpointer
        self._episode_log = episode_log
        self._hook = hook
        self._schedule = schedule
        self._learner_csv = run_logging.CsvLogger(os.path.join(logs_dir, 'learner.csv'))
        self._tensorboard = tensorboard
        self._progress = run_logging.ProgressLine(name, schedule.total_frames,
                                                  schedule.log_interval_s)
        self._name = name
        self._nonfinite_run = 0      # consecutive skipped updates
        self._nonfinite_total = 0
        self._stop_requested = False
        self._account = cpu_account.account(name)

    def restore(self) -> None:
        """Restores the newest checkpoint that reads back whole, skipping unreadable ones."""
        self._checkpointer.restore()

    def run(self, max_steps: int | None = None) -> None:
        """Trains to `total_frames` (or `max_steps` more updates), checkpointing on the way."""
        signal.signal(signal.SIGTERM, self._request_stop)
        self.restore()
        self.push_parameters()
        if self._hook:
            self._hook.start()
        last_checkpoint = last_log = time.monotonic()
        log_frames = frames = self.frames
        steps_done = 0
        metrics = {}
        total_frames = self._schedule.total_frames
        log_interval = self._schedule.log_interval_s
        checkpoint_interval = self._schedule.checkpoint_interval_s
        lap = self._account.lap     # CPU by part, with DISTRL_CPU_ACCOUNT set (cpu_account.py)
        while (frames < total_frames and not self._stop_requested
               and (max_steps is None or steps_done < max_steps)):
            batch = next(self._iterator)
            lap('dataset')
            metrics = self._state.update(batch)
            if self._after_update:
                metrics = self._after_update(metrics)
            steps_done += 1
            step = self.step
            self._count_nonfinite(metrics, step)
            lap('update')
            self._pusher.push(step)
            lap('push')
            now = time.monotonic()
            if now - last_log >= log_interval:
                log_frames = self._log(metrics, now - last_log, log_frames)
                last_log = now
                if self._hook:
                    self._hook.observe()
            if now - last_checkpoint >= checkpoint_interval:
                self._checkpointer.save()
                last_checkpoint = now
            lap('logs and checkpoints')
            frames = self.frames
            self._account.write(frames=frames)
        if metrics:
            self._log(metrics, time.monotonic() - last_log, log_frames, force=True)
        self._checkpointer.save(final=True)

    def _count_nonfinite(self, metrics, step: int) -> None:
        """Counts updates the agent skipped for a non-finite loss or gradient; stops without
        a checkpoint after `max_nonfinite_updates` in a row, so that the newest checkpoint
        is the last good state."""
        if not float(np.asarray(metrics['nonfinite'])):   # every update reports it
            self._nonfinite_run = 0
            return
        self._nonfinite_run += 1
        self._nonfinite_total += 1
        logging.warning('update after step %d skipped: non-finite loss or gradient', step)
        if self._nonfinite_run >= self._schedule.max_nonfinite_updates:
            newest = self._checkpointer.latest or 'none yet'
            raise NonFiniteError(
                f'{self._nonfinite_run} updates in a row after step {step} had a non-finite '
                f'loss or gradient and were skipped; stopped without saving (newest '
                f'checkpoint: {newest}). Lower the learning rate, or look for bad inputs')

    def _log(self, metrics, elapsed: float, last_frames: int, force: bool = False) -> int:
        """Writes the logs; a failed write (a full disk) is one line and training goes on."""
        try:
            return self._write_logs(metrics, elapsed, last_frames, force)
        except OSError as e:
            print(f'[{self._name}] warning: logs not written ({first_line(e)})', flush=True)
            return last_frames

    def _write_logs(self, metrics, elapsed: float, last_frames: int, force: bool) -> int:
        frames = self.frames
        values = {name: float(np.asarray(value)) for name, value in metrics.items()}
        row = {'step': self.step, 'frames': frames, 'wall_time': time.time(),
               'frames_per_second': (frames - last_frames) / max(elapsed, 1e-9), **values,
               'nonfinite_updates': self._nonfinite_total}
        self._learner_csv.write(row)
        self._tensorboard.write({f'learner/{k}': v for k, v in values.items()}, frames)
        games = self._episode_log.drain()
        if self._hook:
            self._hook.add_games(games)
        self._episode_log.write(games, frames)
        self._progress.add_returns([game['episode_return'] for game in games])
        self._progress.maybe_print(frames, {'loss': values.get('loss', float('nan'))},
                                   force=force)
        return frames

    @property
    def state(self) -> learning.LearningState:
        """The learning state this learner trains and checkpoints."""
        return self._state

    @property
    def step(self) -> int:
        """The updates made so far (restored ones included)."""
        return int(self._state.step.numpy())

    @property
    def frames(self) -> int:
        """The frames counted so far, which training runs until `total_frames`."""
        return int(self._state.frames.numpy())

    def push_parameters(self) -> None:
        """Pushes the parameters to the actors now, numbered with the current step."""
        self._pusher.push(self.step)

    def release_lock(self) -> None:
        """Releases the checkpoint directory's lock, as the end of the learner's process does."""
        self._checkpointer.release_lock()

    def _request_stop(self, signum, frame) -> None:
        del signum, frame
        self._stop_requested = True


def first_line(error: Exception) -> str:
    """The first line of `error`'s message (its type's name if it has none), for warnings."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
