"""Reward preprocessing in the learner's loss (IMPALA table G.1, table D.3 and figure D.1).

The environment returns raw game scores; the loss sees them transformed (agents/impala/learning.py).
"""
import tensorflow as tf

# The clippings' names (declared without TensorFlow).
from agents.ops.choices import CLIPPINGS, OPTIMISTIC_ASYMMETRIC, SYMMETRIC  # noqa: F401


def symmetric_clip(rewards, bound):
    """Rewards clipped to [-bound, bound] (table G.1, and table D.3 for DMLab single tasks:
    [-1, 1]); `bound` 0 leaves them as they are."""
    rewards = tf.convert_to_tensor(rewards)
    return tf.clip_by_value(rewards, -bound, bound) if bound else rewards


def optimistic_asymmetric_clip(rewards):
    """Figure D.1's "Optimistic Asymmetric Clipping" (DMLab-30, experts included, table D.3):
    0.3 min(tanh(r), 0) + 5.0 max(tanh(r), 0), so in (-0.3, 5.0): losses are squashed harder
    than gains."""
    squashed = tf.tanh(tf.convert_to_tensor(rewards))
    return 0.3 * tf.minimum(squashed, 0.0) + 5.0 * tf.maximum(squashed, 0.0)
