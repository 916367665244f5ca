"""LASER: its paper config, batches that mix online and replayed unrolls from a real actor, the
trust region inside the loss, and a 2-agent sweep sharing one replay on real Breakout."""
import csv
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import datasets
from agents.core import variables
from agents.impala import config as impala_config
from agents.laser import config as laser_config
from agents.laser import learning
from agents.ops import policy_gradient
from launch import experiments
from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import children
from launch_processes import wait_for


def test_paper_config_is_sec_5_1():
    c = laser_config.LaserAtari()
    assert (c.torso, c.channel_multiplier, c.discount, c.unroll_length) == ('deep', 4, 0.995, 19)
    assert c.max_grad_norm == 0.0                       # "we do not use gradient clipping"
    assert impala_config.replay_batch_size(c) == 123 and c.batch_size == 128   # 96% of 128
    assert laser_config.replay_capacity(c) == 526_316   # 10M observations, 19 new per unroll
    assert c.replay_shared and c.trust_region and c.noop_max == 37
    d = laser_config.LaserDmLab30()
    assert (d.unroll_length, d.replay_proportion, d.rmsprop_epsilon) == (79, 0.875, 0.1)
    c = laser_config.check(c)


def test_atari_presets_play_whole_games_at_impalas_quick_epsilon():
    """App. C: an episode is a game, a lost life zeroing the discount inside it; the LSTM's
    quick preset takes RMSProp epsilon 1e-4 (issue 57: 1e-5 let its cells run away, 1e-3 damps
    its body's steps), the feed-forward net's IMPALA's quick preset's 1e-5, and DMLab-30's
    quick keeps 1e-3, not measured otherwise."""
    paper = laser_config.LaserAtari()
    assert (paper.life_loss_ends_episode, paper.life_loss_zero_discount) == (False, True)
    recurrent = laser_config.PRESETS['quick'](paper)
    feed_forward = laser_config.PRESETS['quick_feed_forward'](paper)
    assert (recurrent.core, recurrent.rmsprop_epsilon) == ('lstm', 1e-4)
    assert (feed_forward.core, feed_forward.rmsprop_epsilon) == ('feed_forward', 1e-5)
    assert not recurrent.life_loss_ends_episode and recurrent.life_loss_zero_discount
    dmlab = laser_config.DMLAB30_PRESETS['quick'](laser_config.LaserDmLab30())
    assert dmlab.rmsprop_epsilon == 1e-3


def _tiny(**overrides):
    c = laser_config.tiny(laser_config.LaserAtari())
    c = c.replace(game='breakout', batch_size=6, replay_proportion=0.5, queue_size=1000)
    c = c.replace(**overrides)
    c = laser_config.check(c)
    return c


@pytest.fixture(name='batch', params=['feed_forward', 'lstm'])
def mixed_batch(tmp_path, request):
    """One learner batch drawn from the tables a real actor filled, and the network."""
    # Games cut at 100 frames: 40 steps end some, whose episodes the replayed rows then walk.
    builder = experiments.get('laser_atari').builder(_tiny(core=request.param,
                                                           max_episode_frames=100))
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    network = builder.network()
    variables.VariablePusher(reverb.Client(address), network.trainable_variables).push(step=1)
    builders.make_actor(builder, address, str(tmp_path), actor_id=0).run(num_steps=40)
    batch = next(builder.dataset(address, learner_id=0))
    server.stop()
    yield builder, network, batch


def test_batches_hold_the_configured_split_and_entropy_sees_only_online(batch):
    builder, network, batch = batch
    assert batch[datasets.ORIGIN].numpy().tolist() == [0, 0, 0, 1, 1, 1]
    c = builder.config.replace(trust_region=False)
    data = datasets.time_major(batch)
    # The LSTM's replayed rows start at their episodes' first steps, from the learner's state.
    logits, values = learning.laser_learning(network, c, jit_compile=False,
                                             restarts=builder.row_restarts).outputs(data)
    _, metrics = learning.laser_loss(logits, values, data, **learning.loss_scalars(c))
    online_entropy = policy_gradient.entropy_loss(logits[:-1, :3], mask=data['mask'][:-1, :3])
    all_entropy = policy_gradient.entropy_loss(logits[:-1], mask=data['mask'][:-1])
    np.testing.assert_allclose(metrics['entropy_loss'], online_entropy, rtol=1e-6)
    assert abs(float(all_entropy) - float(online_entropy)) > 1e-3
    # The actor acted with these parameters: from the stored core state online and from the
    # episode's first step on replay (app. A.2), the learner's policy is the behaviour policy.
    assert float(metrics['behaviour_kl_online']) < 1e-6
    assert float(metrics['behaviour_kl_replay']) < 1e-6


def _loss_gradients(config, behaviour_shift, origin=(0, 0, 1, 1)):
    """Gradients of LASER's loss w.r.t. logits and values of 4 unrolls, the last two with a
    behaviour policy `behaviour_shift` away from the learner's; `origin` 1 marks a replayed
    row (by default the last two)."""
    rng = np.random.default_rng(0)
    t1, b, a = 6, 4, 3
    logits = tf.Variable(rng.normal(size=(t1, b, a)).astype(np.float32))
    values = tf.Variable(rng.normal(size=(t1, b)).astype(np.float32))
    behaviour = logits.numpy().copy()
    behaviour[:, 2:] += behaviour_shift * rng.normal(size=(t1, 2, a))
    data = {'action': tf.constant(rng.integers(a, size=(t1, b)), tf.int32),
            'behaviour_logits': tf.constant(behaviour), 'reward': tf.ones((t1, b)),
            'discount': tf.ones((t1, b)), 'mask': tf.ones((t1, b)),
            datasets.ORIGIN: tf.constant(origin, tf.int32)}
    with tf.GradientTape() as tape:
        loss, metrics = learning.laser_loss(logits, values, data,
                                             **learning.loss_scalars(config))
    return tape.gradient(loss, [logits, values]), metrics


