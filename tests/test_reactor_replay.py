"""Reactor's replay layout (frames once, the other step fields packed in one column): what
actors write on real Atari steps comes back element for element after a Reverb checkpoint, and
a checkpoint of the earlier layout is refused in one line."""
import numpy as np
import pytest
import reverb
import tensorflow as tf
import tree

from agents.core import builders
from agents.core import steps
from agents.reactor import config as reactor_config
from agents.reactor import lazy_priorities
from benchmarks import atari_steps
from launch import experiments
from launch import runtime


def _config():
    """The tiny preset on Breakout, whose lost lives end episodes (discount 0), with a time
    limit of 40 steps (mask-0 bootstrap steps); the pace table never holds the writer."""
    c = reactor_config.check(reactor_config.tiny(reactor_config.ReactorAtari()).replace(
        game='breakout'))
    return c.replace(max_episode_frames=160, min_replay_size=10_000)


def _server(builder, checkpoint_dir):
    server = reverb.Server(builders.replay_tables(builder, 1),
                           checkpointer=reverb.checkpointers.DefaultCheckpointer(checkpoint_dir))
    return server, reverb.Client(f'localhost:{server.port}')


def test_a_restored_replay_gives_back_every_step_as_written(tmp_path):
    c = _config()
    rng = np.random.default_rng(0)
    builder = experiments.get('reactor_atari').builder(c)
    written = atari_steps.record(
        builder, 250, lambda: {'behaviour_prob': rng.uniform(size=1).astype(np.float32)},
        lambda: tf.nest.map_structure(lambda s: rng.normal(size=s.shape).astype(np.float32),
                                      builder.step_spec()[steps.CORE_STATE]))
    n = c.sequence_length
    inside = [s for t in range(len(written) - n + 1) for s in written[t:t + n - 1]]
    assert any(s['discount'] == 0 for s in inside) and any(s['mask'] == 0 for s in inside)
    server, client = _server(builder, str(tmp_path))
    adder = builder.adder(client, 0)
    for step in written:
        adder.add(step)
    adder.close()
    client.checkpoint()
    server.stop()

    restored = experiments.get('reactor_atari').builder(c)
    server, client = _server(restored, str(tmp_path))
    table = lazy_priorities.LAZY_PRIORITIZED
    count = client.server_info()[table].current_size
    assert count == len(written) - n + 1
    seen = set()
    for _ in range(count):      # each drawn item gets priority 0: every draw is a new one
        sample = next(iter(client.sample(table, 1, emit_timesteps=False)))
        client.mutate_priorities(table, updates={int(sample.info.key): 0.0})
        data = restored.packing().unpack(tree.unflatten_as(
            client.server_info()[table].signature, list(sample.data)))
        stream, position = lazy_priorities.identity(data)
        seen.add(position)
        expected = written[position:position + n]
        for field in builder.step_spec():
            if field == steps.CORE_STATE:
                for got, want in zip(tree.flatten(data[field]),
                                     tree.flatten(expected[0][field])):
                    np.testing.assert_array_equal(got, want)
            elif field in (lazy_priorities.STREAM, lazy_priorities.POSITION):
                continue
            else:
                np.testing.assert_array_equal(
                    data[field], np.stack([s[field] for s in expected]), err_msg=field)
        np.testing.assert_array_equal(data[lazy_priorities.POSITION],
                                      np.arange(position, position + n))
        assert (data[lazy_priorities.STREAM] == stream).all()
    assert seen == set(range(count))
    server.stop()


def test_a_checkpoint_of_the_earlier_layout_is_refused_in_one_line(tmp_path):
    """Items of one column per step field (the layout before packing) would reach the
    learner unreadable: the replay server refuses the checkpoint instead."""
    c = _config()
    builder = experiments.get('reactor_atari').builder(c)
    earlier = steps.trajectory_signature(builder.step_spec(), c.sequence_length)
    server = reverb.Server(
        lazy_priorities.lazy_tables(earlier, capacity=10, slack=10),
        checkpointer=reverb.checkpointers.DefaultCheckpointer(str(tmp_path)))
    reverb.Client(f'localhost:{server.port}').checkpoint()
    server.stop()
    tables = builders.replay_tables(builder, 1)
    server, client = _server(builder, str(tmp_path))
    with pytest.raises(runtime.LaunchError, match='in another layout than this code writes') as e:
        runtime.check_restored_layout(tables, client.server_info(), str(tmp_path))
    assert '\n' not in str(e.value)
    server.stop()
