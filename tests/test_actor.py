"""The shared actor with a real Atari game, a real network and a real Reverb server."""
import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import variables
from agents.impala import config as impala_config
from launch import experiments
from reverb_tables import tables

T = 5


@pytest.fixture
def setup():
    c = impala_config.tiny(impala_config.ImpalaAtari())
    c = c.replace(game='pong', unroll_length=T, envs_per_actor=1, queue_size=1000,
                 life_loss_ends_episode=False, max_episode_frames=200, noop_max=3)
    builder = experiments.get('impala_atari').builder(c)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    learner_net = builder.network()
    client = reverb.Client(address)
    variables.VariablePusher(client, learner_net.trainable_variables).push(step=1)
    yield builder, address, client, learner_net
    server.stop()


def _stream(builder, client, count):
    """The actor's step stream rebuilt from `count` unrolls (consecutive ones share a step)."""
    items = [builder.packing().unpack(next(client.sample(
        tables.QUEUE, 1, emit_timesteps=False, unpack_as_table_signature=True)).data)
        for _ in range(count)]
    for before, after in zip(items, items[1:]):
        for name in before:
            np.testing.assert_array_equal(before[name][-1], after[name][0])
    return {name: np.concatenate([items[0][name]] + [item[name][1:] for item in items[1:]])
            for name in items[0]}


def test_actor_writes_unrolls_with_time_limits_bootstrapped(setup, tmp_path):
    builder, address, client, learner_net = setup
    actor = builders.make_actor(builder, address, str(tmp_path), actor_id=3)
    actor.run(num_steps=130)
    size = client.server_info()[tables.QUEUE].current_size
    assert size >= 25   # at least 130 steps / T unrolls (plus bootstrap steps)
    stream = _stream(builder, client, size)

    # 200-frame episodes of 4-frame steps end by the time limit: discount 1, then a mask-0
    # step with the final observation, then the first observation of a fresh game.
    ends = np.flatnonzero(stream['mask'] == 0)
    assert len(ends) >= 2
    for i in ends:
        assert stream['discount'][i - 1] == 1.0
        assert stream['reward'][i] == 0.0 and stream['discount'][i] == 0.0
        assert np.any(stream['observation'][i] != stream['observation'][i + 1])
        # A real reset zero-fills the frame stack but for the newest frame.
        assert not stream['observation'][i + 1][..., :-1].any()
    assert np.all(stream['discount'][stream['mask'] == 1] == 1.0)  # Pong: no game over here

    # Behaviour logits are the learner's network (parameters pulled) at the stored observation.
    real = np.flatnonzero(stream['mask'] == 1)[:8]
    logits = learner_net(tf.constant(stream['observation'][real])).logits.numpy()
    np.testing.assert_allclose(stream['behaviour_logits'][real], logits, rtol=1e-4, atol=1e-4)

    # Each whole game is reported once, with its raw score, to the episode-stats table.
    stats = client.server_info()[tables.EPISODE_STATS].current_size
    assert stats == len(ends)


def test_actor_acts_with_the_learner_parameters(setup, tmp_path):
    builder, address, _, learner_net = setup
    actor = builders.make_actor(builder, address, str(tmp_path), actor_id=0)
    actor_vars = actor.policy.variables
    assert any(np.any(a.numpy() != b.numpy())   # independently initialised...
               for a, b in zip(actor_vars, learner_net.trainable_variables))
    actor.run(num_steps=1)
    for a, b in zip(actor_vars, learner_net.trainable_variables):  # ...until it pulls
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_experts_actors_step_16_games_and_the_quick_presets_8():
    """16 games per batched call at the paper preset (fewer inference calls per frame,
    benchmarks/README.md, "Games per actor"); 8 at the quick preset, where an actor's 16 unrolls
    would be 4 of its updates: the policy's lag stays at most 2 updates per actor's pull."""
    paper = impala_config.ImpalaAtari()
    quick = impala_config.quick(paper)
    assert (paper.envs_per_actor, quick.envs_per_actor) == (16, 8)
    for c in (paper, quick):
        assert c.envs_per_actor / c.batch_size <= 2
