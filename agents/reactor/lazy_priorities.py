"""Reactor's prioritized sequence replay with lazily initialised priorities (Reactor sec. 3.3,
appendix 6.3 and figure 4).

Experience is added "with no priority, inserting a priority only after the transition has been
sampled and used for training"; meanwhile a sequence is sampled "proportionally to the average
priority of assigned priority sequences within some local neighbourhood":
p^_t = sum_{s_i in J(t)} w_i p(s_i) / sum_{i' in J(t)} w_i', with (I_i) a partition of a
stream's sequences "such that each cell I_i contains exactly one state s_i with already
assigned priority", w_i = |I_i|, and p^_t = p_t where a priority is assigned.
"With probability eps we sample uniformly at random, and with probability 1 - eps we sample
proportionally to p^_t"; importance weights are those of eq. 2 with beta = 1.

Choices (the paper leaves them open: "a class of algorithms all free to choose the partition
(I_i) and the collection of cells"):
  * Stream: the items of one actor environment, ordered by `position` (the index of the
    item's first step in that stream); cells never cross streams.
  * Partition: an unassigned item belongs to the cell of the nearest assigned item of its
    stream (distance in positions, a tie goes to the earlier one). It depends on where the
    assigned items are, never on their values ("partition (I_i)_i must not be a function of
    the assigned priorities"). w_i counts the items in cell i.
  * J(t): the cells of the two assigned items that bracket t (the nearest before and the
    nearest after; only one of them before a stream's first or after its last assigned
    item). They are contiguous and one of them contains t: figure 4's "linear combination of
    nearby assigned priorities", as in figure 6 (nodes 1-3 get 2/3 of one key's priority
    and 1/3 of another's); with J(t) = t's cell alone the weights w_i would cancel.
  * A stream with no assigned item: every item gets the mean p^ of the items of streams that
    have one, or `initial_priority` (1.0: uniform sampling) while nothing is assigned at all.
  * eps = 0.01 (EPSILON). The paper does not give it; 0.01 keeps every sequence reachable
    (P(t) >= eps / N), bounds the beta = 1 weights by 1 / eps = 100, and moves at most 1% of
    the prioritised probability mass. It is a `LazyReplay` argument.
  * Weights: w = 1 / (N P(t)) (eq. 2, beta = 1), not normalised by the batch maximum (the
    paper does not normalise); P(t) = (1 - eps) p^_t / sum_k p^_k + eps / N.

Reverb: two tables hold every item (`lazy_tables`): a prioritized table (Prioritized(1.0),
FIFO remover) whose priority is p^, and a uniform one (Uniform, FIFO) for the eps part; an item
written to both shares its chunks. Reverb's writers do not return item keys, and each table
gives an item its own key, so the learner finds a new item's key by drawing it: actors write
every item with PENDING_PRIORITY (1e9, `adder_priorities`), which makes the next prioritized
draws return the new items; such a draw registers the item (its key, and its stream and
position read from the item's `stream` and `position` fields), writes its insert-time estimate
and its neighbours' new estimates back in one `mutate_priorities`, and is not used for
training. `LazyReplay.sample` draws a batch on the learner's thread: a binomial(B, eps) count
from the uniform table, the rest from the prioritized one; a prioritized draw is kept only if
the table held no pending item when it was drawn (its priority / probability, the table's
total, equals the bookkeeping's sum of p^), and a uniform draw only if its item is registered.
Pending draws are registered at once and the batch's earlier draws dropped (they saw the old
state; whether new items arrived does not depend on what was drawn). So each kept draw comes
from the registered items with exactly P(t), whatever actors insert meanwhile. The learner
writes priorities back with `LazyReplay.update`: the assigned values and every estimate they
change, in one `mutate_priorities`.

Removal: the bookkeeping holds at most `capacity` items. Beyond it, registration removes the
oldest (per stream from the front, taking the stream whose front was registered first:
insertion order, as FIFO) and deletes them from the prioritized table in the same call.
Both tables hold `capacity + slack` items with a FIFO remover, so the uniform table still
holds every registered item (it skips draws of pending and pruned ones). If more than `slack`
items arrive between two batches, the prioritized table's own FIFO drops registered items;
registration then prunes the same ones where both orders agree, and `sample` raises where
the table and the bookkeeping disagree.
"""
import bisect
import heapq
import itertools
import math
import time
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, Sequence

