"""The learner loop shared by every agent.

Reverb dataset -> the agent's compiled update -> parameters pushed to the actors, checkpoints
with `tf.train.CheckpointManager`, and logs (learner.csv, episodes.csv, TensorBoard, progress).
A restarted learner restores its newest readable checkpoint, frame counter included, and goes on.

Checkpoints cannot be half-written: TF writes a checkpoint's files under temporary names and
renames them, then names it in the `checkpoint` state file, itself replaced atomically; a
learner killed mid-write leaves the previous one newest. A checkpoint that still cannot be read
(truncated by a full disk or a crash) is skipped on restore with one line, for the one before.
A save that fails (a full disk, an unwritable directory) is one line and training goes on, the
newest good checkpoint kept; only the final save failing stops the learner (CheckpointError).

A member of a population (IMPALA app. F, agents/core/pbt.py) takes its turn after each log: its
learner hands it the finished games, and it may load another learner's checkpoint
(`copy_from`), change the hyperparameters the learning state holds as variables
(`hyperparameters`) and checkpoint at once (`save_now`).
"""
import fcntl
import os
import signal
import time
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import reverb
import tensorflow as tf
from absl import logging

from agents.core import config_checks
from agents.core import learning
from agents.core import logging as run_logging
from agents.core import variables as variables_lib
from reverb_tables import tables


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


class EpisodeStatsReader:
    """Drains the finished-game statistics that actors insert into their queue table."""

    def __init__(self, client: reverb.Client, table: str = tables.EPISODE_STATS):
        self._client = client
        self._table = table

    def drain(self) -> list[dict[str, Any]]:
        """The games finished since the last call; none while the replay server is down."""
        try:
            size = self._client.server_info(timeout=5)[self._table].current_size
        except (RuntimeError, reverb.errors.ReverbError):
            return []
        if not size:
            return []
        samples = self._client.sample(self._table, size, emit_timesteps=False,
                                      unpack_as_table_signature=True)
        return [{k: v[0].item() for k, v in sample.data.items()} for sample in samples]


