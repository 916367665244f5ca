"""Reactor's replay on this machine: bytes per stored step, and what the paper config's
capacity would take.

  python -m benchmarks.reactor_replay [--steps=10000] [--game=pong]

The replay server of the paper's Reactor config (the lazy-priority tables, the pace table,
the snapshot tables) runs in its own process. Whole episodes of real Atari frames are recorded
first (random actions, random behaviour probabilities and LSTM states as the actor's, episodes
cut by `--max_episode_frames` so that time limits occur too); then the actor's own adder (one
stream, a sequence of 33 steps at every step) writes `--warmup` steps of them, then
`--steps` more; the server's resident memory growth over the latter is printed as
`bytes_per_step=N`, with the paper-config capacity (`replay_capacity` sequences, one per
step) at that rate.
"""
import itertools
import time

from absl import app
from absl import flags
import numpy as np
import psutil
import reverb
import tensorflow as tf

from agents.reactor import config as reactor_config
from agents.reactor import lazy_priorities
from benchmarks import atari_steps
from benchmarks import replay_server
from launch import experiments

_STEPS = flags.DEFINE_integer('steps', 10_000, 'Steps written (one sequence each).')
_WARMUP = flags.DEFINE_integer('warmup', 2_000, 'Steps written before the measurement (the '
                               'server\'s start-up growth).')
_GAME = flags.DEFINE_string('game', 'pong', 'Atari game the frames come from.')
_GAME_STEPS = flags.DEFINE_integer('game_steps', 3_000, 'Steps of whole episodes recorded.')
_MAX_EPISODE_FRAMES = flags.DEFINE_integer('max_episode_frames', 4_000,
                                           'Time limit of the recorded episodes.')


def main(argv):
    del argv
    config = reactor_config.check(reactor_config.ReactorAtari(game=_GAME.value))
    config = config.replace(max_episode_frames=_MAX_EPISODE_FRAMES.value)
    builder = experiments.get('reactor_atari').builder(config)
    rng = np.random.default_rng(0)
    state_spec = builder.step_spec()['core_state']
    recorded = atari_steps.record(
        builder, _GAME_STEPS.value,
        lambda: {'behaviour_prob': rng.uniform(size=1).astype(np.float32)},
        lambda: tf.nest.map_structure(
            lambda s: rng.normal(size=s.shape).astype(np.float32), state_spec))
    ends = sum(step['discount'] == 0 for step in recorded)
    limits = sum(step['mask'] == 0 for step in recorded)
    # No learner samples the pace table: its rate limiter must let every step in.
    with replay_server.started(
            'launch.reactor_atari', f'--game={config.game}',
            f'--config.min_replay_size={_STEPS.value + _WARMUP.value + 1_000}'
            ) as (address, server_pid):
        client = reverb.Client(address)
        adder = builder.adder(client, learner_id=0)
        table = lazy_priorities.LAZY_PRIORITIZED
        replayed = itertools.cycle(recorded)

        def write(count):
            """Writes until the server holds `count` more sequences: its memory before and
            after, the sequences written and the seconds it took."""
            held = client.server_info()[table].current_size
            time.sleep(2.0)
            before = psutil.Process(server_pid).memory_info().rss
            start = time.monotonic()
            while client.server_info()[table].current_size < held + count:
                for _ in range(config.sequence_length):
                    adder.add(next(replayed))
            seconds = time.monotonic() - start
            time.sleep(2.0)
            after = psutil.Process(server_pid).memory_info().rss
            return before, after, client.server_info()[table].current_size - held, seconds

        write(_WARMUP.value)
        before, after, items, seconds = write(_STEPS.value)
        rate = items / seconds
        per_step = (after - before) / items
        print(f'{items:,} sequences of {config.sequence_length} steps at every step of real '
              f'{config.game} frames ({len(recorded):,} steps recorded: {ends} episode ends, '
              f'{limits} time limits) after {_WARMUP.value:,} written first, {rate:,.0f} '
              f'steps/s through the adder: server memory {before / 2**20:,.0f} MiB -> '
              f'{after / 2**20:,.0f} MiB')
        print(f'bytes_per_step={per_step:.0f}')
        print(f"the paper config's {config.replay_capacity:,}-sequence replay at this rate: "
              f'{per_step * config.replay_capacity / 1e9:,.1f} GB', flush=True)


if __name__ == '__main__':
    tf.get_logger().setLevel('ERROR')
    app.run(main)
