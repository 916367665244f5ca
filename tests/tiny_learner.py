"""A real IMPALA learner on hand-made batches, for tests of the learner loop itself."""
import os

import numpy as np
import reverb
import tensorflow as tf

from agents.core import checkpointer
from agents.core import episode_log
from agents.core import learner as learner_lib
from agents.core import logging as run_logging
from agents.core import variables


def batch(builder, rng, reward):
    """One batch of random Atari frames with every reward set to `reward`."""
    c = builder.config
    shape = (c.batch_size, c.unroll_length + 1)
    return {'observation': tf.constant(rng.integers(0, 255, (*shape, 84, 84, 4), np.uint8)),
            'action': tf.zeros(shape, tf.int32), 'reward': tf.fill(shape, reward),
            'discount': tf.ones(shape), 'mask': tf.ones(shape),
            'behaviour_logits': tf.zeros((*shape, builder.environments.num_actions))}


def learner(builder, address, run_dir, batches, checkpoint_interval_s=3600.0):
    """The builder's learning state and a Learner training it on `batches`, logging after
    every update."""
    c = builder.config
    state = builder.learning_state()
    client = reverb.Client(address)
    logs = os.path.join(run_dir, 'logs')
    tensorboard = run_logging.TensorBoardLogger(os.path.join(logs, 'tensorboard'))
    return state, learner_lib.Learner(
        state=state, iterator=iter(batches),
        pusher=variables.VariablePusher(client, state.network.trainable_variables),
        checkpointer=checkpointer.Checkpointer(state, run_dir, 'learner'),
        episode_log=episode_log.EpisodeLog(episode_log.EpisodeStatsReader(client), logs,
                                           tensorboard),
        tensorboard=tensorboard, logs_dir=logs,
        schedule=learner_lib.Schedule(c.total_frames, checkpoint_interval_s, 0.0,
                                      c.max_nonfinite_updates))