from absl import logging
import numpy as np
import reverb
import tensorflow as tf
import tree

from agents.core import learner as learner_lib

LAZY_PRIORITIZED = 'lazy_prioritized'
LAZY_UNIFORM = 'lazy_uniform'
LAZY_SNAPSHOT = 'lazy_snapshot'
_OLDER = '_older'        # the snapshot table that samples the older of the two snapshots
STREAM = 'stream'        # item field: its stream (one actor environment), an integer
POSITION = 'position'    # item field: the index of its first step in that stream
EPSILON = 0.01
PENDING_PRIORITY = 1e9   # what actors write: "not registered yet", far above any real p^
_RESUM_EVERY = 10_000    # incremental per-stream sums are recomputed exactly this often


class _Stream:
    __slots__ = ('positions', 'keys', 'assigned', 'priorities', 'sum', 'updates', 'covered',
                 'default')

    def __init__(self):
        self.positions = []      # sorted positions of the stream's items
        self.keys = {}           # position -> key
        self.assigned = []       # sorted positions of the items with an assigned priority
        self.priorities = {}     # position -> assigned priority
        self.sum = 0.0           # sum of the stream's estimates (incremental)
        self.updates = 0
        self.covered = False     # its items hold cell estimates (it has an assigned item)
        self.default = None      # the default its items hold while it has none


