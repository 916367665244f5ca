"""benchmarks/recurrent_probe.py reads what a recurrent net does with real Breakout frames: an
untrained net's figures, and the growth of the torso's output and of the LSTM's cells when the
torso's last layer is scaled up (what a collapsed run showed, benchmarks/README.md)."""
import numpy as np

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
