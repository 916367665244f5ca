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
    squares = gradient_scale.gradient_mean_squares(builder, learning, batches=2, actor_steps=120)
    names = [v.name for v in learning.network.trainable_variables]
    assert set(squares) == {'loss', *gradient_scale.TERMS}
    for part in squares.values():
        assert [s.shape for s in part] == [tuple(v.shape)
                                           for v in learning.network.trainable_variables]
        assert all(np.isfinite(s).all() and (s >= 0).all() for s in part)
    for name, loss, pg, baseline in zip(names, squares['loss'], squares['policy_gradient_loss'],
                                        squares['baseline_loss']):
        if 'baseline' in name:
            assert not pg.any() and baseline.any()
        if 'policy_logits' in name:
            assert pg.any() and not baseline.any()
        if 'torso' in name or 'lstm' in name:
            assert pg.any() and baseline.any() and loss.any()


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
