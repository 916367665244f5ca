"""A learner's episode log: the finished games its actors report (`report_game`), drained from
their table into logs/episodes.csv and TensorBoard's return curves."""
import os
import time
from typing import Any, Callable, Mapping

import numpy as np
import reverb
from absl import logging

from agents.core import draws
from agents.core import logging as run_logging
from reverb_tables import tables


def report_game(client: reverb.Client, table: str, actor: int, env: int, episode_return: float,
                episode_frames: int) -> bool:
    """An actor's finished game, into `table`; False, with a warning and the game unlogged,
    when the replay server is down or dies during the insert (a restarted server: the actor
    goes on, as its adders do, instead of dying for one game's score)."""
    try:
        client.insert({'actor': np.int32(actor), 'env': np.int32(env),
                       'episode_return': np.float32(episode_return),
                       'episode_frames': np.int64(episode_frames)}, priorities={table: 1.0})
    except (RuntimeError, reverb.errors.ReverbError) as e:
        logging.warning('actor %d: a finished game (return %g) not reported: %s', actor,
                        episode_return, e)
        return False
    return True


class EpisodeStatsReader:
    """Drains the finished-game statistics that actors insert into their queue table."""

    def __init__(self, client: reverb.Client, table: str = tables.EPISODE_STATS,
                 timeout_s: float = 5.0):
        self._client = client
        self._table = table
        self._draw = draws.BoundedDraw(client, table, timeout_s, unpack_as_table_signature=True)

    def drain(self) -> list[dict[str, Any]]:
        """The games finished since the last call; none while the replay server is down, or
        while a draw of the games counted before a restart waits on the restarted server (a
        later call returns them: agents/core/draws.py)."""
        size = 0    # a pending draw returns what it drew
        if not self._draw.pending:
            try:
                size = self._client.server_info(timeout=5)[self._table].current_size
            except (RuntimeError, reverb.errors.ReverbError):
                return []
            if not size:
                return []
        samples = self._draw(size)
        return [{k: v[0].item() for k, v in sample.data.items()} for sample in samples or ()]


class EpisodeLog:
    """Writes finished games to `logs_dir`/episodes.csv and their returns to `tensorboard`.
    With `task_of` (a multi-task agent: finished game -> its task), episodes.csv has a `task`
    column and TensorBoard a return curve per task (`actor/episode_return/<task>`);
    `columns_of` (finished game -> {column: value}) adds the agent's own columns (Ape-X DQN:
    the epsilon the game was played with)."""

    def __init__(self, reader: EpisodeStatsReader, logs_dir: str,
                 tensorboard: run_logging.TensorBoardLogger,
                 task_of: Callable[[Mapping[str, Any]], str] | None = None,
                 columns_of: Callable[[Mapping[str, Any]], Mapping[str, Any]] = lambda _: {}):
        self._reader = reader
        self._csv = run_logging.CsvLogger(os.path.join(logs_dir, 'episodes.csv'))
        self._tensorboard = tensorboard
        self._task_of = task_of
        self._columns_of = columns_of

    def drain(self) -> list[dict[str, Any]]:
        """The games finished since the last call."""
        return self._reader.drain()

    def write(self, games: list[Mapping[str, Any]], frames: int) -> None:
        """Logs `games` at the learner's `frames`."""
        for game in games:
            task = {'task': self._task_of(game)} if self._task_of else {}
            self._csv.write({
                'frames': frames, 'wall_time': time.time(), 'actor': game['actor'],
                'env': game['env'], **task, 'episode_return': game['episode_return'],
                'episode_frames': game['episode_frames'], **self._columns_of(game)})
        if games:
            curves = {'actor/episode_return': np.mean([g['episode_return'] for g in games])}
            if self._task_of:
                by_task = run_logging.returns_by_task(games, self._task_of)
                curves.update({f'actor/episode_return/{task}': np.mean(task_returns)
                               for task, task_returns in by_task.items()})
            self._tensorboard.write(curves, frames)
