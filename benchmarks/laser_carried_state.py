"""Which forward pass LASER's carried LSTM state comes from, and what the other would give.

  python -m benchmarks.laser_carried_state [--updates=12] [--game=breakout] [--frozen]

LASER app. A.2: full state correction "only requires one additional forward pass for each
learning step". Ours carries, into each replayed row's next unroll, the state its learning pass
computed, with the parameters before that update (agents/laser/learning.py); the other reading
re-runs the unroll after the update. A real actor (the quick preset's shallow net and LSTM, one
environment) fills an in-process replay with episodes, then a learner of the quick preset
takes `--updates` steps; after each, the state the learning pass carried is set beside the state
a second forward pass with the updated parameters gives from the same start. Prints, per update
and over all, the largest absolute difference, and the states' largest magnitude for scale
(docs/fidelity.md, LASER).
"""
import tempfile

import numpy as np
import reverb
import tensorflow as tf
from absl import app
from absl import flags

from agents.core import builders
from agents.core import datasets
from agents.core import variables
from agents.impala import config as impala_config
from agents.laser import config as laser_config
from launch import experiments

_UPDATES = flags.DEFINE_integer('updates', 12, 'Learner updates measured.')
_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game the actor plays.')
_FROZEN = flags.DEFINE_bool('frozen', False, 'The control: learning rate 0, so that both passes '
                            'have the same parameters.')


def _numpy(state):
    return [np.asarray(x) for x in tf.nest.flatten(state)]


def second_pass(network, batch, start):
    """The replayed rows' state after their unroll's T learnt steps, from `start`, with the
    network's current parameters."""
    online = int(np.sum(datasets.online(batch).numpy()))
    observation, prev_action, prev_reward, first = (
        tf.experimental.numpy.swapaxes(batch[name][online:, :-1], 0, 1)    # [T, rows, ...]
        for name in ('observation', 'prev_action', 'prev_reward', 'first'))
    _, state = network.unroll(observation, prev_action, prev_reward, None, first, start)
    return state


def main(argv):
    del argv
    config = laser_config.quick(laser_config.LaserAtari())
    online_rows = config.batch_size - impala_config.replay_batch_size(config)
    # One environment; a queue holding every online unroll the actor writes.
    steps = (_UPDATES.value * online_rows + 2) * config.unroll_length
    config = laser_config.check(config.replace(game=_GAME.value, envs_per_actor=1,
                                               queue_size=steps))
    builder = experiments.get('laser_atari').builder(config)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    tf.random.set_seed(0)
    variables.VariablePusher(reverb.Client(address),
                             builder.network().trainable_variables).push(step=1)
    with tempfile.TemporaryDirectory() as run_dir:    # the actor's logs
        builders.make_actor(builder, address, run_dir, actor_id=0,
                            learner_id=0).run(num_steps=steps)
    learning = builder.learning_state()
    if _FROZEN.value:
        learning.hyperparameters['learning_rate'].assign(0.0)
    iterator = builder.dataset(address, 0)
    differences, magnitudes = [], []
    for update in range(_UPDATES.value):
        batch = next(iterator)
        start = tf.nest.map_structure(tf.identity, learning.carried.variables)
        learning.update(batch)
        carried = _numpy(learning.carried.variables)
        rerun = _numpy(second_pass(learning.network, batch, start))
        differences.append(max(np.abs(a - b).max() for a, b in zip(carried, rerun)))
        magnitudes.append(max(np.abs(a).max() for a in carried))
        print(f'update {update + 1}: max |carried - second pass| = {differences[-1]:.2e} '
              f'(states up to {magnitudes[-1]:.2f})', flush=True)
    server.stop()
    print(f'{config.batch_size - online_rows} replayed rows of {config.unroll_length} steps, '
          f'{_UPDATES.value} updates at learning rate '
          f'{learning.hyperparameters["learning_rate"].numpy():g}: '
          f'max_abs_difference={max(differences):.2e} (median over the updates '
          f'{np.median(differences):.2e}; states up to {max(magnitudes):.2f})')


if __name__ == '__main__':
    app.run(main)
