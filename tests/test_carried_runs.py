"""benchmarks/carried_runs.py: a run's newest checkpoint, config and logs carried in a results
row's folder restore a run directory on a fresh machine, where the learner's checkpoint manager
finds the checkpoint and goes on from it."""
import json
import os

import tensorflow as tf

from benchmarks import carried_runs


def _run(run_dir, frames):
    """A run directory as a learner leaves it: config, sittings, logs, checkpoints by frame."""
    os.makedirs(os.path.join(run_dir, 'logs', 'tensorboard'))
    with open(os.path.join(run_dir, 'config.json'), 'w') as f:
        json.dump({'experiment': 'impala_atari'}, f)
    with open(os.path.join(run_dir, 'sittings.jsonl'), 'w') as f:
        f.write(json.dumps({'commit': 'abc', 'from_frames': 0}) + '\n')
    for name in ('learner.csv', 'episodes.csv', 'learner.log'):
        with open(os.path.join(run_dir, 'logs', name), 'w') as f:
            f.write('frames\n1\n')
    weights = tf.Variable(0.0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(weights=weights),
                                         os.path.join(run_dir, 'checkpoints'), max_to_keep=3)
    for n in frames:
        weights.assign(float(n))
        manager.save(checkpoint_number=n)


def test_the_newest_checkpoint_and_the_logs_resume_a_fresh_run_directory(tmp_path):
    run_dir, carried = str(tmp_path / 'run'), str(tmp_path / 'results' / 'row' / 'run' / 'seed_0')
    _run(run_dir, frames=(100, 200, 300))
    carried_runs.carry_out(run_dir, carried)
    carried_runs.carry_out(run_dir, carried)      # refreshed in place
    assert sorted(os.listdir(os.path.join(carried, 'logs'))) == ['episodes.csv', 'learner.csv']
    assert sorted(os.listdir(os.path.join(carried, 'checkpoints'))) == [
        'checkpoint', 'ckpt-300.data-00000-of-00001', 'ckpt-300.index']

    fresh = str(tmp_path / 'fresh_machine' / 'run')
    assert carried_runs.carry_in(carried, fresh)
    weights = tf.Variable(-1.0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(weights=weights),
                                         os.path.join(fresh, 'checkpoints'), max_to_keep=3)
    assert manager.latest_checkpoint == os.path.join(fresh, 'checkpoints', 'ckpt-300')
    tf.train.Checkpoint(weights=weights).restore(manager.latest_checkpoint)
    assert weights.numpy() == 300.0
    manager.save(checkpoint_number=400)           # the resumed learner goes on saving
    assert [os.path.basename(p) for p in manager.checkpoints] == ['ckpt-300', 'ckpt-400']
    with open(os.path.join(fresh, 'sittings.jsonl')) as f:
        assert json.loads(f.readline())['commit'] == 'abc'


def test_a_run_directory_that_holds_a_run_is_left_as_it_is(tmp_path):
    run_dir, carried = str(tmp_path / 'run'), str(tmp_path / 'carried')
    _run(run_dir, frames=(100,))
    carried_runs.carry_out(run_dir, carried)
    _run(str(tmp_path / 'other'), frames=(500,))
    assert not carried_runs.carry_in(carried, str(tmp_path / 'other'))
    assert not carried_runs.carry_in(str(tmp_path / 'nothing_carried'), str(tmp_path / 'new'))
    assert not os.path.exists(str(tmp_path / 'new'))


def test_a_run_without_a_checkpoint_yet_carries_its_logs(tmp_path):
    run_dir, carried = str(tmp_path / 'run'), str(tmp_path / 'carried')
    _run(run_dir, frames=())
    carried_runs.carry_out(run_dir, carried)
    assert not os.path.exists(os.path.join(carried, 'checkpoints'))
    assert os.path.exists(os.path.join(carried, 'logs', 'learner.csv'))