class LazyPriorities:
    """Lazy priority estimates p^ of every item (Reactor sec. 3.3; partition and J(t) in the
    module docstring). Keys are any hashable item ids (`LazyReplay`: prioritized-table keys).

    `add`, `assign` and `remove` return {key: new estimate} for every remaining item whose
    estimate changed (new items included), so a table mirroring the estimates needs exactly
    those updates.
    """

    def __init__(self, initial_priority: float = 1.0):
        self._initial = float(initial_priority)
        self._streams: dict[Hashable, _Stream] = {}
        self._where: dict[Hashable, tuple[Hashable, int]] = {}
        self._estimates: dict[Hashable, float] = {}
        self._stamps: dict[Hashable, int] = {}
        self._clock = itertools.count()

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key) -> bool:
        return key in self._where

    def estimate(self, key) -> float:
        return self._estimates[key]

    def estimates(self) -> dict:
        return dict(self._estimates)

    def assigned(self, key) -> float | None:
        """The item's assigned priority, None if it has none."""
        stream, position = self._where[key]
        return self._streams[stream].priorities.get(position)

    def find(self, stream, position) -> Hashable | None:
        """The key of the item at `position` of `stream`, None if there is none."""
        st = self._streams.get(stream)
        return None if st is None else st.keys.get(int(position))

    def total(self) -> float:
        """sum_k p^_k over every item."""
        return math.fsum(st.sum for st in self._streams.values())

    def state(self) -> dict:
        """The items in the order they were added, as arrays: `keys`, `streams`, `positions`
        and `priorities` (assigned priority, NaN where none); `from_state` rebuilds it."""
        keys = sorted(self._where, key=self._stamps.__getitem__)
        assigned = [self.assigned(key) for key in keys]
        return {'keys': np.array(keys, np.uint64),
                'streams': np.array([self._where[k][0] for k in keys], np.int64),
                'positions': np.array([self._where[k][1] for k in keys], np.int64),
                'priorities': np.array([np.nan if p is None else p for p in assigned],
                                       np.float64)}

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray],
                   initial_priority: float = 1.0) -> 'LazyPriorities':
        """The bookkeeping `state()` described, estimates included."""
        lazy = cls(initial_priority)
        keys = [int(k) for k in state['keys']]
        lazy.add(zip(keys, (int(s) for s in state['streams']),
                     (int(x) for x in state['positions'])))
        lazy.assign({k: float(p) for k, p in zip(keys, state['priorities']) if not np.isnan(p)})
        return lazy

    def default(self) -> float:
        """The estimate of items in streams without an assigned item: the mean p^ of the
        items of streams with one, `initial_priority` while no item has a priority."""
        covered = [st for st in self._streams.values() if st.assigned]
        count = sum(len(st.positions) for st in covered)
        return math.fsum(st.sum for st in covered) / count if count else self._initial

    def cells(self, stream) -> list[list[Hashable]]:
        """The partition of `stream`: each cell's keys in temporal order (empty list while
        the stream has no assigned item)."""
        st = self._streams[stream]
        if not st.assigned:
            return []
        cells = [[] for _ in st.assigned]
        for position in st.positions:
            cells[self._cell_index(st, position)].append(st.keys[position])
        return cells

    def add(self, items: Iterable[tuple[Hashable, Hashable, int]]) -> dict:
        """Adds unassigned items (key, stream, position); the returned changes hold their
        insert-time estimates and their neighbours' new ones."""
        touched = {}
        for key, stream, position in items:
            position = int(position)
            if key in self._where:
                raise ValueError(f'key {key} is already held')
            st = self._streams.setdefault(stream, _Stream())
            if position in st.keys:
                raise ValueError(f'stream {stream} already holds position {position}: stream '
                                 f'ids must be unique per actor incarnation')
            bisect.insort(st.positions, position)
            st.keys[position] = key
            self._where[key] = (stream, position)
            self._stamps[key] = next(self._clock)
            touched.setdefault(stream, []).append(position)
        return self._refresh(touched)

    def assign(self, priorities: Mapping[Hashable, float]) -> dict:
        """Sets the priorities of trained items, in [0, PENDING_PRIORITY / 2) (keys no
        longer held are ignored)."""
        touched = {}
        for key, priority in priorities.items():
            if key not in self._where:
                continue
            priority = float(priority)
            if not 0 <= priority < PENDING_PRIORITY / 2:
                raise ValueError(f'priority {priority} of key {key} is not in '
                                 f'[0, {PENDING_PRIORITY / 2:g})')
            stream, position = self._where[key]
            st = self._streams[stream]
            if position not in st.priorities:
                bisect.insort(st.assigned, position)
            st.priorities[position] = priority
            touched.setdefault(stream, []).append(position)
        return self._refresh(touched)

    def remove(self, keys: Iterable[Hashable]) -> dict:
        """Forgets items (keys not held are ignored)."""
        touched = {}
        for key in keys:
            if key not in self._where:
                continue
            stream, position = self._where.pop(key)
            del self._stamps[key]
            st = self._streams[stream]
            del st.positions[bisect.bisect_left(st.positions, position)]
            del st.keys[position]
            if st.priorities.pop(position, None) is not None:
                del st.assigned[bisect.bisect_left(st.assigned, position)]
            st.sum -= self._estimates.pop(key)
            touched.setdefault(stream, []).append(position)
        return self._refresh(touched)

    def prune(self, capacity: int) -> tuple[list, dict]:
        """Removes the oldest items beyond `capacity`: each stream loses items from its front,
        taking first the stream whose front item was added first. Returns (removed keys,
        changes)."""
        excess = len(self) - capacity
        if excess <= 0:
            return [], {}
        fronts = [(self._stamps[st.keys[st.positions[0]]], 0, stream)
                  for stream, st in self._streams.items() if st.positions]
        heapq.heapify(fronts)
        removed = []
        while len(removed) < excess:
            _, index, stream = heapq.heappop(fronts)
            st = self._streams[stream]
            removed.append(st.keys[st.positions[index]])
            if index + 1 < len(st.positions):
                key = st.keys[st.positions[index + 1]]
                heapq.heappush(fronts, (self._stamps[key], index + 1, stream))
        return removed, self.remove(removed)

    # -- estimates ------------------------------------------------------------------------

    @staticmethod
    def _cell_index(st: _Stream, position: int) -> int:
        """Index in `st.assigned` of the nearest assigned item (a tie goes to the earlier)."""
        a = st.assigned
        i = bisect.bisect_left(a, position)
        if i == len(a) or (i > 0 and position - a[i - 1] <= a[i] - position):
            return i - 1
        return i

    @staticmethod
    def _cell_size(st: _Stream, j: int) -> int:
        """|I_j|: the items nearer to assigned item j than to its neighbours (ties to the
        earlier one)."""
        a, p = st.assigned, st.positions
        left = bisect.bisect_right(p, (a[j - 1] + a[j]) / 2) if j > 0 else 0
        right = bisect.bisect_right(p, (a[j] + a[j + 1]) / 2) if j + 1 < len(a) else len(p)
        return right - left

    def _cell_estimate(self, st: _Stream, position: int, sizes: dict) -> float:
        if position in st.priorities:
            return st.priorities[position]
        i = bisect.bisect_left(st.assigned, position)
        bracket = [j for j in (i - 1, i) if 0 <= j < len(st.assigned)]
        numerator = denominator = 0.0
        for j in bracket:
            if j not in sizes:
                sizes[j] = self._cell_size(st, j)
            numerator += sizes[j] * st.priorities[st.assigned[j]]
            denominator += sizes[j]
        return numerator / denominator

    def _set(self, st: _Stream, key, value: float, changes: dict) -> None:
        old = self._estimates.get(key)
        if old != value:
            self._estimates[key] = value
            st.sum += value - (0.0 if old is None else old)
            st.updates += 1
            changes[key] = value

    def _refresh(self, touched: Mapping[Hashable, Sequence[int]]) -> dict:
        """Recomputes what `touched` (stream -> positions added, assigned or removed, after
        the change) can have changed: the estimate of an unassigned item depends on the two
        assigned items bracketing it, their priorities and their cells, so an event between
        assigned items A[i-1] and A[i] reaches at most from A[i-2] to A[i+2]."""
        changes = {}
        for stream in touched:
            st = self._streams[stream]
            if not st.positions:
                del self._streams[stream]
            elif st.assigned:
                if st.covered:
                    a = st.assigned
                    ranges = []
                    for x in touched[stream]:
                        i = bisect.bisect_left(a, x)
                        ranges.append((a[i - 2] if i >= 2 else -math.inf,
                                       a[i + 2] if i + 2 < len(a) else math.inf))
                else:
                    st.covered, st.default = True, None
                    ranges = [(-math.inf, math.inf)]
                sizes = {}
                done = set()
                for lo, hi in ranges:
                    start = bisect.bisect_left(st.positions, lo)
                    stop = bisect.bisect_right(st.positions, hi)
                    for position in st.positions[start:stop]:
                        if position not in done:
                            done.add(position)
                            self._set(st, st.keys[position],
                                      self._cell_estimate(st, position, sizes), changes)
        default = self.default()
        for stream, st in self._streams.items():
            if st.assigned:
                continue
            if st.covered or st.default != default:
                positions = st.positions
            else:
                positions = [x for x in touched.get(stream, ()) if x in st.keys]
            st.covered, st.default = False, default
            for position in positions:
                self._set(st, st.keys[position], default, changes)
        for stream in touched:
            st = self._streams.get(stream)
            if st is not None and st.updates > _RESUM_EVERY:
                st.sum = math.fsum(self._estimates[st.keys[x]] for x in st.positions)
                st.updates = 0
        return changes


