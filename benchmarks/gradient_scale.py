"""Where RMSProp's epsilon puts each weight of a LASER learner: the gradient's scale per
variable on real batches of the game, against sqrt(epsilon) (issue 57).

  python -m benchmarks.gradient_scale [--preset=quick] [--game=breakout] [--batches=20]
      [--checkpoint=PATH]
  python -m benchmarks.gradient_scale --run_dir=RUN [--checkpoint=RUN/kept_checkpoints/ckpt-N]

With `--run_dir`, the learner is the run's (its config.json: preset and overrides), on the
run's game, in place of `--preset` and `--game`.

Runs a real replay server and one actor (8 games) with the learner's network (untrained, or
restored from `--checkpoint`), draws `--batches` of the preset's batches (online unrolls and
replayed rows) and prints, per variable, the root mean square of the loss's gradient and how
it compares with sqrt(epsilon), the floor of TF1 RMSProp's denominator sqrt(ms + epsilon):
the median over the variable's entries of sqrt(ms) / sqrt(epsilon) (ms: the mean square over
the batches), and the share of entries where ms > epsilon. Where ms is far below epsilon a
step is lr / sqrt(epsilon) times the gradient (plain gradient descent); far above, it is
lr times the gradient's sign (the normalised steps of RMSProp). The last column splits the
gradient into the loss's terms (IMPALA sec. 4.2's policy gradient, baseline and entropy, as
the loss weighs them).
"""
import numpy as np
from absl import app
from absl import flags

from benchmarks import recurrent_probe
from launch import configs
from launch import experiments


TERMS = ('policy_gradient_loss', 'baseline_loss', 'entropy_loss')


def gradient_mean_squares(builder, learning, batches: int, actor_steps: int = 150
                          ) -> dict[str, list[np.ndarray]]:
    """Per variable of the learner's network, the mean square of the loss's gradient, and of
    each of its TERMS' (weighted as the loss weighs them), over `batches` of `builder`'s
    dataset, read after its one actor has stepped its games `actor_steps` times (the quick
    preset's 150 fill 63 of the queue's 64 unrolls): {'loss' or term: [per variable]}."""
    import tempfile  # pylint: disable=import-outside-toplevel
    import reverb  # pylint: disable=import-outside-toplevel
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from agents.core import builders  # pylint: disable=import-outside-toplevel
    from agents.core import datasets  # pylint: disable=import-outside-toplevel
    from agents.core import variables  # pylint: disable=import-outside-toplevel
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    variables.VariablePusher(reverb.Client(address),
                             learning.network.trainable_variables).push(step=1)
    with tempfile.TemporaryDirectory() as run_dir:
        builders.make_actor(builder, address, run_dir, actor_id=0).run(num_steps=actor_steps)
    weights = {'policy_gradient_loss': 1.0, 'baseline_loss': builder.config.baseline_cost,
               'entropy_loss': learning.hyperparameters['entropy_cost']}
    network_variables = learning.network.trainable_variables
    dataset = builder.dataset(address, 0)
    squares = {}
    for _ in range(batches):
        with tf.GradientTape(persistent=True) as tape:
            data = datasets.time_major(next(dataset))
            loss, metrics = learning.loss(*learning.outputs(data), data)
            parts = {'loss': loss, **{t: weights[t] * metrics[t] for t in TERMS}}
        for name, part in parts.items():
            step = [np.zeros(v.shape) if g is None else g.numpy().astype(np.float64) ** 2
                    for g, v in zip(tape.gradient(part, network_variables), network_variables)]
            squares[name] = [a + b for a, b in zip(squares.get(name, [0.0] * len(step)), step)]
    server.stop()
    return {name: [s / batches for s in sums] for name, sums in squares.items()}


def learner_config(run_dir: str | None, preset: str, game: str, given: bool):
    """(the experiment, the config) the gradients are taken with: the run's in `run_dir`
    (refused beside a `--preset` or `--game` given too), else LASER on Atari's `preset` on
    `game` with one actor of 8 games; SystemExit with one line for bad input."""
    if run_dir:
        if given:
            raise SystemExit('error: --run_dir takes the run\'s preset and game: give '
                             '--run_dir alone, or --preset and --game')
        spec = recurrent_probe.load_run(run_dir)
        return spec.experiment, spec.config
    experiment = experiments.get('laser_atari')
    if preset not in experiment.presets:
        raise SystemExit(f'error: unknown --preset={preset}; choose one of: '
                         f'{", ".join(experiment.presets)}')
    try:
        return experiment, experiment.check(experiment.presets[preset](
            experiment.paper_config()).replace(game=game, envs_per_actor=8))
    except configs.ConfigError as e:
        raise SystemExit(f'error: {e}') from None


def main(argv):
    del argv
    f = flags.FLAGS
    if not 1 <= f.batches <= 30:
        raise SystemExit(f'error: --batches must be 1 to 30, got {f.batches}')
    experiment, config = learner_config(f.run_dir, f.preset, f.game,
                                        given=f['preset'].present or f['game'].present)
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    builder = experiment.builder(config)
    tf.random.set_seed(config.seed)
    learning = builder.learning_state()
    if f.checkpoint:
        tf.train.Checkpoint(learner=tf.train.Checkpoint(network=learning.network)).restore(
            f.checkpoint).expect_partial()
    epsilon = config.rmsprop_epsilon
    print(f'{f.run_dir or f.preset + " preset"} ({config.core}), epsilon {epsilon:g}, '
          f'{f.batches} batches of {config.batch_size}, '
          f'{f.checkpoint or "untrained"}:')
    squares = gradient_mean_squares(builder, learning, f.batches)
    print('| variable | shape | rms gradient | median sqrt(ms) / sqrt(eps) | share ms > eps | '
          'rms of policy gradient / baseline / entropy terms |')
    print('|---|---|---|---|---|---|')
    for k, variable in enumerate(learning.network.trainable_variables):
        ms = squares['loss'][k]
        terms = ' / '.join(f'{np.sqrt(squares[t][k].mean()):.1e}' for t in TERMS)
        print(f'| {variable.name} | {tuple(variable.shape)} | {np.sqrt(ms.mean()):.1e} | '
              f'{np.median(np.sqrt(ms)) / np.sqrt(epsilon):.3f} | {(ms > epsilon).mean():.3f} | '
              f'{terms} |')


if __name__ == '__main__':
    # Defined here, not at import: tests import this module beside the launchers' flags.
    flags.DEFINE_string('preset', 'quick', "LASER on Atari's preset.")
    flags.DEFINE_string('game', 'breakout', 'The game.')
    flags.DEFINE_integer('batches', 20, 'Batches the mean squares are taken over '
                         '(at most 30: the online queue holds 64 unrolls, 2 a batch).')
    flags.DEFINE_string('checkpoint', None, "A run's checkpoint to restore the network from "
                        '(default: untrained).')
    flags.DEFINE_string('run_dir', None, "A run whose config the learner takes (its preset, "
                        "overrides and game), in place of --preset and --game.")
    app.run(main)
