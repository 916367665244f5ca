"""Reactor's lazy priorities (sec. 3.3, appendix 6.3): the estimator against a brute-force
reading of the paper, the partition's independence of priority values, and the Reverb tables
on a loopback server (registration, write-back, the eps-mixture's sampling distribution and
beta = 1 importance weights, capacity)."""
import itertools
import threading
import time

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.reactor import lazy_priorities as lp

SIGNATURE = {lp.STREAM: tf.TensorSpec([], tf.int32), lp.POSITION: tf.TensorSpec([], tf.int64),
             'x': tf.TensorSpec([], tf.float32)}


# ---- the estimator ------------------------------------------------------------------------

def _brute_force(items, priorities, initial=1.0):
    """p^ of every key by the paper's definition, cell by cell. `items`: key -> (stream,
    position); `priorities`: key -> assigned priority. Returns (estimates, stream -> cells)."""
    by_stream = {}
    for key, (stream, position) in items.items():
        by_stream.setdefault(stream, []).append((position, key))
    estimates, partition, covered, uncovered = {}, {}, [], []
    for stream, members in by_stream.items():
        members.sort()
        anchors = [(x, k) for x, k in members if k in priorities]   # the s_i, in time order
        if not anchors:
            uncovered.append(members)
            continue
        cells = {k: [] for _, k in anchors}
        for x, k in members:
            nearest = None
            for ax, ak in anchors:           # strict '<': a tie keeps the earlier anchor
                if nearest is None or abs(x - ax) < abs(x - nearest[0]):
                    nearest = (ax, ak)
            cells[nearest[1]].append(k)
        partition[stream] = [cells[k] for _, k in anchors]
        sizes = {k: len(cells[k]) for k in cells}                   # w_i = |I_i|
        for x, k in members:
            if k in priorities:
                estimates[k] = priorities[k]
                continue
            before = [ak for ax, ak in anchors if ax < x][-1:]
            after = [ak for ax, ak in anchors if ax > x][:1]
            cells_of_t = before + after                             # J(t)
            assert any(k in cells[i] for i in cells_of_t)           # J(t) contains t
            estimates[k] = (sum(sizes[i] * priorities[i] for i in cells_of_t)
                            / sum(sizes[i] for i in cells_of_t))
        covered += [estimates[k] for _, k in members]
    default = np.mean(covered) if covered else initial
    for members in uncovered:
        for _, k in members:
            estimates[k] = default
    return estimates, partition


def _random_items(rng, num_streams=4, max_len=30):
    items = {}
    key = itertools.count()
    for stream in range(num_streams):
        positions = np.cumsum(rng.integers(1, 4, size=rng.integers(0, max_len)))
        for x in positions:
            items[next(key)] = (stream, int(x))
    return items


def _random_priorities(rng, items, fraction):
    chosen = [k for k in items if rng.random() < fraction]
    return {k: float(rng.exponential()) for k in chosen}


def _build(items, priorities):
    lazy = lp.LazyPriorities()
    order = list(items)
    np.random.default_rng(len(order)).shuffle(order)     # registration order is arbitrary
    lazy.add((k, *items[k]) for k in order)
    lazy.assign(priorities)
    return lazy


@pytest.mark.parametrize('seed', range(6))
def test_estimates_match_the_papers_definition(seed):
    rng = np.random.default_rng(seed)
    items = _random_items(rng)
    items[10_000] = (99, 0)                              # a stream with no assigned item
    priorities = _random_priorities(rng, {k: v for k, v in items.items() if v[0] != 99},
                                    fraction=rng.uniform(0.05, 0.5))
    lazy = _build(items, priorities)
    expected, partition = _brute_force(items, priorities)
    assert lazy.estimates() == pytest.approx(expected, rel=1e-12)
    assert lazy.total() == pytest.approx(sum(expected.values()), rel=1e-12)
    for stream, cells in partition.items():
        assert lazy.cells(stream) == cells


