"""Ape-X replay on a real loopback Reverb server: proportional sampling, priority write-back,
FIFO and prioritized eviction, and the actors' N-step transitions with initial priorities."""
import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import transitions
from agents.ops import replay
from agents.ops import value_learning
from reverb_tables import tables

STEP_SPEC = {'observation': tf.TensorSpec([2], tf.float32), 'action': tf.TensorSpec([], tf.int32)}
N, GAMMA = 3, 0.9
ALPHA = 0.6
SIGNATURE = transitions.transition_signature(STEP_SPEC, N)


def _transition(i):
    return {'frames': np.full((1 + N, 2), i, np.float32), 'action': np.int32(i),
            'reward': np.zeros(N, np.float32), 'discount': np.ones(N, np.float32),
            'horizon': np.int32(N)}


def _server(**kwargs):
    defaults = dict(max_size=1000, priority_exponent=ALPHA, min_size_to_sample=1)
    return reverb.Server([tables.prioritized_table(SIGNATURE, **{**defaults, **kwargs})])


def _insert(client, priorities):
    """Items as the adder writes them: one transition each, no time axis."""
    with client.trajectory_writer(num_keep_alive_refs=1) as writer:
        for i, p in enumerate(priorities):
            writer.append(_transition(i))
            writer.create_item(tables.PRIORITIZED, priority=float(p),
                               trajectory={k: v[-1] for k, v in writer.history.items()})
            writer.flush(timeout_ms=10_000)   # a throttled insert fails, never hangs


def _sample_counts(client, items, draws):
    counts = np.zeros(items)
    probabilities = {}
    for sample in client.sample(tables.PRIORITIZED, draws, emit_timesteps=False,
                                unpack_as_table_signature=True):
        i = int(sample.data['action'])
        counts[i] += 1
        probabilities[i] = float(sample.info.probability)
    return counts, probabilities


def _chi_square(counts, expected_probabilities):
    expected = counts.sum() * expected_probabilities
    return float(((counts - expected) ** 2 / expected).sum())


# The 1 - 1e-6 quantile of chi-square with 5 degrees of freedom: a correct sampler fails 1 in a
# million. Reverb's sampler is not seeded, so a 1-in-1000 bound failed CI once (25.98); a wrong
# law still lands in the thousands (about 1585 for p_i in place of p_i^alpha, 3052 unmutated).
CHI2_5_DOF = 35.89


def test_samples_in_proportion_to_priority_to_the_alpha():
    priorities = np.array([0.05, 0.3, 1.0, 2.0, 5.0, 12.0])
    server = _server()
    client = reverb.Client(f'localhost:{server.port}')
    _insert(client, priorities)
    counts, returned = _sample_counts(client, len(priorities), draws=6000)
    expected = priorities ** ALPHA / np.sum(priorities ** ALPHA)
    assert _chi_square(counts, expected) < CHI2_5_DOF
    # ...and not merely in proportion to the priority itself (the test can tell).
    assert _chi_square(counts, priorities / priorities.sum()) > CHI2_5_DOF
    # The probabilities Reverb returns (the importance weights' input) are P(i).
    for i, p in returned.items():
        assert p == pytest.approx(expected[i], rel=1e-5)
    server.stop()


def test_mutated_priorities_change_the_sampling_distribution():
    server = _server()
    client = reverb.Client(f'localhost:{server.port}')
    _insert(client, np.ones(6))
    keys = {}
    for sample in client.sample(tables.PRIORITIZED, 200, emit_timesteps=False,
                                unpack_as_table_signature=True):
        keys[int(sample.data['action'])] = int(sample.info.key)
    assert len(keys) == 6
    new = np.array([8.0, 0.1, 1.0, 3.0, 0.5, 2.0])
    client.mutate_priorities(tables.PRIORITIZED, updates={keys[i]: float(new[i])
                                                          for i in range(6)})
    counts, returned = _sample_counts(client, 6, draws=6000)
    expected = new ** ALPHA / np.sum(new ** ALPHA)
    assert _chi_square(counts, expected) < CHI2_5_DOF
    assert _chi_square(counts, np.full(6, 1 / 6)) > CHI2_5_DOF   # not the priorities of before
    assert returned[0] == pytest.approx(expected[0], rel=1e-5)
    server.stop()


