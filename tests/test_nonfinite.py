"""Numerical faults: a learner skips non-finite updates, counts them, and after too many in a
row stops with one line, leaving its last good checkpoint the newest; the launcher does not
restart it."""
import csv
import os
import sys

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import learner as learner_lib
from agents.core import transitions
from agents.impala import config as impala_config
from launch import experiments
from launch import runtime
from tiny_learner import batch as _batch
from tiny_learner import learner as _learner


def test_nonfinite_updates_are_skipped_then_stop_the_learner_without_a_checkpoint(tmp_path):
    c = impala_config.tiny(impala_config.ImpalaAtari())
    c = c.replace(game='pong', reward_clip=0.0, max_nonfinite_updates=3, batch_size=2)
    builder = experiments.get('impala_atari').builder(c)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    rng = np.random.default_rng(0)
    run_dir = str(tmp_path)
    _, good = _learner(builder, address, run_dir, [_batch(builder, rng, 1.0) for _ in range(2)])
    good.run(max_steps=2)
    saved = tf.train.latest_checkpoint(os.path.join(run_dir, 'checkpoints'))
    assert saved
    good.release_lock()   # as if its process had ended

    # One bad batch between good ones is skipped and counted; three in a row stop it.
    batches = [_batch(builder, rng, r) for r in (float('inf'), 1.0, float('nan'), 1.0)]
    batches += [_batch(builder, rng, float('inf')) for _ in range(3)]
    state, learner = _learner(builder, address, run_dir, batches)
    with pytest.raises(learner_lib.NonFiniteError,
                       match='3 updates in a row after step 4 had a non-finite loss'):
        learner.run()
    server.stop()
    assert int(state.step.numpy()) == 4          # 2 restored + the 2 good batches
    assert tf.train.latest_checkpoint(os.path.join(run_dir, 'checkpoints')) == saved
    for variable in state.network.trainable_variables:
        assert np.isfinite(variable.numpy()).all()
    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        counts = [int(row['nonfinite_updates']) for row in csv.DictReader(f)]
    assert counts[-1] >= 2 and counts == sorted(counts)


def test_the_launcher_does_not_restart_a_learner_that_stopped_on_purpose(tmp_path):
    def child(role, name, console=False, extra=()):
        del role, console, extra
        code = runtime.FATAL_EXIT_CODE if name == 'learner' else 0
        return runtime.LocalProcess(
            name, [sys.executable, '-c', f'import sys; print("error: why"); sys.exit({code})'],
            str(tmp_path / f'{name}.log'), console=False)

    learner = runtime.SupervisedLearner(0, 1, 0, child)
    learner.process.popen.wait()
    with pytest.raises(runtime.LaunchError, match='learner stopped:'):
        learner.supervise()
    assert learner.process.restarts == 0


def _apex_sample(builder, rng, reward):
    """A batch of 4 transitions of `builder`'s signature, rewards set to `reward`."""
    signature = transitions.transition_signature(builder.step_spec(), builder.config.n_step,
                                           builder.frame_stack)

    def value(name, spec):
        shape = (4, *spec.shape)
        if name == 'reward':
            return tf.fill(shape, reward)
        if spec.dtype == tf.uint8:
            return tf.constant(rng.integers(0, 255, shape), tf.uint8)
        if spec.dtype.is_integer:
            return tf.zeros(shape, spec.dtype)
        return tf.constant(rng.uniform(-0.5, 0.5, shape), spec.dtype)

    data = {name: value(name, spec) for name, spec in signature.items()}
    info = reverb.SampleInfo(key=tf.constant([1, 2, 3, 4], tf.uint64),
                             probability=tf.fill([4], 0.25),
                             table_size=tf.fill([4], 4), priority=tf.ones([4]),
                             times_sampled=tf.ones([4], tf.int32))
    return reverb.ReplaySample(info=info, data=data)


@pytest.mark.parametrize('experiment, target', [('apex_dqn_atari', 'pong'),
                                                ('apex_dpg_control', 'cartpole_swingup')])
def test_apex_updates_skip_nonfinite_batches(experiment, target):
    spec = experiments.get(experiment)
    config = spec.check(spec.presets['tiny'](spec.paper_config()).replace(
        **{spec.target_field: target, 'reward_clip': 0.0}))
    builder = spec.builder(config)
    state = builder.learning_state()
    rng = np.random.default_rng(1)
    state.update(_apex_sample(builder, rng, 0.5))
    before = [v.numpy().copy() for v in state.variables]
    metrics = state.update(_apex_sample(builder, rng, float('inf')))
    assert float(metrics['nonfinite']) == 1.0 and int(state.step.numpy()) == 1
    for variable, value in zip(state.variables, before):
        np.testing.assert_array_equal(variable.numpy(), value, err_msg=variable.name)
    assert float(state.update(_apex_sample(builder, rng, 0.5))['nonfinite']) == 0.0
    assert int(state.step.numpy()) == 2