# -- Reverb ----------------------------------------------------------------------------------

def lazy_tables(signature: Mapping[str, Any], *, capacity: int, slack: int,
                min_size_to_sample: int = 1, prioritized_name: str = LAZY_PRIORITIZED,
                uniform_name: str = LAZY_UNIFORM,
                fields: Iterable[str] | None = None) -> list[reverb.Table]:
    """The prioritized table (p^, Prioritized(1.0)) and the uniform table (the eps part), each
    holding `capacity + slack` items with a FIFO remover; items carry STREAM and POSITION
    (among `fields`, what `LazyReplay`'s `unpack` makes of an item; default the signature's)."""
    missing = {STREAM, POSITION} - set(signature if fields is None else fields)
    if missing:
        raise ValueError(f'lazy replay items need the fields {sorted(missing)}')
    return [reverb.Table(name=name, sampler=sampler, remover=reverb.selectors.Fifo(),
                         max_size=capacity + slack,
                         rate_limiter=reverb.rate_limiters.MinSize(min_size_to_sample),
                         signature=dict(signature))
            for name, sampler in [(prioritized_name, reverb.selectors.Prioritized(1.0)),
                                  (uniform_name, reverb.selectors.Uniform())]]


def snapshot_tables(name: str = LAZY_SNAPSHOT) -> list[reverb.Table]:
    """Hold the two newest `LazyReplay.save()`s, checkpointed with the tables; an item's
    priority is its save's sequence number. `name` samples the newest, `name`_older the older;
    a third save removes the oldest (`LazyReplay` docstring: why two)."""
    signature = {field: tf.TensorSpec([None], dtype) for field, dtype in [
        ('keys', tf.uint64), ('streams', tf.int64), ('positions', tf.int64),
        ('priorities', tf.float64)]}
    return [reverb.Table(name=table, sampler=sampler, remover=reverb.selectors.MinHeap(),
                         max_size=2, rate_limiter=reverb.rate_limiters.MinSize(1),
                         signature=signature)
            for table, sampler in [(name, reverb.selectors.MaxHeap()),
                                   (name + _OLDER, reverb.selectors.MinHeap())]]


