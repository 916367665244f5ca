"""Prioritized-replay importance weights and priorities against Schaul et al. (2016) sec. 3.4."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import replay


@pytest.mark.parametrize('jit', [False, True])
def test_importance_weights_are_the_formula_normalised_by_the_batch_max(jit):
    rng = np.random.default_rng(0)
    size = 1000                                    # memory size N: cancels out
    probabilities = rng.dirichlet(np.ones(size))[:16]
    beta = 0.4
    raw = (size * probabilities) ** -beta
    expected = raw / raw.max()
    fn = tf.function(replay.importance_weights, jit_compile=jit)
    out = fn(probabilities, beta).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out.max() == 1.0 and out[np.argmin(probabilities)] == 1.0


def test_uniform_sampling_gives_equal_weights_and_beta_zero_gives_ones():
    np.testing.assert_allclose(replay.importance_weights(np.full(8, 0.01), 0.4).numpy(), 1.0)
    p = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(replay.importance_weights(p, 0.0).numpy(), 1.0)
    np.testing.assert_allclose(replay.importance_weights(p, 1.0).numpy(), [1.0, 0.5, 1 / 3])


def test_priorities_are_absolute_td_errors():
    out = replay.priorities_from_td_errors(np.array([-2.0, 0.0, 0.5], np.float32)).numpy()
    np.testing.assert_allclose(out, [2.0, replay.MIN_PRIORITY, 0.5], rtol=1e-5)
    assert out[1] > 0   # an item of priority 0 could never be sampled again


def test_rank_check():
    with pytest.raises(ValueError, match='probabilities'):
        replay.importance_weights(np.ones((2, 2)), 0.4)
