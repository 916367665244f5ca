"""Reactor on this machine: lazy against plain prioritized sampling, learner updates/s, and
end-to-end frames/s against IMPALA.

  python -m benchmarks.reactor [--items=20000] [--seconds=20] [--noend_to_end]

(a) Sampling: one loopback Reverb server holds `--items` sequences of 33 steps of 84x84x1
    frames (random bytes) twice, in Reactor's lazy tables (every item registered, a priority
    assigned to each) and in one plain prioritized table (priority exponent 1), the same
    sequences. Batches of 4 are drawn for `--seconds` each, back to back, with the learner's
    write-back of 4 priorities after each: `LazyReplay.sample` + `update` against
    `Client.sample` + `mutate_priorities`. Prints sequences/s of each and their ratio.
    Then the same lazy draws from the paper config's tables as the actor's adder writes them
    (every step field, real Pong frames, `--items` steps): the learner's sampling rate with
    the replay layout it trains on.
(b) Learner: the paper config's update (batch 4, n = 33, 51 atoms, Pong's 6 actions) on a fixed
    batch, without XLA and with it; prints updates/s and acting steps/s it sustains at the
    paper's 5 acting steps per learning step.
(c) End to end, back to back on `--game`: `launch.reactor_atari --preset=quick` and
    `launch.impala_atari --preset=quick`, each for `--frames` frames; frames/s from each
    learner.csv between 20% and 100% of its frames.
"""
import os
import sys
import tempfile
import time

from absl import app
from absl import flags
import numpy as np
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import steps
from agents.networks import reactor as reactor_network
from agents.reactor import config as reactor_config
from agents.reactor import learning
from benchmarks import atari_steps
from benchmarks import runs
from agents.reactor import lazy_priorities
from launch import experiments

_ITEMS = flags.DEFINE_integer('items', 20_000, '(a) Sequences in each table.')
_SECONDS = flags.DEFINE_float('seconds', 20.0, '(a, b) Seconds per measurement.')
_SAMPLING_ONLY = flags.DEFINE_bool('sampling_only', False, 'Run (a) alone.')
_END_TO_END = flags.DEFINE_bool('end_to_end', True, 'Run (c).')
_FRAMES = flags.DEFINE_integer('frames', 100_000, '(c) Frames each agent trains.')
_GAME = flags.DEFINE_string('game', 'pong', '(c) Atari game.')

_LENGTH = 33
_BATCH = 4
_PLAIN = 'plain_prioritized'


def _fill(client: reverb.Client, num_items: int, rng) -> None:
    """`num_items` sequences in one stream, each item in the lazy tables and the plain one."""
    frames = rng.integers(0, 256, (num_items + _LENGTH, 84, 84, 1), np.uint8)
    priorities = {**{table: lazy_priorities.PENDING_PRIORITY for table in (
        lazy_priorities.LAZY_PRIORITIZED, lazy_priorities.LAZY_UNIFORM)}, _PLAIN: 1.0}
    with client.trajectory_writer(num_keep_alive_refs=_LENGTH) as writer:
        for t in range(num_items + _LENGTH - 1):
            writer.append({'observation': frames[t], lazy_priorities.STREAM: np.int64(0),
                           lazy_priorities.POSITION: np.int64(t)})
            if t + 1 >= _LENGTH:
                trajectory = {name: column[-_LENGTH:] for name, column in writer.history.items()}
                for table, priority in priorities.items():
                    writer.create_item(table, priority=priority, trajectory=trajectory)
                writer.flush(block_until_num_items=64)


def _rate(draw_and_update) -> float:
    """Sequences/s of `draw_and_update()` (one batch of 4) over `--seconds`."""
    draw_and_update()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < _SECONDS.value:
        draw_and_update()
        count += _BATCH
    return count / (time.perf_counter() - start)


