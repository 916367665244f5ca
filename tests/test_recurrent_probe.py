"""benchmarks/recurrent_probe.py reads what a recurrent net does with real Breakout frames: an
untrained net's figures, the growth of the torso's output and of the LSTM's cells when the
torso's last layer is scaled up (what a collapsed run showed, benchmarks/README.md), and a core
that counts the steps since its reset."""
import numpy as np
import tensorflow as tf

from agents.laser import config as laser_config
from benchmarks import recurrent_probe
from launch import experiments


def test_probe_reads_the_torso_and_the_cells_growing():
    config = laser_config.tiny(laser_config.LaserAtari()).replace(game='breakout')
    builder = experiments.get('laser_atari').builder(config)
    network = builder.network()
    untrained = recurrent_probe.probe(builder, network, num_steps=40)
    assert 0.2 < untrained['torso_units_at_zero'] < 0.8     # ReLUs of a random init
    assert untrained['policy_entropy'] > np.log(4) - 0.02  # Breakout's 4 actions, near uniform
    assert untrained['cell_abs_max'] < 5.0

    linear = recurrent_probe.torso_of(network).linear
    linear.w.assign(linear.w * 300.0)
    grown = recurrent_probe.probe(builder, network, num_steps=40)
    assert grown['torso_mean'] > 100 * untrained['torso_mean']
    assert grown['cell_abs_mean'] > 10 * untrained['cell_abs_mean']


def test_probe_reads_a_core_that_counts_the_steps_since_its_reset():
    """Gates held open (input and forget biases of +10) and a constant candidate (its bias
    +5): each cell adds about 1 a step, so the cells' magnitude follows the steps since the
    reset (the tiny preset's whole games outlast the 40 steps), where an untrained core's cells
    rise over the first steps and then level off (a correlation of 0.83-0.91 over 40 steps for
    six initialisations)."""
    config = laser_config.tiny(laser_config.LaserAtari()).replace(game='breakout')
    builder = experiments.get('laser_atari').builder(config)
    tf.random.set_seed(0)
    network = builder.network()
    settled = recurrent_probe.probe(builder, network, num_steps=40)
    bias = network.core.b          # Sonnet's LSTM: gates i, f, g, o
    hidden = bias.shape[0] // 4
    bias.assign(np.concatenate([np.full(hidden, 10.0), np.full(hidden, 10.0),
                                np.full(hidden, 5.0), np.zeros(hidden)]).astype(np.float32))
    counting = recurrent_probe.probe(builder, network, num_steps=40)
    assert counting['cell_steps_since_reset_corr'] > 0.99
    assert counting['cell_abs_max'] > 35
    assert settled['cell_steps_since_reset_corr'] < 0.95
