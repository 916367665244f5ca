"""benchmarks/weight_drift.py reads the direction a unit's weights move in together: a shift
of one Linear unit's incoming weights shows in its unit sum, not in the weights' root mean
square."""
import numpy as np

from agents.laser import config as laser_config
from benchmarks import recurrent_probe
from benchmarks import weight_drift
from launch import experiments


def test_a_unit_shifted_as_one_shows_in_its_sum_not_in_the_rms():
    config = laser_config.tiny(laser_config.LaserAtari()).replace(game='breakout')
    network = experiments.get('laser_atari').builder(config).network()
    untrained = weight_drift.drift(network)
    assert set(untrained) == {'conv_0', 'conv_1', 'torso_linear', 'lstm_w_i', 'lstm_w_h'}
    assert untrained['lstm_w_h']['bias_max'] == 1.0        # Sonnet's forget-gate bias

    linear = recurrent_probe.torso_of(network).linear
    fan_in, units = linear.w.shape
    shift = np.zeros([fan_in, units], np.float32)
    shift[:, 7] = 0.01                                     # every weight of unit 7, together
    before = linear.w.numpy()[:, 7].sum()
    linear.w.assign_add(shift)
    shifted = weight_drift.drift(network)['torso_linear']
    assert np.isclose(shifted['unit_sum_max'], before + 0.01 * fan_in, rtol=1e-4)
    assert shifted['weights_rms'] < 1.02 * untrained['torso_linear']['weights_rms']


def test_the_deep_torso_is_read_at_its_first_convolution():
    config = laser_config.tiny(laser_config.LaserAtari()).replace(game='breakout', torso='deep')
    network = experiments.get('laser_atari').builder(config).network()
    assert set(weight_drift.drift(network)) == {'section_0_conv', 'torso_linear', 'lstm_w_i',
                                                'lstm_w_h'}