def test_fifo_removal_keeps_the_newest():
    server = _server(max_size=10)
    client = reverb.Client(f'localhost:{server.port}')
    _insert(client, np.linspace(10.0, 0.1, 30))   # the oldest have the highest priority
    assert client.server_info()[tables.PRIORITIZED].current_size == 10
    counts, _ = _sample_counts(client, 30, draws=500)
    assert set(np.flatnonzero(counts)) == set(range(20, 30))
    server.stop()


def test_prioritized_eviction_removes_low_priorities_first():
    server = _server(max_size=50, eviction_exponent=-0.4)
    client = reverb.Client(f'localhost:{server.port}')
    # Alternating low and high priorities: eviction weights differ by (1e5)^0.4 = 100x.
    _insert(client, [1e-3 if i % 2 else 100.0 for i in range(200)])
    counts, _ = _sample_counts(client, 200, draws=3000)
    survivors = np.flatnonzero(counts)
    assert len(survivors) >= 40
    assert np.mean(survivors % 2 == 0) > 0.9
    server.stop()


def test_learner_waits_for_the_minimum_size():
    server = _server(min_size_to_sample=5)
    client = reverb.Client(f'localhost:{server.port}')
    _insert(client, np.ones(4))
    dataset = reverb.TrajectoryDataset.from_table_signature(
        server_address=f'localhost:{server.port}', table=tables.PRIORITIZED,
        max_in_flight_samples_per_worker=1, rate_limiter_timeout_ms=300)
    with pytest.raises(StopIteration):   # timed out: the rate limiter holds the sample
        next(iter(dataset))
    _insert(client, np.ones(1))
    assert next(iter(dataset)).data['frames'].shape == (1 + N, 2)
    server.stop()


def test_samples_per_insert_makes_the_actors_wait_for_the_learner():
    """Past the minimum size, inserts run at most the tolerance ahead of samples / ratio."""
    server = _server(min_size_to_sample=10, samples_per_insert=4.0)
    client = reverb.Client(f'localhost:{server.port}')
    info = client.server_info()[tables.PRIORITIZED].rate_limiter_info
    assert info.samples_per_insert == 4.0
    tolerance = (info.max_diff - info.min_diff) / 2 / 4.0     # in inserted items
    _insert(client, np.ones(10 + int(tolerance)))             # stage 1, then the tolerance
    writer = client.trajectory_writer(num_keep_alive_refs=1)
    writer.append(_transition(0))
    writer.create_item(tables.PRIORITIZED, priority=1.0,
                       trajectory={k: v[-1] for k, v in writer.history.items()})
    with pytest.raises(reverb.errors.DeadlineExceededError):
        writer.flush(timeout_ms=500)                          # the learner is behind: it waits
    _sample_counts(client, 20, draws=4)                       # one insert's worth of samples
    writer.flush(timeout_ms=5_000)
    writer.close()
    assert client.server_info()[tables.PRIORITIZED].current_size == 11 + int(tolerance)
    server.stop()


def test_unthrottled_replay_never_makes_the_actors_wait():
    server = _server(min_size_to_sample=10)
    client = reverb.Client(f'localhost:{server.port}')
    _insert(client, np.ones(200))                             # nothing is ever sampled
    assert client.server_info()[tables.PRIORITIZED].current_size == 200
    server.stop()


# ---- the actor's N-step adder --------------------------------------------------------------