def adder_priorities(prioritized_table: str = LAZY_PRIORITIZED,
                     uniform_table: str = LAZY_UNIFORM) -> dict:
    """`SequenceAdder(priorities=...)` for actors: every item enters both tables pending."""
    return {prioritized_table: lambda steps: PENDING_PRIORITY,
            uniform_table: lambda steps: PENDING_PRIORITY}


def identity(data: Mapping[str, Any]) -> tuple[int, int]:
    """(stream, position) of an item: its first step's STREAM and POSITION fields."""
    return (int(np.ravel(data[STREAM])[0]), int(np.ravel(data[POSITION])[0]))


def mixture_probability(prioritized_probability, num_items, epsilon: float):
    """P(t) = (1 - eps) p^_t / sum_k p^_k + eps / N (sec. 3.3)."""
    return (1.0 - epsilon) * prioritized_probability + epsilon / num_items


def importance_weights(info) -> tf.Tensor:
    """w_t = 1 / (N P(t)), eq. 2 with beta = 1, unnormalised, from `LazyReplay.sample`'s info
    (probability P(t), table_size N)."""
    size = tf.cast(info.table_size, tf.float64)
    probability = tf.cast(info.probability, tf.float64)
    return tf.cast(1.0 / (size * probability), tf.float32)


class ReplayDivergedError(learner_lib.ReplayBehindError):
    """The tables are not those of the restored bookkeeping (`LazyReplay`)."""


