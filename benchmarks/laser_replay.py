"""LASER replay memory: bytes per stored observation on the replay server.

  python -m benchmarks.laser_replay [--unrolls=2000] [--game=breakout] [--core=lstm]

A replay server of the LASER Atari config runs in its own process; the actors' adder, each
frame stored once, writes real frames (random actions) into it until it holds `--unrolls`
unrolls' worth: with the LSTM core (the paper's agent, the default) whole episodes, each taking
one slot per 19 new observations (agents/core/adders.py), with `--core=feed_forward` unrolls
of 20 steps. The server's resident memory before and after, over the observations written, is
the figure; it prints `bytes_per_observation=N` and what the paper's 10M-observation replay
(sec. 5.4) would need at that rate.
"""
import subprocess
import sys
import time

import numpy as np
import portpicker
import psutil
import reverb
import tree
from absl import app
from absl import flags

from agents.core import adders
from agents.core import steps
from agents.laser import builder as builder_lib
from agents.laser import config as laser_config
from reverb_tables import tables

_UNROLLS = flags.DEFINE_integer('unrolls', 2000, 'Unrolls written to the replay.')
_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game whose frames are stored.')
_CORE = flags.DEFINE_enum('core', 'lstm', ['lstm', 'feed_forward'],
                          "The agent's core, which sets the replay's layout.")


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def main(argv):
    del argv
    port = portpicker.pick_unused_port()
    server = subprocess.Popen(
        [sys.executable, '-m', 'launch.laser_atari', '--role=replay', f'--game={_GAME.value}',
         f'--replay_address=localhost:{port}', '--run_dir=/tmp/laser_replay_benchmark',
         f'--config.core={_CORE.value}', '--config.replay_capacity_observations=100000000'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = reverb.Client(f'localhost:{port}')
        while True:
            try:
                client.server_info(timeout=1)
                break
            except Exception:  # pylint: disable=broad-except
                time.sleep(0.5)
        config = laser_config.atari()
        config.update(game=_GAME.value, core=_CORE.value)
        laser_config.check(config)
        builder = builder_lib.LaserAtariBuilder(config)
        # The actors' adder (agents/laser/builder.py) without its online queue, which no
        # learner drains here.
        recurrent = config.core == 'lstm'
        if recurrent:
            adder = adders.SequenceAdder(client, {}, episode_tables=(tables.REPLAY,),
                                         max_episode_steps=builder.max_episode_steps(),
                                         **builder.sequence_layout())
            core_state = tree.map_structure(lambda x: x[0].numpy(),
                                            builder.network().initial_state(1))
        else:
            adder = adders.SequenceAdder(client, {tables.REPLAY: adders.constant_priority()},
                                         **builder.sequence_layout())
            core_state = None
        env = builder.environments.environment(seed=0)
        action_spec = builder.step_spec()['action']
        logits = np.zeros(builder.environments.num_actions, np.float32)
        rng = np.random.default_rng(0)
        time.sleep(2.0)
        before = _rss(server.pid)
        inputs = steps.StepInputs([env.reset()], action_spec)
        written, episode_start = 0, 0    # steps, and where the episode under way started
        while client.server_info()[tables.REPLAY].current_size < _UNROLLS.value:
            batch = inputs.batch()
            if recurrent and batch.first[0] and written:
                episode_start = written     # the adder writes the episode before it now
            action = np.int32(rng.integers(builder.environments.num_actions))
            timestep = env.step(action)
            adder.add(steps.written_step(batch, 0, action, timestep,
                                         {'behaviour_logits': logits[None]}, core_state))
            written += 1
            if timestep.last():
                timestep = env.reset()
            inputs.advance(0, action, timestep)
        adder.close()
        time.sleep(2.0)
        after = _rss(server.pid)
        # Whole episodes hold every step they were written with; unrolls T new ones each.
        observations = episode_start if recurrent else _UNROLLS.value * config.unroll_length
        per_observation = (after - before) / observations
        layout = ('whole episodes' if recurrent
                  else f'unrolls of {config.unroll_length + 1} steps')
        print(f'{_UNROLLS.value} slots of {layout} of real {_GAME.value} frames '
              f'({observations:,} observations): server memory '
              f'{before / 2**20:,.0f} MiB -> {after / 2**20:,.0f} MiB')
        print(f'bytes_per_observation={per_observation:,.0f}')
        print(f"the paper's 10M-observation replay at this rate: "
              f'{per_observation * 10_000_000 / 2**30:,.1f} GiB')
    finally:
        server.terminate()
        server.wait()


if __name__ == '__main__':
    app.run(main)