def _stream(rng):
    """Steps as the shared actor writes them: three episodes, ending by termination, by a
    time-limit cut (then a mask-0 step), and by termination after one step."""
    steps = []
    t = 0
    for length, end in [(7, 'terminal'), (5, 'cut'), (1, 'terminal'), (4, 'open')]:
        for k in range(length):
            last = k == length - 1
            steps.append({
                'observation': np.array([t, 0], np.float32), 'action': np.int32(t),
                'reward': np.float32(rng.normal() * 2), 'mask': np.float32(1),
                'discount': np.float32(0.0 if last and end == 'terminal' else 1.0),
                'q_value': np.float32(rng.normal()),
                'bootstrap_value': np.float32(rng.normal())})
            t += 1
        if end == 'cut':
            steps.append({'observation': np.array([t, 1], np.float32), 'action': np.int32(0),
                          'reward': np.float32(0), 'discount': np.float32(0),
                          'mask': np.float32(0), 'q_value': np.float32(0),
                          'bootstrap_value': np.float32(0)})
            t += 1
    return steps


def _reference(steps, reward_clip):
    """Each real step's transition from the paper's definition, by walking the stream:
    (t, sum_k gamma^k R_{t+k+1}, gamma^m or 0 if terminated, the step bootstrapped from)."""
    out = []
    for t, step in enumerate(steps):
        if step['mask'] == 0:
            continue
        partial, scale, k = 0.0, 1.0, t
        while True:
            partial += scale * float(np.clip(steps[k]['reward'], -reward_clip, reward_clip))
            if steps[k]['discount'] == 0:                # termination inside the N steps
                out.append((t, partial, 0.0, steps[k]))
                break
            scale *= GAMMA
            k += 1
            if k == len(steps):
                return out                               # episode still running: not written
            if steps[k]['mask'] == 0 or k - t == N:      # cut, or N steps done
                out.append((t, partial, scale, steps[k]))
                break
    return out


@pytest.mark.parametrize('batch_size', [1, 4])
def test_adder_writes_n_step_transitions_with_initial_priorities(batch_size):
    server = reverb.Server([reverb.Table.queue('transitions', 100, signature=SIGNATURE)])
    client = reverb.Client(f'localhost:{server.port}')
    adder = transitions.NStepTransitionAdder(client, 'transitions', n_step=N, discount=GAMMA,
                                        batch_size=batch_size, reward_clip=1.0)
    steps = _stream(np.random.default_rng(0))
    for step in steps:
        adder.add(step)
    adder.flush()
    expected = _reference(steps, reward_clip=1.0)
    size = client.server_info()['transitions'].current_size
    assert size == len(expected) == 7 + 5 + 1 + (4 - N)
    rng = np.random.default_rng(1)
    for t, partial, scale, bootstrap_step in expected:
        sample = next(client.sample('transitions', 1, emit_timesteps=False,
                                    unpack_as_table_signature=True))
        data = transitions.stacked_transitions({k: v[None] for k, v in sample.data.items()})
        data = {k: np.asarray(v)[0] for k, v in data.items()}
        assert int(data['action']) == t
        np.testing.assert_array_equal(data['observation'], steps[t]['observation'])
        if scale:
            np.testing.assert_array_equal(data['next_observation'],
                                          bootstrap_step['observation'])
        # Initial priority: |G - q(o_t, a_t)| bootstrapped from the actor's own value.
        actor_target = partial + scale * float(bootstrap_step['bootstrap_value'])
        assert float(sample.info.priority) == pytest.approx(
            abs(actor_target - float(steps[t]['q_value'])) + replay.MIN_PRIORITY, abs=1e-5)
        # The learner's target from the stored rewards and per-step discounts, bootstrapped
        # from whatever its network says at next_observation.
        value = rng.normal()
        learner_target = value_learning.n_step_return(
            data['reward'][None], data['discount'][None], np.float32([value]))
        assert float(learner_target[0]) == pytest.approx(partial + scale * value, abs=1e-5)
    adder.close()
    server.stop()


def test_adder_refuses_a_recurrent_core_state():
    server = reverb.Server([reverb.Table.queue('transitions', 100, signature=SIGNATURE)])
    adder = transitions.NStepTransitionAdder(reverb.Client(f'localhost:{server.port}'),
                                        'transitions', n_step=N, discount=GAMMA, batch_size=1)
    step = dict(_stream(np.random.default_rng(0))[0], core_state=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match='needs a SequenceAdder'):
        adder.add(step)
    server.stop()