def test_a_hand_computed_example():
    # Positions 0..9, priorities at 1 (p=3) and 4 (p=6): the midpoint 2.5 gives cells
    # {0, 1, 2} (w=3) and {3, ..., 9} (w=7); between them p^ = (3*3 + 7*6) / 10 = 5.1.
    lazy = lp.LazyPriorities()
    lazy.add((x, 'a', x) for x in range(10))
    lazy.assign({1: 3.0, 4: 6.0})
    assert [lazy.estimate(x) for x in range(10)] == pytest.approx(
        [3.0, 3.0, 5.1, 5.1, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0])
    assert lazy.cells('a') == [[0, 1, 2], [3, 4, 5, 6, 7, 8, 9]]
    # A tie (position 5, as near to 3 as to 7) goes to the earlier cell.
    lazy.add((('c', x), 'c', x) for x in range(10))
    lazy.assign({('c', 3): 1.0, ('c', 7): 1.0})
    assert lazy.cells('c') == [[('c', x) for x in range(6)], [('c', x) for x in range(6, 10)]]
    # A new item after the last assigned one starts at that one's priority.
    changes = lazy.add([(10, 'a', 10)])
    assert changes[10] == lazy.estimate(10) == 6.0
    # A stream with nothing assigned holds the mean estimate of the others' items.
    lazy.add([('b0', 'b', 0)])
    covered = [lazy.estimate(x) for x in range(11)] + [lazy.estimate(('c', x)) for x in range(10)]
    assert lazy.estimate('b0') == pytest.approx(np.mean(covered))


def test_assigned_items_keep_their_priority():
    rng = np.random.default_rng(7)
    items = _random_items(rng)
    priorities = _random_priorities(rng, items, fraction=0.3)
    lazy = _build(items, priorities)
    for key, p in priorities.items():
        assert lazy.estimate(key) == p and lazy.assigned(key) == p


def test_the_partition_does_not_depend_on_the_values():
    rng = np.random.default_rng(3)
    items = _random_items(rng)
    items[10_000] = (99, 0)
    assigned = [k for k in items if items[k][0] != 99 and rng.random() < 0.25]
    v1 = {k: float(rng.exponential()) for k in assigned}
    v2 = {k: float(rng.exponential()) for k in assigned}
    mixed = {k: 2.0 * v1[k] + 0.5 * v2[k] for k in assigned}
    lazies = [_build(items, v) for v in (v1, v2, mixed)]
    for stream in {s for s, _ in items.values()}:
        assert lazies[0].cells(stream) == lazies[1].cells(stream) == lazies[2].cells(stream)
    # Same cells and weights: p^ is linear in the assigned values.
    for k in items:
        assert lazies[2].estimate(k) == pytest.approx(
            2.0 * lazies[0].estimate(k) + 0.5 * lazies[1].estimate(k), rel=1e-12)


def test_returned_changes_keep_a_mirror_exact():
    """What a table mirroring the estimates receives (add/assign/remove/prune changes) keeps
    it equal to the estimator, through a random history."""
    rng = np.random.default_rng(11)
    lazy = lp.LazyPriorities()
    mirror, items, priorities = {}, {}, {}
    next_key = itertools.count()
    heads = {s: 0 for s in range(3)}
    for _ in range(150):
        op = rng.choice(['add', 'assign', 'remove', 'prune'], p=[0.4, 0.35, 0.15, 0.1])
        if op == 'add':
            new = []
            for _ in range(rng.integers(1, 6)):
                stream = int(rng.integers(3))
                heads[stream] += int(rng.integers(1, 3))
                new.append((next(next_key), stream, heads[stream]))
            rng.shuffle(new)
            items.update({k: (s, x) for k, s, x in new})
            mirror.update(lazy.add(new))
        elif op == 'assign' and items:
            chosen = rng.choice(list(items), size=min(4, len(items)), replace=False)
            update = {int(k): float(rng.exponential()) for k in chosen}
            priorities.update(update)
            mirror.update(lazy.assign(update))
        elif op == 'remove' and items:
            gone = [int(k) for k in rng.choice(list(items), size=min(3, len(items)),
                                               replace=False)]
            mirror.update(lazy.remove(gone))
            removed = gone
        elif op == 'prune':
            removed, changes = lazy.prune(max(0, len(items) - 5))
            mirror.update(changes)
        if op in ('remove', 'prune'):
            for k in removed:
                del items[k], mirror[k]
                priorities.pop(k, None)
        assert mirror == lazy.estimates()
        assert mirror == pytest.approx(_brute_force(items, priorities)[0], rel=1e-9)


