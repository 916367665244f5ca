"""Run logs: CSV files to plot, TensorBoard events, and one console progress line.

Every role writes through `CsvLogger`/`TensorBoardLogger`; the learner also prints the progress
line a researcher watches (frames, frames/s, recent game scores, loss).
"""
import collections
import csv
import dataclasses
import os
import sys
import time
from typing import Mapping, TextIO

import numpy as np
import tensorflow as tf


class CsvLogger:
    """Appends rows to `path`; the header comes from the first row (kept when resuming)."""

    def __init__(self, path: str):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._path = path
        self._fields = None
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path, newline='') as f:
                self._fields = next(csv.reader(f))

    def write(self, row: Mapping[str, float]) -> None:
        new_file = self._fields is None
        if new_file:
            self._fields = list(row)
        with open(self._path, 'a', newline='') as f:
            writer = csv.DictWriter(f, fieldnames=self._fields, extrasaction='ignore')
            if new_file:
                writer.writeheader()
            writer.writerow({k: csv_value(v) for k, v in row.items()})


def csv_value(value):
    """A value as the run's CSV logs write it (floats to 10 significant digits)."""
    if isinstance(value, (float, np.floating)):
        return f'{float(value):.10g}'
    return value


class TensorBoardLogger:
    """Scalars against environment frames, the x-axis of every figure in the papers."""

    def __init__(self, logdir: str):
        self._writer = tf.summary.create_file_writer(logdir)

    def write(self, values: Mapping[str, float], frames: int) -> None:
        with self._writer.as_default(step=int(frames)):
            for name, value in values.items():
                tf.summary.scalar(name, float(value))
        self._writer.flush()


def eta(frames_left: int, frames_per_second: float) -> str:
    """'1h05m' (or '4m10s' under an hour) to train `frames_left` at the measured rate."""
    if frames_left <= 0:
        return '0m00s'
    if frames_per_second <= 0:
        return 'n/a'
    seconds = int(frames_left / frames_per_second)
    hours, minutes = divmod(seconds // 60, 60)
    return f'{hours}h{minutes:02d}m' if hours else f'{minutes}m{seconds % 60:02d}s'


@dataclasses.dataclass
class ProgressLine:
    """Prints `[role] frames ... | f/s ... | ETA ... | return ... | loss ...` at most every
    `interval_s` s; the ETA is the frames left at the frames/s of the last interval."""

    role: str
    total_frames: int
    interval_s: float = 10.0
    stream: TextIO = sys.stdout
    _last_time: float | None = dataclasses.field(default=None, init=False)
    _last_frames: int = dataclasses.field(default=0, init=False)
    _returns: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=20), init=False)

    def add_returns(self, returns) -> None:
        self._returns.extend(returns)

    def maybe_print(self, frames: int, values: Mapping[str, float], force: bool = False) -> None:
        now = time.monotonic()
        if self._last_time is None:
            self._last_time, self._last_frames = now, frames
            return
        if not force and now - self._last_time < self.interval_s:
            return
        fps = (frames - self._last_frames) / max(now - self._last_time, 1e-9)
        score = (f'{np.mean(self._returns):.1f} (last {len(self._returns)} games)'
                 if self._returns else 'n/a')
        extra = ' | '.join(f'{k} {v:.4g}' for k, v in values.items())
        percent = 100.0 * frames / max(self.total_frames, 1)
        print(f'[{self.role}] frames {frames:,} ({percent:.1f}%) | {fps:,.0f} frames/s | '
              f'ETA {eta(self.total_frames - frames, fps)} | return {score} | {extra}',
              file=self.stream, flush=True)
        self._last_time, self._last_frames = now, frames


def returns_by_task(games, task_of) -> dict[str, list[float]]:
    """Finished games' raw returns grouped by their task, `task_of(game)` (a multi-task run's
    episode log: agents/core/builders.game_task), in log order."""
    grouped = collections.defaultdict(list)
    for game in games:
        grouped[task_of(game)].append(float(game['episode_return']))
    return dict(grouped)


def task_returns_table(by_task: Mapping[str, list[float]], last: int = 100) -> str:
    """A Markdown table: per task, its games and the mean return of its `last` ones."""
    lines = [f'| task | games | mean return, last {last} |', '|---|---|---|']
    for task, returns in sorted(by_task.items()):
        lines.append(f'| {task} | {len(returns)} | {np.mean(returns[-last:]):.1f} |')
    return '\n'.join(lines)
