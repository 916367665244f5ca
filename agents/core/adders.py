"""What actors write into Reverb as sequences: overlapping sequences of steps, into one or more
tables, each with a priority function (IMPALA, LASER, Reactor). N-step transitions have their
own module, agents/core/transitions.py."""
import collections
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import reverb
import tree
from absl import logging

from agents.core import episode_refs
from agents.core import packing as packing_lib
from agents.core import steps

PriorityFn = Callable[[Sequence[Mapping[str, Any]]], float]


def constant_priority(value: float = 1.0) -> PriorityFn:
    """Every sequence gets `value` (queues and uniform tables ignore priorities)."""
    return lambda sequence: value


class SequenceAdder:
    """Writes the last `length` steps as one item every `period` steps, into every table of
    `priorities` (table name -> function of the sequence's steps giving its priority).

    IMPALA (sec. 3) uses length T+1 and period T: consecutive unrolls share one step, so the
    learner bootstraps from the last step's value and learns from every transition exactly once.
    Sequences run across episode boundaries; the per-step discount marks where episodes end
    (and, in recurrent steps, `first` where they start). A recurrent policy's `core_state` is
    stored once per item, from the sequence's first step (agents/core/steps.py). A table
    named in `columns` gets items of those step fields only (e.g. a rate-limiting table).

    Items go to the server at a flush, every `flush_period` steps (default: each item). A
    flush closes the chunks the items reference, so it also sets how many steps Reverb
    compresses together and how many chunk references each item holds: with a sequence at
    every step (Reactor), flushing each item would store each step as a chunk of its own and
    cost 10 times the memory per stored step (benchmarks/README.md, "Reactor"). Reverb's
    auto-tuned chunks are shorter still; `chunk_length` fixes every column's chunks at that
    many steps (flush at the same period to keep chunks whole).

    With `stack` > 1 each frame is stored once, as Ape-X's transitions store them
    (agents/core/transitions.py): an observation of `stack` frames on its last axis, oldest
    first (environments/atari.py), is written as its newest frame and `steps.STACK_DEPTH`, how
    many of its older frames are the earlier steps' newest frames (the others are a reset's
    zeros); an item's observations are its steps' frames and the `stack` - 1 before them
    (`steps.frame_signature`), and `steps.stacked_observations` rebuilds the stacks.

    With `packing` (agents/core/packing.py), the fields it packs are written as one column,
    after the frame above is taken (so its STACK_DEPTH may be packed too): a column fewer per
    field costs the actor less for each step, the server and the learner's dataset less for
    each item; items' signatures are `packing.signature`'s, and a reader unpacks them.

    Each table of `episode_tables` gets every whole episode of recurrent steps instead (LASER
    sec. 5.1: "We store the entire episodes in the replay buffer"): from its `first` step to
    the step before the next episode's, without the core state (the learner recomputes it),
    once the next episode starts (an episode unfinished at `close` is not written, nor one of
    more than `max_episode_steps`). The writer keeps the episode under way referenced, and
    only it: its references are gathered as each sequence is written
    (agents/core/episode_refs.py), the writer's own history reaching back a sequence and a
    chunk, and once the episode is written the writer lets go of it (`chunk_length` is
    needed). It costs no more data than the sequences: the items share the same chunks. So
    that a table sized in sequences holds as many steps as with sequences (its oldest removed
    first), an episode of L steps takes ceil(L / `period`) items there: itself with priority
    1, and placeholders (its last step) with priority 0, which a proportional sampler never
    draws (`reverb_tables.tables.episode_replay_table`: episodes drawn uniformly).
    """

    def __init__(self, client: reverb.Client, priorities: Mapping[str, PriorityFn],
                 length: int, period: int, max_in_flight_items: int = 2,
                 columns: Mapping[str, Sequence[str]] | None = None,
                 flush_period: int | None = None, chunk_length: int | None = None,
                 stack: int = 1, episode_tables: Sequence[str] = (),
                 max_episode_steps: int = 0, packing: packing_lib.StepPacking | None = None):
        if not 1 <= period <= length:
            raise ValueError(f'need 1 <= period <= length, got period={period}, length={length}')
        if not priorities and not episode_tables:
            raise ValueError('a SequenceAdder needs at least one table')
        if episode_tables and (max_episode_steps < 1 or not chunk_length):
            raise ValueError(f'episode tables need max_episode_steps >= 1 and a chunk_length, '
                             f'got {max_episode_steps} and {chunk_length}')
        self._span = length + stack - 1     # the steps an item's observations reach back
        self._max_episode_steps = max_episode_steps
        self._chunk_length = chunk_length
        self._writer = client.trajectory_writer(
            num_keep_alive_refs=self._span + (chunk_length or 0))
        self._priorities = dict(priorities)
        self._columns = dict(columns or {})
        self._length = length
        self._period = period
        self._max_in_flight = max_in_flight_items
        self._flush_period = flush_period or period
        self._stack = stack
        self._packing = packing
        self._frames = collections.deque(maxlen=stack - 1)   # the last steps' newest frames
        self._steps = collections.deque(maxlen=length)
        self._num_steps = 0
        self._flushed_at = 0
        self._episode_tables = tuple(episode_tables)
        self._episode_start = 0
        self._episode = episode_refs.EpisodeRefs(older=stack - 1)

    def add(self, step: Mapping[str, Any]) -> None:
        if self._episode_tables:
            if 'first' not in step:
                raise ValueError('episode tables need recurrent steps (their `first` field)')
            if step['first'] and self._num_steps:
                self._write_episode()
                self._episode_start = self._num_steps
                self._episode.start(self._writer.history)
        if self._stack > 1:
            if not self._num_steps:
                self._write_older_frames(step['observation'])
            step = self._newest_frame(step)
        self._writer.append(self._packing.pack(step) if self._packing else step)
        if self._chunk_length and not self._num_steps:
            self._keep_alive(self._episode_keep_alive(), core_state=True)
        self._steps.append(step)
        self._num_steps += 1
        if (self._num_steps >= self._length
                and (self._num_steps - self._length) % self._period == 0):
            if self._episode_tables and (self._num_steps - self._episode_start
                                         <= self._max_episode_steps):
                self._episode.gather(self._writer.history)   # one too long is not written
            history = dict(self._writer.history)
            state = history.pop(steps.CORE_STATE, None)
            trajectory = tree.map_structure(lambda column: column[-self._length:], history)
            if self._stack > 1:
                trajectory['observation'] = history['observation'][-self._span:]
            if state is not None:
                trajectory[steps.CORE_STATE] = tree.map_structure(
                    lambda column: column[-self._length], state)
            for table, priority in self._priorities.items():
                fields = self._columns.get(table)
                self._writer.create_item(
                    table, priority=float(priority(self._steps)),
                    trajectory=(trajectory if fields is None
                                else {name: trajectory[name] for name in fields}))
            if self._num_steps - self._flushed_at >= self._flush_period:
                # Blocks while a table is full: the learner's pace throttles the actors.
                self._writer.flush(block_until_num_items=self._max_in_flight)
                self._flushed_at = self._num_steps

    def _keep_alive(self, others: int, core_state: bool = False) -> None:
        """How many of its newest steps the writer keeps referenced (in chunks of
        `chunk_length` steps, which must be closed): `others` in every column but the core
        state; with `core_state`, in the core state's too, what the sequences span."""
        for path, _ in tree.flatten_with_path(self._writer.history):
            if path[0] != steps.CORE_STATE:
                self._writer.configure(path, num_keep_alive_refs=others,
                                       max_chunk_length=self._chunk_length)
            elif core_state:
                self._writer.configure(path, num_keep_alive_refs=self._span + self._chunk_length,
                                       max_chunk_length=self._chunk_length)

    def _episode_keep_alive(self) -> int:
        """What every column but the core state keeps referenced: with episode tables the
        longest episode (its older frames and a chunk beyond), else the sequences' span."""
        episode = self._max_episode_steps + self._stack - 1 if self._episode_tables else 0
        return max(self._span, episode) + self._chunk_length

    def _write_episode(self) -> None:
        """The episode that ended at the last step, into every episode table."""
        length = self._num_steps - self._episode_start
        if length > self._max_episode_steps:
            logging.warning('an episode of %d steps is longer than the replay takes whole '
                            '(max_episode_steps=%d): not stored', length,
                            self._max_episode_steps)
            return
        history = self._writer.history
        episode = self._episode.trajectory(history)
        placeholder = tree.map_structure(lambda column: column[-1:], {
            name: column for name, column in history.items() if name != steps.CORE_STATE})
        for table in self._episode_tables:
            self._writer.create_item(table, priority=1.0, trajectory=episode)
            for _ in range(-(-length // self._period) - 1):
                self._writer.create_item(table, priority=0.0, trajectory=placeholder)
        # Its items sent, the chunks of its last step closed: the writer lets go of its steps
        # (all but the sequences' span), then keeps the next episode's as they come.
        self._writer.flush()
        self._keep_alive(self._span + self._chunk_length)
        self._keep_alive(self._episode_keep_alive())

    def _frames_of(self, observation) -> list:
        width = observation.shape[-1] // self._stack
        return [observation[..., k * width:(k + 1) * width] for k in range(self._stack)]

    def _write_older_frames(self, observation) -> None:
        """The first observation's older frames, as observation-only steps before the first
        step, so that the first item's observations have them as every later item's do."""
        for frame in self._frames_of(observation)[:-1]:
            self._writer.append({'observation': frame})
            self._frames.append(frame)

    def _newest_frame(self, step: Mapping[str, Any]) -> dict:
        """The step with its observation's newest frame and STACK_DEPTH in place of it."""
        frames = self._frames_of(step['observation'])
        depth = 0
        while (depth < len(self._frames)
               and np.array_equal(frames[-2 - depth], self._frames[-1 - depth])):
            depth += 1
        if any(frame.any() for frame in frames[:self._stack - 1 - depth]):
            raise ValueError('an observation\'s older frames must be the earlier steps\' newest '
                             'frames or zeros (a frame stack, oldest first)')
        self._frames.append(frames[-1])
        return {**step, 'observation': frames[-1], steps.STACK_DEPTH: np.uint8(depth)}

    def close(self) -> None:
        """Sends every pending item, then closes the stream."""
        self._writer.flush()
        self._writer.close()
