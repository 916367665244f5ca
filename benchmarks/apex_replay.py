"""Ape-X DQN replay on this machine: bytes per stored transition and insert and sample rates.

  python -m benchmarks.apex_replay [--transitions=20000] [--seconds=10] [--readers=2] [--learner]

The replay server of the paper's Ape-X DQN config (prioritized table, capacity 2M) runs in its
own process. Whole games of real Pong frames (random actions, each step carrying q values as
the actor's) are recorded first; then, all through the agent's own builder:
(a) the actor's N-step adder writes `--transitions` transitions of them into the server, in
    batches of 50 (sec. 4.1): inserted items/s, and the server's resident memory growth over
    the items, printed as `bytes_per_transition=N`;
(b) the learner's dataset samples batches of 512 (sec. 4.1) with `--readers` parallel streams
    (the config's `replay_readers`): items/s.
With (a) and (b) go the CPU microseconds per item of this process and of the server, which
another load on the machine changes less than the rates.
(c) priority updates/s written back with mutate_priorities, 512 per call;
(d) with --learner, the Ape-X DQN update alone at batch 512, frame stacks rebuilt in it,
    batches/s (the paper's GPU learner: 19 batches/s, sec. 4.1).
"""
import os
import time

import numpy as np
import psutil
import reverb
import tensorflow as tf
from absl import app
from absl import flags

from agents.apex import config as apex_config
from benchmarks import atari_steps
from benchmarks import replay_server
from launch import experiments
from reverb_tables import tables

_TRANSITIONS = flags.DEFINE_integer('transitions', 20_000, 'Transitions inserted.')
_SECONDS = flags.DEFINE_float('seconds', 10.0, 'Seconds parts (b) to (d) are timed for.')
_LEARNER = flags.DEFINE_bool('learner', False, 'Also time the DQN update at batch 512.')
_GAME_STEPS = flags.DEFINE_integer('game_steps', 3_000, 'Steps of whole games recorded.')
_READERS = flags.DEFINE_integer('readers', None, 'Sample streams (default: the config\'s).')


def _cpu_seconds(*pids):
    return [sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids]


def _per_item(before, after, items):
    """CPU microseconds per item of this process and of the server."""
    return (f'CPU per item: {(after[0] - before[0]) / items * 1e6:.0f} us here, '
            f'{(after[1] - before[1]) / items * 1e6:.0f} us in the server')


def _timed(fn, seconds):
    count, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        count += fn()
    return count / (time.monotonic() - start)


def main(argv):
    del argv
    config = apex_config.ApexDQNAtari()
    config = config.replace(replay_readers=_READERS.value or config.replay_readers)
    builder = experiments.get('apex_dqn_atari').builder(config)
    rng = np.random.default_rng(0)
    recorded = atari_steps.record(builder, _GAME_STEPS.value, lambda: {
        'q_value': rng.normal(size=1).astype(np.float32),
        'bootstrap_value': rng.normal(size=1).astype(np.float32)})
    with replay_server.started('launch.apex_dqn_atari',
                               f'--config.min_replay_size={config.batch_size}'
                               ) as (address, server_pid):
        client = reverb.Client(address)
        adder = builder.adder(client, learner_id=0)
        time.sleep(2.0)
        before = psutil.Process(server_pid).memory_info().rss
        pids = (os.getpid(), server_pid)
        cpu = _cpu_seconds(*pids)
        start = time.monotonic()
        while client.server_info()[tables.PRIORITIZED].current_size < _TRANSITIONS.value:
            for step in recorded:
                adder.add(step)
        adder.flush()
        inserted = client.server_info()[tables.PRIORITIZED].current_size
        insert_rate = inserted / (time.monotonic() - start)
        insert_cpu = _per_item(cpu, _cpu_seconds(*pids), inserted)
        time.sleep(2.0)
        after = psutil.Process(server_pid).memory_info().rss
        per_transition = (after - before) / inserted
        print(f'(a) insert: {insert_rate:,.0f} items/s through the adder (batches of '
              f'{config.transition_batch_size}); {inserted:,} transitions of real Pong frames: '
              f'server memory {before / 2**20:,.0f} MiB -> {after / 2**20:,.0f} MiB; '
              f'{insert_cpu}')
        print(f'bytes_per_transition={per_transition:.0f}')
        print(f"the paper's {config.replay_capacity:,}-transition replay at this rate: "
              f'{per_transition * config.replay_capacity / 2**30:,.1f} GiB', flush=True)

        iterator = builder.dataset(address, learner_id=0)
        sample = next(iterator)
        cpu = _cpu_seconds(*pids)
        sample_rate = _timed(lambda: len(next(iterator).info.key), _SECONDS.value)
        sample_cpu = _per_item(cpu, _cpu_seconds(*pids), sample_rate * _SECONDS.value)
        print(f'(b) sample: {sample_rate:,.0f} items/s ({sample_rate / config.batch_size:.1f} '
              f'batches of {config.batch_size}/s, {config.replay_readers} streams); '
              f'{sample_cpu}', flush=True)

        keys = sample.info.key.numpy()

        def mutate():
            client.mutate_priorities(tables.PRIORITIZED, updates={
                int(k): float(p) for k, p in zip(keys, rng.random(len(keys)))})
            return len(keys)

        print(f'(c) priority updates: {_timed(mutate, _SECONDS.value):,.0f}/s', flush=True)

        if _LEARNER.value:
            learning = builder.learning_state()
            learning.update(sample)
            rate = _timed(lambda: (learning.update(sample)['loss'].numpy(), 1)[1],
                          _SECONDS.value)
            print(f'(d) DQN update at batch {config.batch_size}: {rate:.2f} batches/s '
                  f'({rate * config.batch_size:,.0f} transitions/s; paper: 19 batches/s on a '
                  'GPU)', flush=True)


if __name__ == '__main__':
    tf.get_logger().setLevel('ERROR')
    app.run(main)