def test_prune_removes_each_streams_oldest_first():
    lazy = lp.LazyPriorities()
    lazy.add((('a', x), 'a', x) for x in range(6))
    lazy.add((('b', x), 'b', x) for x in range(6))
    removed, _ = lazy.prune(8)
    assert removed == [('a', 0), ('a', 1), ('a', 2), ('a', 3)]
    lazy.add([(('a', 6), 'a', 6), (('b', 6), 'b', 6)])
    removed, _ = lazy.prune(8)
    assert removed == [('a', 4), ('a', 5)]                  # added before ('b', 0)
    removed, _ = lazy.prune(5)
    assert removed == [('b', 0), ('b', 1), ('b', 2)]


# ---- Reverb ------------------------------------------------------------------------------

def _server(capacity, slack):
    server = reverb.Server(lp.lazy_tables(SIGNATURE, capacity=capacity, slack=slack))
    return server, reverb.Client(f'localhost:{server.port}')


def _write(client, identities):
    """Items as actors write them: into both tables with the pending priority."""
    with client.trajectory_writer(num_keep_alive_refs=1) as writer:
        for stream, position in identities:
            writer.append({lp.STREAM: np.int32(stream), lp.POSITION: np.int64(position),
                           'x': np.float32(position)})
            trajectory = {k: v[-1] for k, v in writer.history.items()}
            for table, priority in lp.adder_priorities().items():
                writer.create_item(table, priority=priority(None), trajectory=trajectory)
            writer.flush()


def _check_server(client, lazy, draws=2000):
    """Every item's priority in the prioritized table is its estimate (read by sampling)."""
    seen = set()
    for sample in client.sample(lp.LAZY_PRIORITIZED, draws, emit_timesteps=False):
        assert sample.info.priority == pytest.approx(lazy.estimate(sample.info.key), rel=1e-12)
        seen.add(sample.info.key)
    assert seen == set(lazy.estimates())


def test_registration_and_write_back_mirror_the_estimates():
    server, client = _server(capacity=100, slack=50)
    _write(client, [(s, x) for s in (0, 1) for x in range(12)])
    replay = lp.LazyReplay(client, capacity=100, seed=0)
    assert replay.sync() == 24 and len(replay.lazy) == 24
    _check_server(client, replay.lazy)                      # nothing assigned: all 1.0
    rng = np.random.default_rng(0)
    trained = [replay.lazy.find(s, x) for s, x in [(0, 2), (0, 7), (0, 8), (1, 5)]]
    priorities = rng.uniform(0.3, 4.0, size=len(trained))
    changes = replay.update(np.array(trained, np.uint64), priorities)
    assert len(changes) > len(trained)                       # the neighbours moved too
    _check_server(client, replay.lazy)
    # New items: registered with their insert-time estimate, neighbours rewritten.
    _write(client, [(0, 12), (0, 13), (2, 0)])
    assert replay.sync() == 3
    assert replay.lazy.estimate(replay.lazy.find(0, 13)) == pytest.approx(priorities[2])
    assert replay.lazy.estimate(replay.lazy.find(2, 0)) == pytest.approx(
        replay.lazy.default())
    _check_server(client, replay.lazy)
    server.stop()


def test_sample_registers_pending_items_and_returns_registered_ones():
    server, client = _server(capacity=100, slack=50)
    _write(client, [(0, x) for x in range(10)])
    replay = lp.LazyReplay(client, capacity=100, seed=1)
    batch = replay.sample(8)                  # no sync: the first draws register the items
    assert len(replay.lazy) == 10
    assert all(int(k) in replay.lazy for k in batch.info.key)
    _write(client, [(0, x) for x in range(10, 16)])
    for _ in range(3):
        batch = replay.sample(8)
        for key, stream, position in zip(batch.info.key, batch.data[lp.STREAM],
                                         batch.data[lp.POSITION]):
            assert replay.lazy.find(stream, position) == int(key)
    assert len(replay.lazy) == 16
    _check_server(client, replay.lazy)
    server.stop()


