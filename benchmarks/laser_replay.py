"""LASER replay memory: bytes per stored observation on the replay server.

  python -m benchmarks.laser_replay [--unrolls=2000] [--game=breakout]

A replay server of the LASER Atari config (uniform FIFO table of unrolls of 20 steps, the
paper's 19 new observations each) runs in its own process; the actors' adder, each frame
stored once, writes `--unrolls` unrolls of real frames (random actions) into it. The server's
resident memory before and after, over the observations written, is the figure; it prints
`bytes_per_observation=N` and what the paper's 10M-observation replay (sec. 5.4) would need at
that rate.
"""
import subprocess
import sys
import time

import numpy as np
import portpicker
import psutil
import reverb
from absl import app
from absl import flags

from agents.core import adders
from agents.core import steps
from agents.laser import builder as builder_lib
from agents.laser import config as laser_config
from reverb_tables import tables

_UNROLLS = flags.DEFINE_integer('unrolls', 2000, 'Unrolls written to the replay.')
_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game whose frames are stored.')


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def main(argv):
    del argv
    port = portpicker.pick_unused_port()
    server = subprocess.Popen(
        [sys.executable, '-m', 'launch.laser_atari', '--role=replay', f'--game={_GAME.value}',
         f'--replay_address=localhost:{port}', '--run_dir=/tmp/laser_replay_benchmark',
         '--config.replay_capacity_observations=100000000'],
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
        config.game = _GAME.value
        laser_config.check(config)
        builder = builder_lib.LaserAtariBuilder(config)
        # The actors' adder (agents/impala/builder.py) without its online queue, which no
        # learner drains here.
        adder = adders.SequenceAdder(client, {tables.REPLAY: adders.constant_priority()},
                                     **builder.sequence_layout())
        env = builder.environments.environment(seed=0)
        action_spec = builder.step_spec()['action']
        logits = np.zeros(builder.environments.num_actions, np.float32)
        rng = np.random.default_rng(0)
        time.sleep(2.0)
        before = _rss(server.pid)
        inputs = steps.StepInputs([env.reset()], action_spec)
        while client.server_info()[tables.REPLAY].current_size < _UNROLLS.value:
            action = np.int32(rng.integers(builder.environments.num_actions))
            timestep = env.step(action)
            adder.add(steps.written_step(inputs.batch(), 0, action, timestep,
                                         {'behaviour_logits': logits[None]}))
            if timestep.last():
                timestep = env.reset()
            inputs.advance(0, action, timestep)
        time.sleep(2.0)
        after = _rss(server.pid)
        observations = _UNROLLS.value * config.unroll_length
        per_observation = (after - before) / observations
        print(f'{_UNROLLS.value} unrolls of {config.unroll_length + 1} steps of real '
              f'{_GAME.value} frames ({observations:,} new observations): server memory '
              f'{before / 2**20:,.0f} MiB -> {after / 2**20:,.0f} MiB')
        print(f'bytes_per_observation={per_observation:,.0f}')
        print(f"the paper's 10M-observation replay at this rate: "
              f'{per_observation * 10_000_000 / 2**30:,.1f} GiB')
    finally:
        server.terminate()
        server.wait()


if __name__ == '__main__':
    app.run(main)
