"""Where a run's network has moved from its initialisation, layer by layer (issue 57).

  python -m benchmarks.weight_drift --run_dir=RUN_DIR

For the untrained network and each checkpoint benchmarks/probed_runs.py kept
(RUN_DIR/kept_checkpoints), prints per layer (the shallow torso's two convolutions or the deep
torso's first, its Linear 256 and the LSTM's input and recurrent matrices): the weights' root
mean square, the largest and smallest unit sum, and the bias's mean and largest entry. A unit's
sum is the sum of its incoming weights (a convolution's over its kernel and input channels, a
gate's over the LSTM's inputs). Every input of the torso's layers and of w_i is at least 0
(frames in [0, 1], ReLU outputs), so a step that moves all of a unit's weights together shifts
its pre-activation by the sum's change times the inputs' mean: a direction of its own, unlike
any one weight (w_h's inputs, the LSTM's outputs, have either sign). The weights' root mean
square barely shows that direction; the unit sums do.
"""
import numpy as np
from absl import app
from absl import flags

from agents.networks import impala
from benchmarks import probed_runs
from benchmarks import recurrent_probe
from launch import evaluate

FIGURES = ('weights_rms', 'unit_sum_max', 'unit_sum_min', 'bias_mean', 'bias_max')


def _figures(weights: np.ndarray, bias: np.ndarray | None) -> dict[str, float]:
    """A layer's figures; the units are the last axis of `weights` (Sonnet's layout)."""
    sums = weights.reshape(-1, weights.shape[-1]).sum(axis=0)
    return {'weights_rms': float(np.sqrt(np.mean(weights ** 2))),
            'unit_sum_max': float(sums.max()), 'unit_sum_min': float(sums.min()),
            'bias_mean': float(bias.mean()) if bias is not None else float('nan'),
            'bias_max': float(bias.max()) if bias is not None else float('nan')}


def drift(network) -> dict[str, dict[str, float]]:
    """{layer: figures} of `network`'s torso (the shallow torso's two convolutions or the deep
    torso's first, and its Linear 256) and, for a recurrent network, its
    LSTM (w_i, w_h; the gates' bias with w_h)."""
    torso = recurrent_probe.torso_of(network)
    if isinstance(torso, impala.DeepTorso):   # its first convolution (the frames' only)
        convs = {'section_0_conv': torso.sections[0][0]}
    else:
        convs = {f'conv_{i}': conv for i, conv in enumerate(torso.convs)}
    layers = {name: (conv.w, conv.b) for name, conv in convs.items()}
    layers['torso_linear'] = (torso.linear.w, torso.linear.b)
    core = getattr(network, 'core', None)
    if core is not None:
        weights = {v.name.split('/')[-1].split(':')[0]: v for v in core.trainable_variables}
        layers['lstm_w_i'] = (weights['w_i'], None)
        layers['lstm_w_h'] = (weights['w_h'], weights['b'])
    return {name: _figures(np.asarray(w.numpy()), None if b is None else np.asarray(b.numpy()))
            for name, (w, b) in layers.items()}


def main(argv):
    del argv
    f = flags.FLAGS
    spec = recurrent_probe.load_run(f.run_dir)
    kept = probed_runs.kept_checkpoints(f.run_dir)
    if not kept:
        raise app.UsageError(f'no kept checkpoints in {f.run_dir}/{probed_runs.KEPT}: '
                             'train it with benchmarks.probed_runs first')
    builder = spec.experiment.builder(spec.config)
    print(f'{"frames":>10} {"layer":<13}' + ''.join(f'{name:>14}' for name in FIGURES))
    networks = [(0, builder.network())]
    networks += [(frames, evaluate.restore_network(builder, f.run_dir, path)[0])
                 for frames, path in sorted(kept.items())]
    for frames, network in networks:
        for layer, figures in drift(network).items():
            print(f'{frames:>10,} {layer:<13}'
                  + ''.join(f'{figures[name]:>14.4f}' for name in FIGURES))


if __name__ == '__main__':
    # Defined here, not at import: tests import this module beside the launchers' flags.
    flags.DEFINE_string('run_dir', None, 'A run trained by benchmarks.probed_runs.')
    app.run(main)
