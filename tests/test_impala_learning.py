"""The IMPALA loss on unrolls that cross episode ends, and the learner update itself."""
import ml_collections
import numpy as np
import pytest
import tensorflow as tf

from agents.impala import config as impala_config
from agents.impala import learning

A = 3  # actions


def _config(**overrides):
    c = impala_config.atari_experts()
    c.update(overrides)
    return c


def _steps(rng, n):
    """n random steps of one environment: logits, value, action, mu logits, reward."""
    return dict(logits=rng.normal(size=(n, A)).astype(np.float32),
                values=rng.normal(size=n).astype(np.float32),
                actions=rng.integers(A, size=n).astype(np.int32),
                behaviour_logits=rng.normal(size=(n, A)).astype(np.float32),
                rewards=rng.normal(scale=2.0, size=n).astype(np.float32))


def _loss(steps, discounts, mask, config):
    """impala_loss on one sequence (batch of 1), time-major."""
    col = lambda x: tf.constant(np.asarray(x)[:, None])  # noqa: E731
    loss, metrics = learning.impala_loss(
        col(steps['logits']), col(steps['values']), actions=col(steps['actions']),
        behaviour_logits=col(steps['behaviour_logits']), rewards=col(steps['rewards']),
        discounts=col(np.asarray(discounts, np.float32)),
        mask=col(np.asarray(mask, np.float32)), config=config)
    return float(loss), {k: float(v) for k, v in metrics.items()}


def _concat(*parts):
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


@pytest.mark.parametrize('truncated', [False, True])
def test_unroll_across_an_episode_end_equals_the_two_episodes_apart(truncated):
    """Eq. 1 with per-step discounts: a zero discount cuts every trace; a time limit
    bootstraps from the final observation (the mask-0 step the actor writes)."""
    rng = np.random.default_rng(0)
    config = _config()
    first, final, second = _steps(rng, 3), _steps(rng, 1), _steps(rng, 4)
    # The episode that ends after its 3rd step: discount 0 (game over) or 1 (time limit).
    end = 1.0 if truncated else 0.0
    if truncated:
        # The actor writes the final observation as a mask-0 step with reward 0, discount 0.
        final['rewards'][:] = 0.0
        together = _concat(first, final, second)
        discounts = [1, 1, end, 0, 1, 1, 1, 1]
        mask = [1, 1, 1, 0, 1, 1, 1, 1]
    else:
        together = _concat(first, second)
        discounts = [1, 1, end, 1, 1, 1, 1]
        mask = [1] * 7
    loss, _ = _loss(together, discounts, mask, config)

    # Apart: the first episode bootstraps from V(final observation) with discount `end`.
    apart_first, _ = _loss(_concat(first, final), [1, 1, end, 0], [1, 1, 1, 1], config)
    apart_second, _ = _loss(second, [1, 1, 1, 1], [1, 1, 1, 1], config)
    np.testing.assert_allclose(loss, apart_first + apart_second, rtol=1e-5)


def test_mask_zero_steps_add_nothing():
    rng = np.random.default_rng(1)
    config = _config()
    steps = _steps(rng, 5)
    base, _ = _loss(steps, [1, 1, 0, 1, 1], [1, 1, 1, 0, 1], config)
    steps['logits'][3] *= 10.0   # a different policy at the mask-0 step changes nothing
    steps['actions'][3] = (steps['actions'][3] + 1) % A
    changed, _ = _loss(steps, [1, 1, 0, 1, 1], [1, 1, 1, 0, 1], config)
    np.testing.assert_allclose(base, changed, rtol=1e-6)


def test_rewards_are_clipped_in_the_loss_path():
    rng = np.random.default_rng(2)
    steps = _steps(rng, 4)
    steps['rewards'][:] = [5.0, -7.0, 0.5, 100.0]
    clipped = dict(steps, rewards=np.clip(steps['rewards'], -1, 1))
    with_clip, _ = _loss(steps, [1] * 4, [1] * 4, _config(reward_clip=1.0))
    pre_clipped, _ = _loss(clipped, [1] * 4, [1] * 4, _config(reward_clip=0.0))
    np.testing.assert_allclose(with_clip, pre_clipped, rtol=1e-6)


def test_loss_is_summed_over_batch_and_time():
    rng = np.random.default_rng(3)
    config = _config()
    a, b = _steps(rng, 5), _steps(rng, 5)
    loss_a, _ = _loss(a, [1] * 5, [1] * 5, config)
    loss_b, _ = _loss(b, [1] * 5, [1] * 5, config)
    both = {k: np.stack([a[k], b[k]], axis=1) for k in a}
    loss, _ = learning.impala_loss(
        tf.constant(both['logits']), tf.constant(both['values']),
        actions=tf.constant(both['actions']),
        behaviour_logits=tf.constant(both['behaviour_logits']),
        rewards=tf.constant(both['rewards']), discounts=tf.ones([5, 2]),
        mask=tf.ones([5, 2]), config=config)
    np.testing.assert_allclose(float(loss), loss_a + loss_b, rtol=1e-5)