class Learner:
    """Runs `state.update` on batches from `iterator` until `state.frames` reaches
    `total_frames`, pushing `state.network`'s trainable variables to the actors.

    `state` is the agent's `learning.LearningState`: its compiled update advances `step` (and
    `frames`, where the agent counts frames by what it learns from) and returns scalar
    metrics. With
    `after_update`, the update's outputs go through it first, outside the graph, and what it
    returns is logged: Ape-X writes new priorities back to replay there and counts the frames
    its actors generated. `on_checkpoint` runs after each checkpoint is saved: Ape-X checkpoints
    its replay server there, so that learner and replay are saved together. With `population`
    (a `pbt.Member`), the learner is a member of a population-based training run. With
    `task_of` (a multi-task agent: finished game -> its task), episodes.csv has a `task`
    column and TensorBoard a return curve per task (`actor/episode_return/<task>`).
    """

    def __init__(self, *, state: learning.LearningState, iterator: Iterator[Any],
                 client: reverb.Client,
                 run_dir: str, total_frames: int, checkpoint_interval_s: float,
                 log_interval_s: float, push_interval_steps: int = 1,
                 variables_table: str = tables.VARIABLES,
                 episode_stats_table: str = tables.EPISODE_STATS,
                 after_update: Callable[[Mapping[str, Any]], Mapping[str, tf.Tensor]]
                 | None = None, on_checkpoint: Callable[[], Any] | None = None,
                 name: str = 'learner', max_nonfinite_updates: int = 10,
                 population=None, task_of: Callable[[Mapping[str, Any]], str] | None = None):
        self._update = state.update
        self._task_of = task_of
        self._state = state
        self._population = population
        self._new_games = []     # finished games the population has not seen yet
        self._after_update = after_update
        self._iterator = iterator
        self._step = state.step
        self._frames = state.frames
        self._total_frames = total_frames
        self._pusher = variables_lib.VariablePusher(
            client, state.network.trainable_variables, table=variables_table)
        self._push_interval = push_interval_steps
        self._stats = EpisodeStatsReader(client, episode_stats_table)
        checkpoints = checkpoint_dir(run_dir)
        self._lock = lock_directory(
            checkpoints, 'learner', 'give each learner of a run its own --learner_id')
        self._saver = tf.train.Checkpoint(learner=state)
        self._checkpoint = tf.train.CheckpointManager(self._saver, checkpoints, max_to_keep=3)
        self._checkpoint_interval = checkpoint_interval_s
        self._on_checkpoint = on_checkpoint
        self._log_interval = log_interval_s
        logs = os.path.join(run_dir, 'logs')
        self._learner_csv = run_logging.CsvLogger(os.path.join(logs, 'learner.csv'))
        self._episodes_csv = run_logging.CsvLogger(os.path.join(logs, 'episodes.csv'))
        self._tensorboard = run_logging.TensorBoardLogger(os.path.join(logs, 'tensorboard'))
        self._progress = run_logging.ProgressLine(name, total_frames, log_interval_s)
        self._name = name
        self._max_nonfinite = max_nonfinite_updates
        self._nonfinite_run = 0      # consecutive skipped updates
        self._nonfinite_total = 0
        self._stop_requested = False

    def restore(self) -> None:
        """Restores the newest checkpoint that reads back whole, skipping unreadable ones."""
        paths = self._checkpoint.checkpoints[::-1]     # newest first
        for path in paths:
            try:
                self._saver.restore(path)
            except Exception as e:  # pylint: disable=broad-except  (truncated files: IndexError)
                print(f'[{self._name}] warning: checkpoint {path} is unreadable '
                      f'({_first_line(e)}); trying the one before', flush=True)
                continue
            logging.info('restored %s: step %d, frames %d', path, int(self._step.numpy()),
                         int(self._frames.numpy()))
            print(f'[{self._name}] resumed from {path} at frame {int(self._frames.numpy()):,}',
                  flush=True)
            return
        if paths:
            raise CheckpointError(f'none of the checkpoints in {self._checkpoint.directory} '
                                  f'can be read; move them away to start this learner afresh')

    def run(self, max_steps: int | None = None) -> None:
        """Trains to `total_frames` (or `max_steps` more updates), checkpointing on the way."""
        signal.signal(signal.SIGTERM, self._request_stop)
        self.restore()
        self.push_parameters()
        self._population_turn('start')
        last_checkpoint = last_log = time.monotonic()
        log_frames = int(self._frames.numpy())
        steps_done = 0
        metrics = {}
        while (int(self._frames.numpy()) < self._total_frames and not self._stop_requested
               and (max_steps is None or steps_done < max_steps)):
            metrics = self._update(next(self._iterator))
            if self._after_update:
                metrics = self._after_update(metrics)
            steps_done += 1
            step = int(self._step.numpy())
            self._count_nonfinite(metrics, step)
            if step % self._push_interval == 0:
                self._pusher.push(step)
            now = time.monotonic()
            if now - last_log >= self._log_interval:
                log_frames = self._log(metrics, now - last_log, log_frames)
                last_log = now
                self._population_turn('observe')
            if now - last_checkpoint >= self._checkpoint_interval:
                self._save()
                last_checkpoint = now
        if metrics:
            self._log(metrics, time.monotonic() - last_log, log_frames, force=True)
        self._save(final=True)

    def _count_nonfinite(self, metrics, step: int) -> None:
        """Counts updates the agent skipped for a non-finite loss or gradient; stops without
        a checkpoint after `max_nonfinite_updates` in a row, so that the newest checkpoint
        is the last good state."""
        if not float(np.asarray(metrics.get('nonfinite', 0.0))):
            self._nonfinite_run = 0
            return
        self._nonfinite_run += 1
        self._nonfinite_total += 1
        logging.warning('update after step %d skipped: non-finite loss or gradient', step)
        if self._nonfinite_run >= self._max_nonfinite:
            newest = self._checkpoint.latest_checkpoint or 'none yet'
            raise NonFiniteError(
                f'{self._nonfinite_run} updates in a row after step {step} had a non-finite '
                f'loss or gradient and were skipped; stopped without saving (newest '
                f'checkpoint: {newest}). Lower the learning rate, or look for bad inputs')

    def _log(self, metrics, elapsed: float, last_frames: int, force: bool = False) -> int:
        """Writes the logs; a failed write (a full disk) is one line and training goes on."""
        try:
            return self._write_logs(metrics, elapsed, last_frames, force)
        except OSError as e:
            print(f'[{self._name}] warning: logs not written ({_first_line(e)})', flush=True)
            return last_frames

    def _write_logs(self, metrics, elapsed: float, last_frames: int, force: bool) -> int:
        frames = int(self._frames.numpy())
        values = {name: float(np.asarray(value)) for name, value in metrics.items()}
        row = {'step': int(self._step.numpy()), 'frames': frames, 'wall_time': time.time(),
               'frames_per_second': (frames - last_frames) / max(elapsed, 1e-9), **values,
               'nonfinite_updates': self._nonfinite_total}
        self._learner_csv.write(row)
        self._tensorboard.write({f'learner/{k}': v for k, v in values.items()}, frames)
        games = self._stats.drain()
        if self._population:
            self._new_games += games
        for game in games:
            task = {'task': self._task_of(game)} if self._task_of else {}
            self._episodes_csv.write({
                'frames': frames, 'wall_time': time.time(), 'actor': game['actor'],
                'env': game['env'], **task, 'episode_return': game['episode_return'],
                'episode_frames': game['episode_frames']})
        if games:
            returns = [game['episode_return'] for game in games]
            self._progress.add_returns(returns)
            curves = {'actor/episode_return': np.mean(returns)}
            if self._task_of:
                by_task = run_logging.returns_by_task(games, self._task_of)
                curves.update({f'actor/episode_return/{task}': np.mean(task_returns)
                               for task, task_returns in by_task.items()})
            self._tensorboard.write(curves, frames)
        self._progress.maybe_print(frames, {'loss': values.get('loss', float('nan'))},
                                   force=force)
        return frames

    def _population_turn(self, turn: str) -> None:
        """The population member's `start` or `observe` (agents/core/pbt.py); a failure to
        read or write its files is one line and training goes on."""
        if not self._population:
            return
        frames, step = int(self._frames.numpy()), int(self._step.numpy())
        try:
            if turn == 'start':
                self._population.start(self, frames, step)
            else:
                games, self._new_games = self._new_games, []
                self._population.observe(self, frames, step, games)
        except (OSError, tf.errors.OpError) as e:
            print(f'[{self._name}] warning: population-based training skipped a turn '
                  f'({_first_line(e)}); training goes on', flush=True)

    @property
    def state(self) -> learning.LearningState:
        """The learning state this learner trains and checkpoints."""
        return self._state

    @property
    def step(self) -> int:
        """The updates made so far (restored ones included)."""
        return int(self._step.numpy())

    @property
    def frames(self) -> int:
        """The frames counted so far, which training runs until `total_frames`."""
        return int(self._frames.numpy())

    def push_parameters(self) -> None:
        """Pushes the parameters to the actors now, numbered with the current step."""
        self._pusher.push(self.step)

    def release_lock(self) -> None:
        """Releases the checkpoint directory's lock, as the end of the learner's process does."""
        self._lock.close()

    @property
    def hyperparameters(self) -> Mapping[str, tf.Variable]:
        """The hyperparameters the learning state holds as variables (PBT adapts them)."""
        return self._state.hyperparameters

    def copy_from(self, checkpoint: str) -> int:
        """Loads another learner's `checkpoint` into this one's state (weights, optimizer,
        hyperparameters; PBT's copy, IMPALA app. F), keeping this learner's own step and frame
        counters, and pushes the new parameters to its actors. Returns the frames the
        checkpoint's learner had trained."""
        tf.train.load_checkpoint(checkpoint)   # an unreadable one fails here, changing nothing
        step, frames = self._step.numpy(), self._frames.numpy()
        self._saver.read(checkpoint).assert_existing_objects_matched()
        donor_frames = int(self._frames.numpy())
        self._step.assign(step)
        self._frames.assign(frames)
        self._pusher.push(int(step))
        return donor_frames

    def save_now(self) -> str | None:
        """Checkpoints now; the newest checkpoint's path (the previous one if this failed)."""
        self._save()
        return self._checkpoint.latest_checkpoint

    def _save(self, final: bool = False) -> None:
        """Saves a checkpoint (then `on_checkpoint`); a failure is one line and training goes
        on with the newest good checkpoint kept, except for the `final` save."""
        frames = int(self._frames.numpy())
        try:
            self._checkpoint.save(checkpoint_number=frames)
        except (tf.errors.OpError, OSError) as e:
            newest = self._checkpoint.latest_checkpoint or 'none yet'
            reason = f'could not write its checkpoint at frame {frames:,} ({_first_line(e)})'
            if final:
                raise CheckpointError(f'{reason}; stopped, newest checkpoint: {newest}') from e
            print(f'[{self._name}] warning: {reason}; training goes on, newest checkpoint: '
                  f'{newest}', flush=True)
            return
        if self._on_checkpoint:
            try:
                self._on_checkpoint()
            except RuntimeError as e:   # the replay server is down or cannot write
                print(f'[{self._name}] warning: replay checkpoint at frame {frames:,} not '
                      f'written ({_first_line(e)})', flush=True)

    def _request_stop(self, signum, frame) -> None:
        del signum, frame
        self._stop_requested = True


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