# The 0.999 quantile of chi-square with 23 degrees of freedom: a correct sampler fails 1 in 1000.
CHI2_23_DOF_999 = 49.73


def test_samples_follow_the_epsilon_mixture_with_beta_one_weights():
    eps, draws, batch_size = 0.25, 10_000, 1000
    server, client = _server(capacity=100, slack=50)
    _write(client, [(s, x) for s in (0, 1) for x in range(12)])
    replay = lp.LazyReplay(client, capacity=100, epsilon=eps, seed=2)
    replay.sync()
    keys = [replay.lazy.find(s, x) for s in (0, 1) for x in range(12)]
    trained = [(0, 1), (0, 5), (0, 6), (0, 10), (1, 0), (1, 4), (1, 9), (1, 11)]
    replay.update([replay.lazy.find(*t) for t in trained],
                  [0.1, 4.0, 0.5, 2.0, 5.0, 0.2, 1.0, 3.0])
    estimates = np.array([replay.lazy.estimate(k) for k in keys])
    n = len(keys)
    expected = (1 - eps) * estimates / estimates.sum() + eps / n
    position = {k: i for i, k in enumerate(keys)}
    observed = np.zeros(n)
    for _ in range(draws // batch_size):
        batch = replay.sample(batch_size)
        index = np.array([position[int(k)] for k in batch.info.key])
        np.add.at(observed, index, 1)
        np.testing.assert_allclose(batch.info.probability, expected[index], rtol=1e-9)
        np.testing.assert_allclose(lp.importance_weights(batch.info).numpy(),
                                   1.0 / (n * expected[index]), rtol=1e-6)
        assert (batch.info.table_size == n).all()
    chi2 = ((observed - draws * expected) ** 2 / (draws * expected)).sum()
    assert chi2 < CHI2_23_DOF_999
    # ...and the uniform part is really there (the test can tell).
    prioritized = estimates / estimates.sum()
    assert ((observed - draws * prioritized) ** 2 / (draws * prioritized)).sum() > (
        CHI2_23_DOF_999)
    server.stop()


def test_capacity_keeps_the_newest_items():
    server, client = _server(capacity=10, slack=20)
    _write(client, [(0, x) for x in range(25)])
    replay = lp.LazyReplay(client, capacity=10, seed=3)
    replay.sync()
    assert [x for x in range(25) if replay.lazy.find(0, x) is not None] == list(range(15, 25))
    info = client.server_info()
    assert info[lp.LAZY_PRIORITIZED].current_size == 10    # pruned items deleted there
    assert info[lp.LAZY_UNIFORM].current_size == 25        # ...and skipped here
    server.stop()


def test_uniform_draws_of_pruned_items_are_rejected():
    server, client = _server(capacity=10, slack=20)
    _write(client, [(0, x) for x in range(25)])
    replay = lp.LazyReplay(client, capacity=10, epsilon=0.5, seed=5)
    for _ in range(5):
        batch = replay.sample(40)
        assert set(batch.data[lp.POSITION].tolist()) <= set(range(15, 25))
    server.stop()


def test_capacity_must_fit_in_the_tables():
    server, client = _server(capacity=10, slack=2)
    with pytest.raises(ValueError, match='max_size'):
        lp.LazyReplay(client, capacity=12)
    server.stop()


def test_priorities_changed_behind_its_back_are_reported():
    server, client = _server(capacity=10, slack=2)
    _write(client, [(0, x) for x in range(10)])
    replay = lp.LazyReplay(client, capacity=10, seed=6)
    replay.sync()
    client.mutate_priorities(lp.LAZY_PRIORITIZED, updates={replay.lazy.find(0, 3): 7.0})
    with pytest.raises(RuntimeError, match='another process changed'):
        replay.sample(4)
    server.stop()


# ---- a replay server restarted from its checkpoint ------------------------------------------

def _checkpointed_server(directory, port=None):
    """Lazy tables with the snapshot tables, restoring the newest Reverb checkpoint in
    `directory` (the replay role's server after a restart)."""
    server = reverb.Server(
        lp.lazy_tables(SIGNATURE, capacity=100, slack=50) + lp.snapshot_tables(),
        port=port, checkpointer=reverb.checkpointers.DefaultCheckpointer(path=str(directory)))
    client = reverb.Client(f'localhost:{server.port}')
    for _ in range(20):   # gRPC may first answer on the stopped server's closed socket
        try:
            client.server_info(timeout=5)
            break
        except RuntimeError:
            time.sleep(0.1)
    return server, client


def _train(replay, rng, count=3):
    """A learning step's write-back: new priorities for `count` registered items."""
    keys = replay.lazy.state()['keys'][:count]
    replay.update(keys, rng.uniform(0.5, 3.0, size=len(keys)))


def _saved_replay(client, identities, rng):
    """A learner's LazyReplay that registered `identities`, trained on some of them, saved its
    bookkeeping and had the server checkpoint it."""
    _write(client, identities)
    replay = lp.LazyReplay(client, capacity=100, seed=0, snapshot_table=lp.LAZY_SNAPSHOT)
    replay.sync()
    _train(replay, rng)
    replay.save()
    client.checkpoint()
    return replay


def test_a_restarted_server_is_met_by_its_checkpoints_snapshot(tmp_path):
    """The server goes back to its checkpoint while the learner's bookkeeping has moved on,
    and actors write to it before the learner draws: the learner takes the checkpoint's
    snapshot without registering anything into the old tables, and goes on."""
    rng = np.random.default_rng(7)
    server, client = _checkpointed_server(tmp_path)
    replay = _saved_replay(client, [(s, x) for s in (0, 1) for x in range(10)], rng)
    saved = {k: replay.lazy.assigned(k) for k in replay.lazy.estimates()}
    _write(client, [(0, x) for x in range(10, 16)])   # registered and trained after it
    replay.sample(4)
    _train(replay, rng, count=8)
    port = server.port
    server.stop()
    server, client = _checkpointed_server(tmp_path, port)
    _write(client, [(1, x) for x in range(10, 13)])   # actors reconnect first
    batch = replay.sample(4)
    assert len(replay.lazy) == 23                     # the checkpoint's 20 and the 3 new ones
    assert {k: replay.lazy.assigned(k) for k in saved} == saved
    assert all(int(k) in replay.lazy for k in batch.info.key)
    _check_server(client, replay.lazy)
    server.stop()


class _ServerDiesAtRegistration(reverb.Client):
    """A real client of a real server that, once `armed`, is stopped while the learner's
    registration is on its way, and restarted from its checkpoint on the same port (the replay
    role's restart). `in_flight`: the call was on the wire, and gRPC reports what it reported
    in such a run ('Connection reset by peer'); otherwise the call is made to the stopped
    server, which Reverb's client holds until the restarted server takes it."""

    def __init__(self, server, directory, in_flight):
        super().__init__(f'localhost:{server.port}')
        self.server, self._directory, self._in_flight = server, directory, in_flight
        self.armed = False

    def _restart(self, port):
        self.server, _ = _checkpointed_server(self._directory, port)

    def mutate_priorities(self, table, updates=None, deletes=None):
        if not (self.armed and deletes is not None):   # a write-back, or not yet
            return super().mutate_priorities(table, updates=updates, deletes=deletes)
        self.armed = False
        port = self.server.port
        self.server.stop()
        if self._in_flight:
            self._restart(port)
            raise RuntimeError('Connection reset by peer')
        restart = threading.Timer(1.0, self._restart, [port])
        restart.start()
        try:
            return super().mutate_priorities(table, updates=updates, deletes=deletes)
        finally:
            restart.join()


@pytest.mark.parametrize('in_flight', [True, False])
def test_a_registration_the_dying_server_did_not_take_is_met_by_its_snapshot(tmp_path,
                                                                             in_flight):
    """The server dies while registrations are written (the bookkeeping has them, its
    checkpoint not): `sample` waits for the restarted server and takes its checkpoint's
    snapshot, and the learner goes on."""
    rng = np.random.default_rng(9)
    server, _ = _checkpointed_server(tmp_path)
    client = _ServerDiesAtRegistration(server, tmp_path, in_flight)
    replay = _saved_replay(client, [(0, x) for x in range(10)], rng)
    saved = replay.lazy.estimates()
    _write(client, [(1, x) for x in range(5)])       # pending: not in the checkpoint
    client.armed = True
    batch = replay.sample(4)
    assert not client.armed                          # the server did die at registration
    assert replay.lazy.estimates() == pytest.approx(saved)
    assert all(int(k) in replay.lazy for k in batch.info.key)
    _check_server(client, replay.lazy)
    client.server.stop()


def test_a_snapshot_written_into_a_restarted_server_is_passed_over(tmp_path):
    """A restart between `save`'s check and its write leaves the restored server a snapshot
    newer than its tables: the next reload takes the older snapshot, which matches them, and
    the next save keeps the matching one."""
    rng = np.random.default_rng(8)
    server, client = _checkpointed_server(tmp_path)
    replay = _saved_replay(client, [(0, x) for x in range(12)], rng)
    expected = replay.lazy.estimates()
    _write(client, [(0, x) for x in range(12, 20)])
    replay.sync()
    _train(replay, rng, count=6)
    port = server.port
    server.stop()
    server, client = _checkpointed_server(tmp_path, port)
    # What the race leaves: the moved-on bookkeeping, as the next save writes it (its priority
    # the next sequence number, the checkpoint's save being the first).
    client.insert(replay.lazy.state(),
                  priorities={table.name: 2.0 for table in lp.snapshot_tables()})
    client.checkpoint()
    for _ in range(2):                # from the live server, then from its new checkpoint
        restored = lp.LazyReplay(client, capacity=100, snapshot_table=lp.LAZY_SNAPSHOT)
        assert restored.lazy.estimates() == pytest.approx(expected)
        restored.save()
        client.checkpoint()
        server.stop()
        server, client = _checkpointed_server(tmp_path, port)
    server.stop()


def test_save_refuses_tables_that_moved_on(tmp_path):
    """A snapshot is written only of tables that match the bookkeeping."""
    server, client = _checkpointed_server(tmp_path)
    _write(client, [(0, x) for x in range(12)])
    replay = lp.LazyReplay(client, capacity=100, seed=0, snapshot_table=lp.LAZY_SNAPSHOT)
    replay.sync()
    client.mutate_priorities(lp.LAZY_PRIORITIZED, updates={replay.lazy.find(0, 3): 7.0})
    with pytest.raises(lp.ReplayDivergedError):
        replay.save()
    assert client.server_info()[lp.LAZY_SNAPSHOT].current_size == 0
    server.stop()


class _ServerRestartsAtRegistration(_ServerDiesAtRegistration):
    """As `_ServerDiesAtRegistration` (in flight), and the restarting server fails the next two
    calls for its tables with `error`, as runs of tests/test_reactor_launch.py saw: gRPC's
    'Transport closed', or Reverb's DeadlineExceededError where the server, still loading its
    checkpoint, did not answer within the call's 5 s."""

    def __init__(self, server, directory, error):
        super().__init__(server, directory, in_flight=True)
        self.closing = 0
        self._error = error

    def mutate_priorities(self, table, updates=None, deletes=None):
        if self.armed and deletes is not None:
            self.closing = 2
        return super().mutate_priorities(table, updates=updates, deletes=deletes)

    def server_info(self, timeout=None):
        if self.closing:
            self.closing -= 1
            raise self._error
        return super().server_info(timeout=timeout)


@pytest.mark.parametrize('error', [
    RuntimeError('Transport closed'),
    reverb.errors.DeadlineExceededError(
        'ServerInfo call did not complete within provided timeout of 5s')])
def test_a_restarting_server_that_fails_calls_is_waited_for(tmp_path, error):
    """The reload after a registration the dying server did not take waits through the
    restarting server's failed calls, then takes the checkpoint's snapshot."""
    rng = np.random.default_rng(10)
    server, _ = _checkpointed_server(tmp_path)
    client = _ServerRestartsAtRegistration(server, tmp_path, error)
    replay = _saved_replay(client, [(0, x) for x in range(10)], rng)
    saved = replay.lazy.estimates()
    _write(client, [(1, x) for x in range(5)])
    client.armed = True
    batch = replay.sample(4)
    assert client.closing == 0                       # both closed calls were met
    assert replay.lazy.estimates() == pytest.approx(saved)
    assert all(int(k) in replay.lazy for k in batch.info.key)
    client.server.stop()
