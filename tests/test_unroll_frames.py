"""IMPALA's and LASER's unrolls store each frame once where a replay holds them: on a real
Atari game run by the real actor, the unrolls the learner's dataset rebuilds from the stored
frames equal, element for element, the T+1 steps the actor wrote (observations as the
environment gave them, stacks of 4; the other fields unpacked from their one column), with
episodes ending inside unrolls by termination (lost lives, game over) and time limits, and the
first unroll of the actor's life starting from its first observation."""
import numpy as np
import pytest
import reverb

import recorded_steps
from agents.core import packing
from agents.core import steps
from agents.impala import config as impala_config
from launch import experiments
from reverb_tables import tables


@pytest.mark.parametrize('max_episode_frames', [400, 100_000])
def test_rebuilt_unrolls_equal_the_steps_the_actor_wrote(max_episode_frames):
    c = impala_config.tiny(impala_config.ImpalaAtari())
    c = c.replace(game='breakout', noop_max=3, max_episode_frames=max_episode_frames,
                 envs_per_actor=1, batch_size=1, unroll_length=20)
    queue_alone = experiments.get('impala_atari').builder(c)
    assert queue_alone.stored_stack == 1     # a queue alone: stacks
    # The observation and the other step fields packed in one column (agents/core/packing.py).
    assert set(queue_alone.tables()[0].make(tables.QUEUE).info.signature) == {
        'observation', packing.PACKED}
    c = c.replace(replay_proportion=0.5)                             # table 2's replay
    builder = experiments.get('impala_atari').builder(c)
    assert builder.stored_stack == 4
    signature = builder.tables()[0].make(tables.QUEUE).info.signature
    assert signature['observation'].shape[0] == c.unroll_length + 1 + 3     # frames once
    # Queues with the tables' signature return the items in the order they were written;
    # with one unroll per batch, none is drawn from replay (impala_config.replay_batch_size).
    server = reverb.Server([reverb.Table.queue(tables.QUEUE, 1000, signature=signature),
                            reverb.Table.queue(tables.REPLAY, 1000, signature=signature),
                            tables.variables_table(), tables.episode_stats_table()])
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    recording = recorded_steps.act(builder, client, update_period=c.unroll_length, num_steps=600)
    recording.adder.close()
    expected_kinds = {'termination', 'reset with zeros'} | (
        {'time limit'} if max_episode_frames == 400 else set())
    assert expected_kinds <= recorded_steps.episode_kinds(recording.steps)

    stream = recording.steps
    count = (len(stream) - 1) // c.unroll_length
    assert client.server_info()[tables.QUEUE].current_size == count
    dataset = builder.dataset(address, learner_id=0)
    for k in range(count):
        batch = next(dataset)
        assert steps.STACK_DEPTH not in batch
        unroll = stream[k * c.unroll_length:(k + 1) * c.unroll_length + 1]
        for name in ('observation', 'action', 'reward', 'discount', 'mask', 'behaviour_logits'):
            np.testing.assert_array_equal(batch[name].numpy()[0],
                                          np.stack([step[name] for step in unroll]))
    server.stop()