def test_rejected_replay_contributes_to_no_loss_term():
    """Sec. 4.3: rejected transitions are left out of the policy-gradient, value and entropy
    terms; own online data (behaviour = current policy) is never rejected."""
    config = laser_config.LaserAtari().replace(trust_region_threshold=1e-3)
    (d_logits, d_values), metrics = _loss_gradients(config, behaviour_shift=3.0)
    assert float(metrics['rejected_fraction_replay']) == 1.0
    np.testing.assert_array_equal(d_logits[:-1, 2:].numpy(), 0.0)
    np.testing.assert_array_equal(d_values[:-1, 2:].numpy(), 0.0)
    assert np.abs(d_logits[:-1, :2].numpy()).min() > 0
    config = config.replace(trust_region=False)   # fig. 3's naive sharing learns from all of it
    (d_logits, _), _ = _loss_gradients(config, behaviour_shift=3.0)
    assert np.abs(d_logits[:-1, 2:].numpy()).min() > 0


def test_a_batch_without_replay_rejects_nothing():
    """With no replayed rows (`replay_proportion=0`), the rejected fraction is 0, not the 1 a
    mean over no steps once gave."""
    config = laser_config.LaserAtari().replace(trust_region_threshold=1e-3)
    _, metrics = _loss_gradients(config, behaviour_shift=3.0, origin=(0, 0, 0, 0))
    assert float(metrics['rejected_fraction_replay']) == 0.0


def _program(*args):
    return [sys.executable, '-m', 'launch.laser_atari', '--game=breakout', '--preset=tiny',
            f'--sweep=learning_rate={",".join(_RATES)}',
            '--config.replay_capacity_observations=1000000', *args]


# Two of the quick sweep's learning rates (sec. 5.1): the fewest agents that share a replay.
_RATES = ('0.0003', '0.0012')
_QUEUES = ('queue', 'queue_1')


def _inserts(address):
    info = reverb.Client(address).server_info(timeout=60)   # a server gone fails, never hangs
    return {name: info[name].rate_limiter_info.insert_stats.completed
            for name in (*_QUEUES, 'replay')}


def _replay_holds_more_than_one_agent(inserts):
    queues = [inserts[q] for q in _QUEUES]
    return min(queues) >= 3 and inserts['replay'] > max(queues)


def _network_weights(learner_dir, which):
    """The policy layer's kernel in the oldest (0) or newest (-1) kept checkpoint."""
    state = tf.train.get_checkpoint_state(os.path.join(learner_dir, 'checkpoints'))
    path = state.all_model_checkpoint_paths[which]
    (name,) = [n for n, _ in tf.train.list_variables(path)
               if 'network/_policy/' in n and '/w/' in n and 'optimizer' not in n]
    return tf.train.load_checkpoint(path).get_tensor(name)


def test_a_sweeps_agents_share_one_replay_and_resume_with_it(tmp_path):
    run_dir = str(tmp_path / 'run')
    launcher = subprocess.Popen(_program(f'--run_dir={run_dir}', '--config.total_frames=4000'),
                                cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: children(run_dir, 'replay'), 'the replay server')
        (replay,) = children(run_dir, 'replay')
        address = [a for a in replay.info['cmdline'] if a.startswith('--replay_address=')]
        address = address[0].split('=', 1)[1]
        # Each agent's unrolls go to its own queue, its finished episodes to the one replay
        # (a slot per T steps): the replay comes to hold more than any one agent wrote.
        wait_for(lambda: _replay_holds_more_than_one_agent(_inserts(address)),
                 'the replay to hold more than one agent\'s episodes')
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output
    for i, rate in enumerate(_RATES):
        learner_dir = os.path.join(run_dir, f'learner_{i}')
        assert f'[learner_{i} learning_rate={rate}] frames' in output, output
        with open(os.path.join(learner_dir, 'logs', 'learner.csv')) as f:
            rows = list(csv.DictReader(f))
        assert len({row['loss'] for row in rows}) > 1
        assert not np.array_equal(_network_weights(learner_dir, 0),
                                  _network_weights(learner_dir, -1))
    assert '| learner_0' in output and '| learning_rate | score |' in output, output

    # Resuming the sweep restores the shared replay and every member from its checkpoint.
    resumed = subprocess.run(_program(f'--run_dir={run_dir}', '--config.total_frames=4400'),
                             cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=400)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with open(os.path.join(run_dir, 'logs', 'replay.log')) as f:
        restored = re.findall(r' replay=(\d+)', f.read())
    assert len(restored) == 2 and restored[0] == '0' and int(restored[1]) > 0, restored
    for i in range(len(_RATES)):
        assert re.search(rf'\[learner_{i} [^\]]*\] resumed from .*learner_{i}/checkpoints',
                         resumed.stdout), resumed.stdout
