"""LASER replay memory: bytes per stored observation on the replay server; the actor's memory
over long episodes.

  python -m benchmarks.laser_replay [--unrolls=2000] [--game=breakout] [--core=lstm]
  python -m benchmarks.laser_replay --episode_frames=30000 [--episodes=2]

A replay server of the LASER Atari config runs in its own process; the actors' adder, each
frame stored once, writes real frames (random actions) into it until it holds `--unrolls`
unrolls' worth: with the LSTM core (the paper's agent, the default) whole episodes, each taking
one slot per 19 new observations (agents/core/adders.py), with `--core=feed_forward` unrolls
of 20 steps. The server's resident memory before and after, over the observations written, is
the figure; it prints `bytes_per_observation=N` and what the paper's 10M-observation replay
(sec. 5.4) would need at that rate.

With `--episode_frames`, the adder writes `--episodes` episodes cut at that time limit instead,
of real frames played on across game overs. This process is the actor: it also prints its
resident memory from its writer's first step on, at the end (and with `--episode_frames` at
each episode's end, when its writer holds the whole episode).
"""
import os
import subprocess
import sys
import time

import dm_env
import numpy as np
import portpicker
import psutil
import reverb
import tree
from absl import app
from absl import flags

from agents.core import adders
from agents.core import steps
from agents.laser import config as laser_config
from launch import experiments
from reverb_tables import tables

_UNROLLS = flags.DEFINE_integer('unrolls', 2000, 'Unrolls written to the replay.')
_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game whose frames are stored.')
_CORE = flags.DEFINE_enum('core', 'lstm', ['lstm', 'feed_forward'],
                          "The agent's core, which sets the replay's layout.")
_EPISODE_FRAMES = flags.DEFINE_integer(
    'episode_frames', 0, 'With the LSTM core: episodes cut at this many frames (0: the ones '
    'random play gives, until --unrolls).', lower_bound=0)
_EPISODES = flags.DEFINE_integer('episodes', 2, 'Episodes written with --episode_frames.',
                                 lower_bound=1)


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


class _Actor:
    """One environment of real frames (random actions) and the actors' adder
    (agents/laser/builder.py) without its online queue, which no learner drains here."""

    def __init__(self, builder, client):
        config = builder.config
        layout = builder.sequence_layout()
        self.recurrent = config.core == 'lstm'
        if self.recurrent:
            self.adder = adders.SequenceAdder(client, {}, episode_tables=(tables.REPLAY,),
                                              max_episode_steps=builder.max_episode_steps(),
                                              **layout)
            self._core_state = tree.map_structure(lambda x: x[0].numpy(),
                                                  builder.network().initial_state(1))
        else:
            self.adder = adders.SequenceAdder(
                client, {tables.REPLAY: adders.constant_priority()}, **layout)
            self._core_state = None
        self._env = builder.environments.environment(seed=0)
        self._actions = builder.environments.num_actions
        self._logits = np.zeros(self._actions, np.float32)
        self._rng = np.random.default_rng(0)
        self._inputs = steps.StepInputs([self._env.reset()], builder.step_spec()['action'])

    def step(self, game_over_ends_episode: bool = True) -> bool:
        """One step written; whether it was the first of an episode. Without
        `game_over_ends_episode`, a new game goes on with the episode under way."""
        batch = self._inputs.batch()
        action = np.int32(self._rng.integers(self._actions))
        timestep = self._env.step(action)
        self.adder.add(steps.written_step(batch, 0, action, timestep,
                                          {'behaviour_logits': self._logits[None]},
                                          self._core_state))
        if timestep.last():
            timestep = self._env.reset()
            if not game_over_ends_episode:
                timestep = timestep._replace(step_type=dm_env.StepType.MID, reward=0.0,
                                             discount=1.0)
        self._inputs.advance(0, action, timestep)
        return bool(batch.first[0])

    def restart(self) -> None:
        """The next step starts an episode (the time limit)."""
        self._inputs.advance(0, 0, self._env.reset())


def _slots(actor, client, config) -> int:
    """Random play's episodes (or unrolls) until the replay holds `--unrolls` slots, the
    actor's memory then; the observations stored."""
    written, episode_start = 0, 0    # steps, and where the episode under way started
    baseline = None
    while client.server_info()[tables.REPLAY].current_size < _UNROLLS.value:
        if actor.step() and written:
            episode_start = written     # the adder wrote the episode before it
        written += 1
        baseline = baseline or _rss(os.getpid())    # from the writer's first step on
    print(f'actor memory after {written:,} steps: '
          f'+{(_rss(os.getpid()) - baseline) / 2**20:,.1f} MiB')
    # Whole episodes hold every step they were written with; unrolls T new ones each.
    return episode_start if actor.recurrent else _UNROLLS.value * config.unroll_length


def _long_episodes(actor, length: int) -> int:
    """`--episodes` episodes of `length` steps (the time limit's), the actor's memory at the
    end of each (its writer holding the whole episode) and after the last; the observations
    stored."""
    baseline = None
    for episode in range(1, _EPISODES.value + 1):
        for _ in range(length):
            actor.step(game_over_ends_episode=False)
            baseline = baseline or _rss(os.getpid())    # from the writer's first step on
        print(f'actor memory at the end of episode {episode} of {length:,} steps: '
              f'+{(_rss(os.getpid()) - baseline) / 2**20:,.1f} MiB')
        actor.restart()
    actor.step()      # the next episode's first: the adder writes the last one
    print(f'actor memory after them: +{(_rss(os.getpid()) - baseline) / 2**20:,.1f} MiB')
    return _EPISODES.value * length


def main(argv):
    del argv
    if _EPISODE_FRAMES.value and _CORE.value != 'lstm':
        raise app.UsageError('--episode_frames writes whole episodes: the LSTM core\'s')
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
        config = laser_config.LaserAtari(game=_GAME.value).replace(core=_CORE.value)
        if _EPISODE_FRAMES.value:
            config = config.replace(max_episode_frames=_EPISODE_FRAMES.value,
                                    replay_episode_frames=_EPISODE_FRAMES.value)
        config = laser_config.check(config)
        builder = experiments.get('laser_atari').builder(config)
        actor = _Actor(builder, client)
        time.sleep(2.0)
        before = _rss(server.pid)
        observations = (_long_episodes(actor, builder.max_episode_steps())
                        if _EPISODE_FRAMES.value else _slots(actor, client, config))
        actor.adder.close()
        time.sleep(2.0)
        after = _rss(server.pid)
        per_observation = (after - before) / observations
        layout = ('whole episodes' if actor.recurrent
                  else f'unrolls of {config.unroll_length + 1} steps')
        print(f'{layout} of real {_GAME.value} frames ({observations:,} observations): '
              f'server memory {before / 2**20:,.0f} MiB -> {after / 2**20:,.0f} MiB')
        print(f'bytes_per_observation={per_observation:,.0f}')
        print(f"the paper's 10M-observation replay at this rate: "
              f'{per_observation * 10_000_000 / 2**30:,.1f} GiB')
    finally:
        server.terminate()
        server.wait()


if __name__ == '__main__':
    app.run(main)