class LazyReplay:
    """The learner's side of lazy prioritized replay: registration of new items, batches
    drawn with P(t), priority write-back (module docstring). Use it from one thread: draws go
    through `Client.sample` on that thread (no tf.data prefetch), so that no registration
    happens between the draws of one batch. `capacity` must be below the tables' max_size;
    `unpack` turns a drawn item into its fields (agents/core/packing.py).

    The bookkeeping lives in this process. `save()` writes it into the snapshot tables on the
    server (`snapshot_tables`), so that a Reverb checkpoint taken right after holds tables and
    bookkeeping of one moment; a new `LazyReplay` restores it from there (or starts empty where
    there is none), as does `sample` when the tables stop matching its bookkeeping (the server
    restarted from its checkpoint). Every draw checks the registered items (count and sum of
    priorities) against the bookkeeping before anything is registered, so a restored server
    never receives registrations of a bookkeeping that moved on past its checkpoint.

    Why two snapshots: `save` writes only while the tables match the bookkeeping, but the server
    may restart between that check and the write, leaving the restored server (and its next
    checkpoint) a snapshot newer than its tables. The snapshot that came with the restored
    checkpoint is still there, one older; a reload takes the newest snapshot that matches the
    tables, and `ReplayDivergedError` if neither does.
    """

    def __init__(self, client: reverb.Client, *, capacity: int, epsilon: float = EPSILON,
                 initial_priority: float = 1.0, prioritized_table: str = LAZY_PRIORITIZED,
                 uniform_table: str = LAZY_UNIFORM, seed: int | None = None,
                 max_rounds: int = 10_000, snapshot_table: str | None = None,
                 unpack: Callable[[Mapping[str, Any]], Mapping[str, Any]] = dict,
                 server_wait_s: float = 60.0):
        if not 0 <= epsilon <= 1:
            raise ValueError(f'epsilon must be in [0, 1], got {epsilon}')
        self._client = client
        self._capacity = capacity
        self._epsilon = epsilon
        self._prioritized = prioritized_table
        self._uniform = uniform_table
        self._rng = np.random.default_rng(seed)
        self._max_rounds = max_rounds
        self._lazy = LazyPriorities(initial_priority)
        self._snapshot = snapshot_table
        self._sequence = 0       # of the newest snapshot this learner wrote or read
        self._server_wait_s = server_wait_s
        info = self._server_info()
        self._max_size = info[prioritized_table].max_size
        max_size = min(self._max_size, info[uniform_table].max_size)
        if not 0 < capacity < max_size:
            raise ValueError(f'capacity {capacity} must be in [1, {max_size}): the tables\' '
                             f'max_size (capacity + slack) must leave room for new items')
        self._signature = info[prioritized_table].signature
        self._unpack = unpack
        self._initial = initial_priority
        if snapshot_table:
            self._reload()

    @property
    def lazy(self) -> LazyPriorities:
        return self._lazy

    def save(self) -> None:
        """Writes the bookkeeping into the snapshot tables, the older of the two snapshots
        there giving way; `ReplayDivergedError`, writing nothing, where the tables do not
        match it (a restarted server: the next `sample` reloads)."""
        self._check_tables()
        self._write_snapshot()

    def _write_snapshot(self) -> None:
        self._sequence += 1
        self._client.insert(self._lazy.state(), priorities={
            self._snapshot: float(self._sequence), self._snapshot + _OLDER: float(self._sequence)})

    def _reload(self) -> None:
        """Takes the newest of the server's snapshots whose tables match it (none: empty)."""
        info = self._server_info()
        snapshots = {}                      # sequence -> state, newest first
        for table in (self._snapshot, self._snapshot + _OLDER):
            if info[table].current_size:
                sample = next(iter(self._client.sample(table, 1, emit_timesteps=False)))
                snapshots[int(sample.info.priority)] = tree.unflatten_as(
                    info[table].signature, [column[0] for column in sample.data])
        self._sequence = max(snapshots, default=0)
        error = None
        for state in snapshots.values() or [None]:
            self._lazy = (LazyPriorities.from_state(state, self._initial) if state is not None
                          else LazyPriorities(self._initial))
            try:
                self._check_tables()
                return
            except ReplayDivergedError as e:
                error = error or e
        raise error

    def _check_tables(self) -> None:
        """Raises ReplayDivergedError unless the prioritized table's registered items are
        those of the bookkeeping (`_check_draw`), read from one draw."""
        if not self._server_info()[self._prioritized].current_size:
            self._check_registered(0, 0.0)
        else:
            info, _ = next(self._draws(self._prioritized, 1))
            self._check_draw(info)

    def _server_info(self):
        """The server's tables, once it answers: a replay server restarting from its
        checkpoint (the launcher's restart) may close the connection of a call made while it
        goes down or comes up ('Transport closed'), or not answer within the call's 5 s while
        it loads its tables (DeadlineExceededError, a ReverbError); the error after
        `server_wait_s`."""
        deadline = time.monotonic() + self._server_wait_s
        while True:
            try:
                return self._client.server_info(timeout=5)
            except (RuntimeError, reverb.errors.ReverbError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def _check_draw(self, info, expected: float | None = None) -> None:
        """The registered (not pending) items of the table a draw came from, as its info tells
        (table size; total priority = priority / probability), against the bookkeeping
        (`expected`: its total, where the caller has it)."""
        table_total = info.priority / info.probability
        pending = round(table_total / PENDING_PRIORITY)
        self._check_registered(int(info.table_size) - pending,
                               table_total - pending * PENDING_PRIORITY,
                               rounding=1e-12 * table_total, expected=expected)

    def _check_registered(self, count: int, total: float, rounding: float = 0.0,
                          expected: float | None = None) -> None:
        registered = len(self._lazy)
        expected = self._lazy.total() if expected is None else expected
        if count != registered or abs(total - expected) > 1e-6 * expected + rounding + 1e-3:
            raise ReplayDivergedError(
                f'{self._prioritized} holds {count} registered items summing to {total:.6g}, '
                f'the bookkeeping {registered} summing to {expected:.6g}: the server went back '
                f'to a checkpoint the bookkeeping is not of, or another process changed its '
                f'priorities')

    def _draws(self, table: str, count: int):
        """`count` draws: (info, unflattened and unpacked data)."""
        if count <= 0:
            return
        for sample in self._client.sample(table, count, emit_timesteps=False):
            yield sample.info, self._unpack(tree.unflatten_as(self._signature,
                                                              list(sample.data)))

    def _register(self, found: Mapping[int, Mapping[str, Any]]) -> None:
        """Adds newly drawn pending items, prunes to capacity, writes it all back."""
        if not found:
            return
        items = sorted(((key, *identity(data)) for key, data in found.items()),
                       key=lambda item: (item[2], str(item[1])))
        try:
            changes = self._lazy.add(items)
        except ValueError as e:   # a pending item the bookkeeping has: the server went back
            raise ReplayDivergedError(f'{self._prioritized}: {e}') from None
        removed, more = self._lazy.prune(self._capacity)
        changes.update(more)
        for key in removed:
            changes.pop(key, None)
        try:
            self._client.mutate_priorities(self._prioritized, updates=changes, deletes=removed)
        except RuntimeError as e:   # the server died: it comes back from its checkpoint
            raise ReplayDivergedError(f'{self._prioritized}: registrations not written, the '
                                      f'server is down ({e})') from None

    def _classify(self, info, total: float) -> str:
        """'pending' (a new item), 'dirty' (drawn while some item was pending) or 'clean'.
        Raises ReplayDivergedError where the table's registered items are not the
        bookkeeping's, except in a full table, whose FIFO may have dropped registered items
        that registration is about to prune (module docstring, "Removal")."""
        if info.table_size < self._max_size:
            self._check_draw(info, total)
        if info.priority == PENDING_PRIORITY:
            return 'pending'
        table_total = info.priority / info.probability
        if table_total > total + PENDING_PRIORITY / 2:
            return 'dirty'
        if abs(table_total - total) > 1e-6 * total + 1e-3:
            raise ReplayDivergedError(
                f'{self._prioritized} holds priorities summing to {table_total}, the '
                f'bookkeeping {total}: the server restarted from a checkpoint, its FIFO removed '
                f'registered items (raise `slack` or sample more often), or another process '
                f'changed its priorities')
        return 'clean'

    def sync(self) -> int:
        """Registers every pending item; returns how many. Blocks while the table is empty."""
        registered = 0
        for _ in range(self._max_rounds):
            total = self._lazy.total()
            found = {}
            clean = False
            for info, data in self._draws(self._prioritized, 1):
                kind = self._classify(info, total)
                if kind == 'pending':
                    found[info.key] = data
                clean = kind == 'clean'
            if clean:
                return registered
            if found:
                table_total = info.priority / info.probability
                pending = max(1, round((table_total - total) / PENDING_PRIORITY))
                for info, data in self._draws(self._prioritized, pending - 1):
                    if info.priority == PENDING_PRIORITY:
                        found[info.key] = data
                self._register(found)
                registered += len(found)
        raise RuntimeError(f'no clean draw from {self._prioritized} in {self._max_rounds} '
                           f'rounds')

    def sample(self, batch_size: int) -> reverb.ReplaySample:
        """A batch: binomial(B, eps) items from the uniform table, the others from the
        prioritized one, all drawn from one state of the registered items. info.key holds
        prioritized-table keys (for `update`), info.probability P(t), info.table_size N,
        info.priority p^_t; data is stacked on a leading batch axis.

        Tables that no longer match the bookkeeping (a replay server restarted from its
        checkpoint, or died before taking a registration) are met by taking the checkpoint's
        snapshot once the server answers, where there is a snapshot table;
        `ReplayDivergedError` if they do not match that either."""
        try:
            return self._sample(batch_size)
        except ReplayDivergedError as e:
            if not self._snapshot:
                raise
            self._reload()
            logging.warning('%s; bookkeeping reloaded from the server\'s snapshot: %d '
                            'sequences', e, len(self._lazy))
            return self._sample(batch_size)

    def _sample(self, batch_size: int) -> reverb.ReplaySample:
        if not len(self._lazy):
            self.sync()
        num_uniform = int(self._rng.binomial(batch_size, self._epsilon))
        kept = []
        for _ in range(self._max_rounds):
            if len(kept) == batch_size - num_uniform:
                break
            total = self._lazy.total()
            found = {}
            for info, data in self._draws(self._prioritized, batch_size - num_uniform - len(kept)):
                kind = self._classify(info, total)
                if kind == 'pending':
                    found[info.key] = data
                elif kind == 'clean':
                    kept.append((info.key, info.times_sampled, data))
            if found:   # registering changes the state: draws from the old one are dropped
                self._register(found)
                kept = []
        else:
            raise RuntimeError(f'no batch from {self._prioritized} in {self._max_rounds} rounds')
        for _ in range(self._max_rounds):
            if len(kept) == batch_size:
                break
            for info, data in self._draws(self._uniform, batch_size - len(kept)):
                key = self._lazy.find(*identity(data))
                if key is not None:          # pending and pruned items are not in the state
                    kept.append((key, info.times_sampled, data))
        else:
            raise RuntimeError(f'no registered item drawn from {self._uniform} in '
                               f'{self._max_rounds} rounds')
        total, size = self._lazy.total(), len(self._lazy)
        if total <= 0:
            raise ValueError('every estimated priority is 0: P(t) is undefined')
        keys = [key for key, _, _ in kept]
        estimates = np.array([self._lazy.estimate(key) for key in keys], np.float64)
        info = reverb.SampleInfo(
            key=np.array(keys, np.uint64),
            probability=mixture_probability(estimates / total, size, self._epsilon),
            table_size=np.full(len(keys), size, np.int64),
            priority=estimates,
            times_sampled=np.array([n for _, n, _ in kept], np.int32))
        data = tree.map_structure(lambda *xs: np.stack(xs), *[d for _, _, d in kept])
        return reverb.ReplaySample(info=info, data=data)

    def batches(self, batch_size: int) -> Iterator[reverb.ReplaySample]:
        """`sample(batch_size)` forever: the learner's iterator."""
        while True:
            yield self.sample(batch_size)

    def update(self, keys: Iterable[int], priorities: Iterable[float]) -> dict:
        """Assigns the trained items' priorities and writes them and every estimate they
        change to the prioritized table in one call; returns those updates."""
        changes = self._lazy.assign({int(k): float(p) for k, p in zip(keys, priorities)})
        if changes:
            self._client.mutate_priorities(self._prioritized, updates=changes)
        return changes
