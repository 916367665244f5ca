"""A real IMPALA learner on hand-made batches, for tests of the learner loop itself."""
import numpy as np
import reverb
import tensorflow as tf

from agents.core import learner as learner_lib


def batch(builder, rng, reward):
    """One batch of random Atari frames with every reward set to `reward`."""
    c = builder.config
    shape = (c.batch_size, c.unroll_length + 1)
    return {'observation': tf.constant(rng.integers(0, 255, (*shape, 84, 84, 4), np.uint8)),
            'action': tf.zeros(shape, tf.int32), 'reward': tf.fill(shape, reward),
            'discount': tf.ones(shape), 'mask': tf.ones(shape),
            'behaviour_logits': tf.zeros((*shape, builder.environments.num_actions))}


def learner(builder, address, run_dir, batches, checkpoint_interval_s=3600.0):
    """The builder's learning state and a Learner training it on `batches`."""
    c = builder.config
    state = builder.learning_state()
    return state, learner_lib.Learner(
        state=state, iterator=iter(batches), client=reverb.Client(address), run_dir=run_dir, total_frames=c.total_frames,
        checkpoint_interval_s=checkpoint_interval_s, log_interval_s=0.0,
        max_nonfinite_updates=c.max_nonfinite_updates)
