"""Ape-X prioritized replay throughput on this machine, at the paper's batch sizes.

  python -m benchmarks.apex_replay [--seconds=10] [--learner]

Against one in-process Reverb prioritized table (alpha 0.6, FIFO removal) holding Atari
transitions (two 84x84x4 uint8 observations each, incompressible random frames: a worst case):
(a) transitions/s inserted, in the actors' batches of 50 (sec. 4.1);
(b) transitions/s sampled as the learner samples them, batches of 512 through the dataset;
(c) priority updates/s written back with mutate_priorities, 512 per call;
(d) with --learner, the Ape-X DQN update alone at batch 512, batches/s (the paper's GPU
    learner: 19 batches/s, sec. 4.1).
"""
import time

import numpy as np
import reverb
import tensorflow as tf
from absl import app
from absl import flags

from agents.apex import builder as builder_lib
from agents.apex import config as apex_config
from reverb_tables import tables

_SECONDS = flags.DEFINE_float('seconds', 10.0, 'Seconds each part is timed for.')
_LEARNER = flags.DEFINE_bool('learner', False, 'Also time the DQN update at batch 512.')
_SIZE = flags.DEFINE_integer('size', 20_000, 'Items in the table while sampling.')


def _transitions(n, rng):
    return [{'observation': rng.integers(0, 256, (84, 84, 4), np.uint8),
             'action': np.int32(0), 'reward': np.zeros(3, np.float32),
             'discount': np.full(3, 0.99, np.float32),
             'next_observation': rng.integers(0, 256, (84, 84, 4), np.uint8)} for _ in range(n)]


def _timed(fn, seconds):
    count, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        count += fn()
    return count / (time.monotonic() - start)


def main(argv):
    del argv
    config = apex_config.atari_dqn()
    builder = builder_lib.ApexDQNAtariBuilder(config)
    signature = tables.transition_signature(builder.step_spec(), config.n_step)
    server = reverb.Server([tables.prioritized_table(
        signature, max_size=_SIZE.value, priority_exponent=config.priority_exponent,
        min_size_to_sample=1)])
    client = reverb.Client(f'localhost:{server.port}')
    rng = np.random.default_rng(0)
    batch = _transitions(config.transition_batch_size, rng)
    writer = client.trajectory_writer(num_keep_alive_refs=config.transition_batch_size)

    def insert():
        for transition in batch:
            writer.append(transition)
            writer.create_item(tables.PRIORITIZED, priority=float(rng.random()),
                               trajectory={k: v[-1] for k, v in writer.history.items()})
        writer.flush()
        return len(batch)

    while client.server_info()[tables.PRIORITIZED].current_size < _SIZE.value:
        insert()
    insert_rate = _timed(insert, _SECONDS.value)
    print(f'(a) insert: {insert_rate:,.0f} transitions/s (batches of '
          f'{config.transition_batch_size})', flush=True)

    dataset = reverb.TrajectoryDataset.from_table_signature(
        server_address=f'localhost:{server.port}', table=tables.PRIORITIZED,
        max_in_flight_samples_per_worker=2 * config.batch_size)
    iterator = iter(dataset.batch(config.batch_size, drop_remainder=True).prefetch(2))
    keys = next(iterator).info.key.numpy()
    sample_rate = _timed(lambda: len(next(iterator).info.key), _SECONDS.value)
    print(f'(b) sample: {sample_rate:,.0f} transitions/s '
          f'({sample_rate / config.batch_size:.1f} batches of {config.batch_size}/s)',
          flush=True)

    def mutate():
        client.mutate_priorities(tables.PRIORITIZED, updates={
            int(k): float(p) for k, p in zip(keys, rng.random(len(keys)))})
        return len(keys)

    print(f'(c) priority updates: {_timed(mutate, _SECONDS.value):,.0f}/s', flush=True)

    if _LEARNER.value:
        config.jit_compile = 'auto'
        learning = builder_lib.learning.ApexDQNLearning(
            builder.network(), builder.network(), config,
            jit_compile=builder_lib.resolve_jit(config.jit_compile))
        sample = next(iterator)
        learning.update(sample)
        rate = _timed(lambda: (learning.update(sample)['loss'].numpy(), 1)[1], _SECONDS.value)
        print(f'(d) DQN update at batch {config.batch_size}: {rate:.2f} batches/s '
              f'({rate * config.batch_size:,.0f} transitions/s; paper: 19 batches/s on a GPU)',
              flush=True)
    server.stop()


if __name__ == '__main__':
    tf.get_logger().setLevel('ERROR')
    app.run(main)
