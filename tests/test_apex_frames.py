"""Ape-X replay stores each frame once: on a real Atari game run by the real actor, the N-step
transitions the learner rebuilds from the stored frames equal, element for element, the
two-stack transitions (o_t, a_t, rewards, discounts, o_{t+N}) of the paper's definition, with
episodes ending inside the N steps by termination (lost lives, game over) and time limits."""
import numpy as np
import pytest
import reverb

import recorded_steps
from agents.apex import config as apex_config
from agents.core import transitions
from agents.ops import replay
from launch import experiments
from reverb_tables import tables


def _two_stack_transitions(stream, n, gamma, clip):
    """Each written transition by walking the stream: the window stops at a termination (its
    discount 0 is kept) or before a mask-0 step (the final observation is bootstrapped from);
    rewards clipped, padding reward 0 and discount 1; transitions still open are not written."""
    out = []
    for t, step in enumerate(stream):
        if step['mask'] == 0:
            continue
        rewards, discounts = np.zeros(n, np.float32), np.ones(n, np.float32)
        bootstrap = None
        for k in range(n):
            if t + k == len(stream):
                return out
            s = stream[t + k]
            if s['mask'] == 0:
                bootstrap = s
                break
            rewards[k] = np.clip(s['reward'], -clip, clip)
            discounts[k] = np.float32(gamma) * s['discount']
            if s['discount'] == 0:
                bootstrap = s
                break
        if bootstrap is None:
            if t + n == len(stream):
                return out
            bootstrap = stream[t + n]
        out.append({'observation': step['observation'], 'action': step['action'],
                    'reward': rewards, 'discount': discounts,
                    'next_observation': bootstrap['observation'],
                    'q_value': step['q_value'],
                    'bootstrap_value': bootstrap['bootstrap_value']})
    return out


@pytest.mark.parametrize('max_episode_frames, kinds', [
    (400, {'time limit', 'termination', 'reset with zeros', 'stack carried over'}),
    (100_000, {'termination', 'reset with zeros', 'stack carried over'})])
def test_rebuilt_transitions_equal_the_two_stack_transitions(max_episode_frames, kinds):
    c = apex_config.tiny_dqn(apex_config.ApexDQNAtari())
    c = c.replace(game='breakout', life_loss_ends_episode=True, noop_max=3,
                 max_episode_frames=max_episode_frames, envs_per_actor=1, batch_size=1,
                 replay_readers=1)
    builder = experiments.get('apex_dqn_atari').builder(c)
    signature = transitions.transition_signature(builder.step_spec(), c.n_step, builder.frame_stack)
    # A queue with the table's signature returns the items in the order they were written.
    server = reverb.Server([reverb.Table.queue(tables.PRIORITIZED, 1000, signature=signature),
                            tables.variables_table(), tables.episode_stats_table()])
    address = f'localhost:{server.port}'
    client = reverb.Client(address)
    recording = recorded_steps.act(builder, client, update_period=100, num_steps=450)
    recording.adder.flush()
    assert kinds <= recorded_steps.episode_kinds(recording.steps)

    expected = _two_stack_transitions(recording.steps, c.n_step, c.discount, c.reward_clip)
    assert client.server_info()[tables.PRIORITIZED].current_size == len(expected)
    dataset = builder.dataset(address, learner_id=0)
    for reference in expected:
        sample = next(dataset)
        data = {k: v.numpy()[0] for k, v in transitions.stacked_transitions(sample.data).items()}
        for name in ('observation', 'action', 'reward', 'discount', 'next_observation'):
            np.testing.assert_array_equal(data[name], reference[name])
        target = float(reference['bootstrap_value'])   # the actor's G_t, from the last step
        for r, d in zip(reference['reward'][::-1], reference['discount'][::-1]):
            target = r + d * target
        assert float(sample.info.priority[0]) == pytest.approx(
            abs(target - float(reference['q_value'])) + replay.MIN_PRIORITY, abs=1e-5)
    server.stop()

