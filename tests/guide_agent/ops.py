"""Step 1 of docs/architecture.md's "Where a new agent plugs in": the agent's equation as a
pure function with a numpy reference test (tests/test_new_agent_guide.py).

One-step actor-critic (Sutton and Barto, "Reinforcement Learning: An Introduction", 2nd ed.,
2018, sec. 13.5): delta_t = r_{t+1} + gamma_t V(o_{t+1}) - V(o_t), the TD error, is both the
critic's error and the actor's advantage.
"""
import tensorflow as tf


def one_step_td_errors(rewards, discounts, values, next_values):
    """delta_t = r_{t+1} + discounts_t * V(o_{t+1}) - V(o_t), the target r + gamma V(o_{t+1})
    held constant (semi-gradient TD(0), sec. 9.3), so gradients reach only V(o_t).

    Args:
      rewards: [...] r_{t+1}, as the loss sees them (clipped).
      discounts: [...] gamma times the environment's discount: 0 after a termination.
      values: [...] V(o_t).
      next_values: [...] V(o_{t+1}).
    """
    return tf.stop_gradient(rewards + discounts * next_values) - values
