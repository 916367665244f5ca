"""IMPALA with figure 3's LSTM core: the actor's step-by-step acting and the learner's unroll
from the stored state agree, on real Pong unrolls with episode starts inside them."""
import dataclasses

import dm_env
import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import steps
from agents.core import variables
from agents.impala import config as impala_config
from agents.core import datasets
from agents.impala import learning
from launch import evaluate
from launch import experiments
from paper_tables import protocols
from reverb_tables import tables

T = 5


def _builder(**overrides):
    c = impala_config.tiny(impala_config.ImpalaAtari())
    c = c.replace(game='pong', core='lstm', unroll_length=T, envs_per_actor=2, queue_size=1000,
                 life_loss_ends_episode=False, max_episode_frames=120, noop_max=3)
    c = c.replace(**overrides)
    c = impala_config.check(c)
    return experiments.get('impala_atari').builder(c)


@pytest.fixture(name='written')
def written_unrolls(tmp_path):
    """Unrolls a real actor wrote with the learner's parameters, and that network."""
    builder = _builder()
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    network = builder.network()
    variables.VariablePusher(client, network.trainable_variables).push(step=1)
    builders.make_actor(builder, address, str(tmp_path), actor_id=0).run(num_steps=80)
    size = client.server_info()[tables.QUEUE].current_size
    items = [builder.packing().unpack(next(client.sample(
        tables.QUEUE, 1, emit_timesteps=False, unpack_as_table_signature=True)).data)
        for _ in range(size)]
    server.stop()
    yield builder, network, items


def _batch(items):
    return tf.nest.map_structure(lambda *xs: tf.constant(np.stack(xs)), *items)


def test_learner_unroll_equals_the_actors_step_by_step_outputs(written):
    _, network, items = written
    batch = _batch(items)
    first = batch['first'].numpy()
    # Episodes of 30 steps in unrolls of 6: some unrolls have an episode start after step 0.
    assert first[:, 1:].any() and (batch['mask'].numpy() == 0).any()
    logits, _ = learning.network_outputs(network, datasets.time_major(batch))
    logits = tf.transpose(logits, [1, 0, 2]).numpy()
    real = batch['mask'].numpy() == 1      # mask-0 steps hold no behaviour logits
    np.testing.assert_allclose(logits[real], batch['behaviour_logits'].numpy()[real],
                               rtol=1e-5, atol=1e-5)


def test_state_is_stored_once_per_unroll_and_continues_across_unrolls(written):
    _, network, items = written
    state = items[0][steps.CORE_STATE]
    assert state.hidden.shape == (256,) and state.cell.shape == (256,)
    # The state stored with an unroll is the state the previous unroll of the same environment
    # ends in (consecutive unrolls share a step): rerun unroll 0 and compare with unroll j.
    batch = _batch(items)
    data = datasets.time_major(batch)
    unroll_data = tf.nest.map_structure(lambda x: x[:-1], {
        k: v for k, v in data.items() if k != steps.CORE_STATE})
    _, end_states = network.unroll(unroll_data['observation'], unroll_data['prev_action'],
                                   unroll_data['prev_reward'], None, unroll_data['first'],
                                   data[steps.CORE_STATE])
    matched = 0
    for i, item in enumerate(items):
        for j, later in enumerate(items):
            if j > i and np.array_equal(item['observation'][-1], later['observation'][0]) \
                    and item['first'][-1] == later['first'][0] and not later['first'][0]:
                np.testing.assert_allclose(end_states.hidden[i], later[steps.CORE_STATE].hidden,
                                           rtol=1e-5, atol=1e-5)
                matched += 1
                break
    assert matched >= 4


def test_a_reset_at_first_ignores_the_state_before_it():
    builder = _builder()
    policy = builder.evaluation_policy(builder.network())
    rng = np.random.default_rng(0)
    observation = rng.integers(0, 255, (2, 84, 84, 4), np.uint8)
    inputs = steps.PolicyInputs(observation, np.array([1, 2], np.int32),
                                np.array([0.5, -1.0], np.float32), np.array([True, False]))
    noise = tf.nest.map_structure(lambda s: rng.normal(size=s.shape).astype(np.float32),
                                  policy.initial_state(2))
    _, from_noise, _ = policy.select_actions(inputs, noise)
    _, from_zero, _ = policy.select_actions(inputs, policy.initial_state(2))
    logits = from_noise['behaviour_logits']
    np.testing.assert_allclose(logits[0], from_zero['behaviour_logits'][0], atol=1e-6)
    assert np.abs(logits[1] - from_zero['behaviour_logits'][1]).max() > 1e-4


def test_step_inputs_restart_at_episode_starts():
    spec = tf.TensorSpec([], tf.int32)
    start = dm_env.restart(np.zeros(2))
    inputs = steps.StepInputs([start, start], spec)
    assert inputs.batch().first.all()
    inputs.advance(0, 3, dm_env.transition(1.5, np.ones(2)))
    inputs.advance(1, 4, dm_env.restart(np.ones(2)))
    batch = inputs.batch()
    assert list(batch.first) == [False, True]
    assert list(batch.prev_action) == [3, 0] and list(batch.prev_reward) == [1.5, 0.0]


def test_evaluation_runs_a_recurrent_policy_through_whole_episodes():
    builder = _builder()
    protocol = dataclasses.replace(protocols.get_protocol('impala_atari_noop'),
                                   max_episode_frames=400)
    results = evaluate.run_episodes(builder, builder.network(), protocol, episodes=3, seed=0,
                                    parallel=2)
    assert len(results) == 3 and all(0 < frames <= 403 for _, frames in results)
