"""The IMPALA loss on unrolls that cross episode ends, and the learner update itself."""
import numpy as np
import pytest
import tensorflow as tf

from agents.impala import config as impala_config
from agents.impala import learning

A = 3  # actions


def _config(**overrides):
    c = impala_config.ImpalaAtari()
    c = c.replace(**overrides)
    return c


def _steps(rng, n):
    """n random steps of one environment: logits, value, action, mu logits, reward."""
    return dict(logits=rng.normal(size=(n, A)).astype(np.float32),
                values=rng.normal(size=n).astype(np.float32),
                actions=rng.integers(A, size=n).astype(np.int32),
                behaviour_logits=rng.normal(size=(n, A)).astype(np.float32),
                rewards=rng.normal(scale=2.0, size=n).astype(np.float32))


def _loss(steps, discounts, mask, config):
    """actor_critic_loss on one sequence (batch of 1), time-major."""
    col = lambda x: tf.constant(np.asarray(x)[:, None])  # noqa: E731
    loss, metrics = learning.actor_critic_loss(
        col(steps['logits']), col(steps['values']), _data(
            action=col(steps['actions']), behaviour_logits=col(steps['behaviour_logits']),
            reward=col(steps['rewards']), discount=col(np.asarray(discounts, np.float32)),
            mask=col(np.asarray(mask, np.float32))), **learning.loss_scalars(config))
    return float(loss), {k: float(v) for k, v in metrics.items()}


def _data(**fields):
    """Time-major unroll fields, all from the online queue."""
    return dict(fields, origin=tf.zeros(fields['reward'].shape[1:], tf.int32))


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
    loss, _ = learning.actor_critic_loss(
        tf.constant(both['logits']), tf.constant(both['values']), _data(
            action=tf.constant(both['actions']),
            behaviour_logits=tf.constant(both['behaviour_logits']),
            reward=tf.constant(both['rewards']), discount=tf.ones([5, 2]),
            mask=tf.ones([5, 2])), **learning.loss_scalars(config))
    np.testing.assert_allclose(float(loss), loss_a + loss_b, rtol=1e-5)


def _batch(rng, B=2, T1=4, A=4):  # noqa: N803
    mask = np.ones((B, T1), np.float32)
    mask[0, 2] = 0.0   # one time-limit bootstrap step
    return {
        'observation': tf.constant(rng.integers(0, 255, (B, T1, 84, 84, 4), dtype=np.uint8)),
        'action': tf.constant(rng.integers(A, size=(B, T1)), tf.int32),
        'reward': tf.constant(rng.normal(size=(B, T1)), tf.float32),
        'discount': tf.constant(rng.integers(2, size=(B, T1)), tf.float32),
        'mask': tf.constant(mask),
        'behaviour_logits': tf.constant(rng.normal(size=(B, T1, A)), tf.float32)}


def _learning(jit_compile, config):
    from agents.networks import impala as networks  # pylint: disable=import-outside-toplevel
    tf.random.set_seed(7)
    network = networks.ImpalaFeedForwardNet(4, torso='shallow')
    network(tf.zeros((1, 84, 84, 4), tf.uint8))
    return learning.impala_learning(network, config, jit_compile=jit_compile)


def test_update_with_and_without_xla_agree():
    config = _config(total_frames=1_000)
    rng = np.random.default_rng(4)
    batches = [_batch(rng) for _ in range(3)]
    plain, compiled = _learning(False, config), _learning(True, config)
    for a, b in zip(plain.network.trainable_variables, compiled.network.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for batch in batches:
        m_plain, m_compiled = plain.update(batch), compiled.update(batch)
        for name in m_plain:
            np.testing.assert_allclose(m_plain[name], m_compiled[name], rtol=2e-3, atol=1e-4,
                                       err_msg=name)
    for a, b in zip(plain.network.trainable_variables, compiled.network.trainable_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5)
    assert any(np.any(a.numpy() != b.numpy()) for a, b in zip(
        plain.network.trainable_variables, _learning(False, config).network.trainable_variables))


def test_frames_count_real_steps_and_learning_rate_anneals_to_zero():
    # 2 unrolls of T = 3 steps (the 4th only bootstraps), one of them a mask-0 step:
    # 5 real steps of 4 frames each per update. The horizon is anneal_frames, not the budget.
    config = _config(anneal_frames=40, total_frames=20)
    state = _learning(False, config)
    rng = np.random.default_rng(5)
    rates = [float(state.update(_batch(rng))['learning_rate']) for _ in range(2)]
    assert int(state.frames.numpy()) == 40 and int(state.step.numpy()) == 2
    np.testing.assert_allclose(rates, [6e-4, 6e-4 * 0.5], rtol=1e-6)  # 1 - frames/anneal
    state.update(_batch(rng))
    assert float(state.learning_rate.numpy()) == 0.0


@pytest.mark.parametrize('jit_compile', [False, True])
def test_a_nonfinite_update_is_skipped_and_reported(jit_compile):
    """An infinite reward (unclipped) gives a non-finite loss: no variable of the network or
    the optimizer moves and the step stays, while `nonfinite` reports it; the next finite
    batch trains. (Not a NaN input: XLA's min and clamp return the other operand for NaN.)"""
    config = _config(total_frames=1_000, reward_clip=0.0)
    state = _learning(jit_compile, config)
    rng = np.random.default_rng(6)
    state.update(_batch(rng))
    before = [v.numpy().copy() for v in state.variables]
    bad = _batch(rng)
    bad['reward'] = tf.tensor_scatter_nd_update(bad['reward'], [[1, 1]], [float('inf')])
    metrics = state.update(bad)
    assert float(metrics['nonfinite']) == 1.0 and int(state.step.numpy()) == 1
    trainable = {v.ref() for v in state.trainable_variables}
    for variable, value in zip(state.variables, before):
        if variable.ref() in trainable or 'rms' in variable.name or 'momentum' in variable.name:
            np.testing.assert_array_equal(variable.numpy(), value, err_msg=variable.name)
    metrics = state.update(_batch(rng))
    assert float(metrics['nonfinite']) == 0.0 and int(state.step.numpy()) == 2
