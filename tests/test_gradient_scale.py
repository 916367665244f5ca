"""benchmarks/gradient_scale.py: the loss's gradient per variable and per term on real Breakout
batches of a LASER learner, each term reaching only the variables it depends on."""
import numpy as np
import pytest

from agents.laser import config as laser_config
from benchmarks import gradient_scale
from launch import configs
from launch import experiments


def test_each_term_reaches_the_variables_it_depends_on():
    config = laser_config.check(laser_config.tiny(laser_config.LaserAtari()).replace(
        game='breakout', queue_size=100, max_episode_frames=200))
    builder = experiments.get('laser_atari').builder(config)
    learning = builder.learning_state()
    gradients = gradient_scale.batch_gradients(builder, learning, batches=2, actor_steps=120)
    names = [v.name for v in learning.network.trainable_variables]
    assert set(gradients) == {'loss', *gradient_scale.TERMS}
    for part in gradients.values():
        assert [g.shape for g in part] == [(2, *v.shape)
                                           for v in learning.network.trainable_variables]
        assert all(np.isfinite(g).all() for g in part)
    # The terms' gradients add up to the loss's, batch by batch (to float32's rounding of the
    # largest entry).
    for k in range(len(names)):
        loss = gradients['loss'][k]
        np.testing.assert_allclose(sum(gradients[t][k] for t in gradient_scale.TERMS), loss,
                                   rtol=0, atol=1e-5 * np.abs(loss).max())
    squares = {name: [gradient_scale.mean_square(g) for g in part]
               for name, part in gradients.items()}
    for name, loss, pg, baseline in zip(names, squares['loss'], squares['policy_gradient_loss'],
                                        squares['baseline_loss']):
        if 'baseline' in name:
            assert not pg.any() and baseline.any()
        if 'policy_logits' in name:
            assert pg.any() and not baseline.any()
        if 'torso' in name or 'lstm' in name:
            assert pg.any() and baseline.any() and loss.any()


def test_unit_sum_steps_and_their_t():
    """Every weight of a unit's column rising in every batch: a share of +1; half the inputs
    of each sign: 0; the share is of the loss's mean square and epsilon (TF1 RMSProp's
    denominator). t: the mean over its standard error across the batches."""
    batches = np.full((2, 3, 4, 2), -2.0)
    np.testing.assert_allclose(
        gradient_scale.unit_sum_steps(batches, gradient_scale.mean_square(batches), 0.0),
        np.ones((2, 2)))
    half = np.concatenate([np.full((2, 3, 2, 2), 2.0), np.full((2, 3, 2, 2), -2.0)], axis=2)
    np.testing.assert_allclose(
        gradient_scale.unit_sum_steps(half, gradient_scale.mean_square(half), 0.0),
        np.zeros((2, 2)))
    np.testing.assert_allclose(
        gradient_scale.unit_sum_steps(np.ones((1, 5, 1)), np.full((5, 1), 4.0), 12.0), [[-0.25]])
    shares = np.array([[1.0, 1.0], [3.0, -1.0], [2.0, 0.0]])
    np.testing.assert_allclose(gradient_scale.t_statistic(shares),
                               [2.0 / (1.0 / np.sqrt(3)), 0.0], atol=1e-12)


def test_a_run_directory_gives_the_runs_own_learner(tmp_path):
    """`--run_dir`: the run's config (its preset's and overrides' values), not the preset's;
    refused beside --preset or --game in one line."""
    config = laser_config.check(laser_config.quick(laser_config.LaserAtari()).replace(
        game='breakout', core_last_action_reward=False, rmsprop_epsilon=1e-5))
    configs.save(config, str(tmp_path))
    experiment, taken = gradient_scale.learner_config(str(tmp_path), 'quick', 'pong',
                                                      given=False)
    assert experiment.name == 'laser_atari'
    assert taken.rmsprop_epsilon == 1e-5 and not taken.core_last_action_reward
    assert taken.game == 'breakout'
    with pytest.raises(SystemExit, match='give --run_dir alone'):
        gradient_scale.learner_config(str(tmp_path), 'quick', 'pong', given=True)