def sampling() -> None:
    rng = np.random.default_rng(0)
    num_items = _ITEMS.value
    signature = {'observation': tf.TensorSpec([_LENGTH, 84, 84, 1], tf.uint8),
                 lazy_priorities.STREAM: tf.TensorSpec([_LENGTH], tf.int64),
                 lazy_priorities.POSITION: tf.TensorSpec([_LENGTH], tf.int64)}
    tables = lazy_priorities.lazy_tables(signature, capacity=num_items, slack=1_000)
    tables.append(reverb.Table(_PLAIN, sampler=reverb.selectors.Prioritized(1.0),
                               remover=reverb.selectors.Fifo(), max_size=num_items + 1_000,
                               rate_limiter=reverb.rate_limiters.MinSize(1),
                               signature=signature))
    server = reverb.Server(tables)
    client = reverb.Client(f'localhost:{server.port}')
    _fill(client, num_items, rng)
    replay = lazy_priorities.LazyReplay(client, capacity=num_items, seed=0)
    replay.sync()
    replay.update(list(replay.lazy.estimates()), rng.uniform(0.1, 2.0, num_items))

    def lazy_batch():
        sample = replay.sample(_BATCH)
        replay.update(sample.info.key, rng.uniform(0.1, 2.0, _BATCH))

    def plain_batch():
        keys = [s.info.key for s in client.sample(_PLAIN, _BATCH, emit_timesteps=False)]
        client.mutate_priorities(_PLAIN, dict(zip(keys, rng.uniform(0.1, 2.0, _BATCH))))

    plain = _rate(plain_batch)
    lazy = _rate(lazy_batch)
    print(f'(a) {num_items:,} sequences of {_LENGTH} steps, batches of {_BATCH} with '
          f'write-back: plain prioritized {plain:,.0f} sequences/s, lazy {lazy:,.0f} '
          f'sequences/s (lazy / plain = {lazy / plain:.2f})', flush=True)
    server.stop()
    config = reactor_config.ReactorAtari(
        replay_capacity=num_items, replay_slack=1_000,
        min_replay_size=num_items + _LENGTH)     # the pace table never holds the adder
    builder = experiments.get('reactor_atari').builder(config)
    recorded = atari_steps.record(
        builder, 3_000, lambda: {'behaviour_prob': rng.uniform(size=1).astype(np.float32)},
        lambda: tf.nest.map_structure(lambda s: rng.normal(size=s.shape).astype(np.float32),
                                      builder.step_spec()[steps.CORE_STATE]))
    server = reverb.Server(builders.replay_tables(builder, 1))
    client = reverb.Client(f'localhost:{server.port}')
    adder = builder.adder(client, 0)
    for t in range(num_items + _LENGTH - 1):
        adder.add(recorded[t % len(recorded)])
    adder.close()
    replay = builder.lazy_replay(client, 0)
    replay.sync()
    replay.update(list(replay.lazy.estimates()), rng.uniform(0.1, 2.0, len(replay.lazy)))
    print(f'(a) the same lazy draws from the tables the actor\'s adder writes (every step field, '
          f'real Pong frames): {_rate(lazy_batch):,.0f} sequences/s', flush=True)
    server.stop()


def _batch(network, rng) -> dict:
    state = tf.nest.map_structure(lambda s: s.numpy(), network.initial_state(_BATCH))
    actions = rng.integers(0, 6, (_BATCH, _LENGTH)).astype(np.int32)
    return {
        'observation': rng.integers(0, 256, (_BATCH, _LENGTH, 84, 84, 1), np.uint8),
        'action': actions, 'reward': rng.choice([0.0, 1.0], (_BATCH, _LENGTH)).astype(
            np.float32),
        'discount': np.ones((_BATCH, _LENGTH), np.float32),
        'mask': np.ones((_BATCH, _LENGTH), np.float32),
        'behaviour_prob': np.full((_BATCH, _LENGTH), 1 / 6, np.float32),
        'first': np.zeros((_BATCH, _LENGTH), bool),
        steps.CORE_STATE: state, 'weights': np.ones(_BATCH, np.float32),
        'keys': np.arange(_BATCH, dtype=np.uint64)}


def learner() -> None:
    config = reactor_config.ReactorAtari()
    rng = np.random.default_rng(0)
    for jit in (False, True):
        networks = []
        for _ in range(2):
            network = reactor_network.ReactorNet(6, config.network.num_atoms,
                                                 config.network.policy_epsilon)
            network.unroll(tf.zeros((1, 1, 84, 84, 1), tf.uint8), tf.ones((1, 1), tf.bool),
                           network.initial_state(1))
            networks.append(network)
        state = learning.ReactorLearning(*networks, config.learning,
                                         learning.loss_scalars(config), jit_compile=jit)
        batch = _batch(networks[0], rng)
        state.update(batch)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < _SECONDS.value:
            state.update(batch)['loss'].numpy()
            count += 1
        rate = count / (time.perf_counter() - start)
        print(f'(b) learner update, batch {_BATCH} x {_LENGTH}, XLA {"on" if jit else "off"}: '
              f'{rate:.1f} updates/s, i.e. {rate * config.acting_steps_per_learning_step:.0f} '
              f'acting steps/s = {rate * config.acting_steps_per_learning_step * 4:.0f} '
              f'frames/s at the paper\'s pace', flush=True)


def end_to_end() -> None:
    common = [f'--game={_GAME.value}', '--preset=quick', f'--config.total_frames={_FRAMES.value}',
              '--config.log_interval_s=2', '--config.eval_episodes=1']
    with tempfile.TemporaryDirectory() as root:
        rates = {}
        for agent in ('reactor', 'impala'):
            run_dir = os.path.join(root, agent)
            runs.run_together([[sys.executable, '-m', f'launch.{agent}_atari', *common,
                               f'--run_dir={run_dir}']])
            rates[agent] = runs.frames_per_second(
                os.path.join(run_dir, 'logs', 'learner.csv'))
        print(f'(c) end to end on {_GAME.value}, quick presets: Reactor '
              f'{rates["reactor"]:,.0f} frames/s, IMPALA {rates["impala"]:,.0f} frames/s '
              f'(Reactor / IMPALA = {rates["reactor"] / rates["impala"]:.2f})', flush=True)


def main(argv):
    del argv
    sampling()
    if _SAMPLING_ONLY.value:
        return
    learner()
    if _END_TO_END.value:
        end_to_end()


if __name__ == '__main__':
    app.run(main)
