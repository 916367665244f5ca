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

A second table follows each weight's units (`unit_sum_steps`): how far RMSProp moves a unit's
incoming weights together on average, the direction in which a first-layer filter's response
to the screen's background and the torso's constant output grow (benchmarks/weight_drift.py),
and which term pushes it.
"""
import numpy as np
from absl import app
from absl import flags

from benchmarks import recurrent_probe
from launch import configs
from launch import experiments


TERMS = ('policy_gradient_loss', 'baseline_loss', 'entropy_loss')


def batch_gradients(builder, learning, batches: int, actor_steps: int = 150
                    ) -> dict[str, list[np.ndarray]]:
    """Per variable of the learner's network, the loss's gradient on each of `batches` of
    `builder`'s dataset, and each of its TERMS' (weighted as the loss weighs them), read after
    its one actor has stepped its games `actor_steps` times (the quick preset's 150 fill 63 of
    the queue's 64 unrolls): {'loss' or term: [per variable: [batches, *shape]]}."""
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
    taken = {}
    for _ in range(batches):
        with tf.GradientTape(persistent=True) as tape:
            data = datasets.time_major(next(dataset))
            loss, metrics = learning.loss(*learning.outputs(data), data)
            parts = {'loss': loss, **{t: weights[t] * metrics[t] for t in TERMS}}
        for name, part in parts.items():
            taken.setdefault(name, []).append(
                [np.zeros(v.shape, np.float32) if g is None else g.numpy()
                 for g, v in zip(tape.gradient(part, network_variables), network_variables)])
    server.stop()
    return {name: [np.stack(per_variable) for per_variable in zip(*per_batch)]
            for name, per_batch in taken.items()}


def mean_square(gradients: np.ndarray) -> np.ndarray:
    """[batches, *shape] -> the mean square over the batches (RMSProp's ms), in float64."""
    return np.mean(np.square(gradients, dtype=np.float64), axis=0)


def unit_sum_steps(gradients: np.ndarray, loss_square: np.ndarray, epsilon: float
                   ) -> np.ndarray:
    """Per batch and unit (the weight's last axis), the RMSProp step of the unit's incoming
    weights summed, as a share of the largest possible: each entry steps by -lr * g /
    sqrt(ms + epsilon) (TF1's form; ms the loss's mean square), so the unit's weights summed
    move by -lr * sum(g / sqrt(ms + epsilon)), at most lr times the fan-in. Positive: the sum
    grows. `gradients` [batches, *shape] may be one term's, so the terms' shares add up to the
    loss's. Returns [batches, units]."""
    steps = -gradients / np.sqrt(loss_square + epsilon)
    fan_in = np.prod(steps.shape[1:-1])
    return steps.reshape(steps.shape[0], -1, steps.shape[-1]).sum(axis=1) / fan_in


def t_statistic(shares: np.ndarray) -> np.ndarray:
    """[batches, units] -> per unit, the mean over the batches over its standard error."""
    error = shares.std(axis=0, ddof=1) / np.sqrt(shares.shape[0])
    return shares.mean(axis=0) / np.maximum(error, 1e-30)


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
    if not 2 <= f.batches <= 30:
        raise SystemExit(f'error: --batches must be 2 to 30, got {f.batches}')
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
    gradients = batch_gradients(builder, learning, f.batches)
    loss_squares = [mean_square(g) for g in gradients['loss']]
    print('| variable | shape | rms gradient | median sqrt(ms) / sqrt(eps) | share ms > eps | '
          'rms of policy gradient / baseline / entropy terms |')
    print('|---|---|---|---|---|---|')
    for k, variable in enumerate(learning.network.trainable_variables):
        ms = loss_squares[k]
        terms = ' / '.join(f'{np.sqrt(mean_square(gradients[t][k]).mean()):.1e}'
                           for t in TERMS)
        print(f'| {variable.name} | {tuple(variable.shape)} | {np.sqrt(ms.mean()):.1e} | '
              f'{np.median(np.sqrt(ms)) / np.sqrt(epsilon):.3f} | {(ms > epsilon).mean():.3f} | '
              f'{terms} |')
    print("\nEach unit's incoming weights summed: their mean RMSProp step over the batches as a "
          'share of lr x fan-in (`unit_sum_steps`; +1: every weight rises by lr each update), '
          'and t, that mean over its standard error across the batches (|t| > 3: a push, not '
          "noise); at the units of the largest and the smallest mean, with the loss's terms' "
          'shares (policy gradient / baseline / entropy).\n')
    print('| variable | shape | largest: share, t (terms) | smallest: share, t (terms) |')
    print('|---|---|---|---|')
    for k, variable in enumerate(learning.network.trainable_variables):
        if len(variable.shape) < 2:
            continue
        shares = {name: unit_sum_steps(gradients[name][k], loss_squares[k], epsilon)
                  for name in ('loss', *TERMS)}
        mean, t = shares['loss'].mean(axis=0), t_statistic(shares['loss'])
        cells = []
        for unit in (np.argmax(mean), np.argmin(mean)):
            split = ' / '.join(f'{shares[name][:, unit].mean():+.3f}' for name in TERMS)
            cells.append(f'{mean[unit]:+.3f}, {t[unit]:+.1f} ({split})')
        print(f'| {variable.name} | {tuple(variable.shape)} | {cells[0]} | {cells[1]} |')
    print('\nUnits pushed (|t| > 3), per weight:')
    for k, variable in enumerate(learning.network.trainable_variables):
        if len(variable.shape) >= 2:
            print(f'- {variable.name} {tuple(variable.shape)}: '
                  f'{_pushed(unit_sum_steps(gradients["loss"][k], loss_squares[k], epsilon))}')


def _pushed(shares) -> str:
    """'N up / M down of units': the units whose summed step's t is above 3, below -3."""
    t = t_statistic(shares)
    return f'{int((t > 3).sum())} up / {int((t < -3).sum())} down of {t.size}'

if __name__ == '__main__':
    # Defined here, not at import: tests import this module beside the launchers' flags.
    flags.DEFINE_string('preset', 'quick', "LASER on Atari's preset.")
    flags.DEFINE_string('game', 'breakout', 'The game.')
    flags.DEFINE_integer('batches', 20, 'Batches the moments are taken over '
                         '(at most 30: the online queue holds 64 unrolls, 2 a batch).')
    flags.DEFINE_string('checkpoint', None, "A run's checkpoint to restore the network from "
                        '(default: untrained).')
    flags.DEFINE_string('run_dir', None, "A run whose config the learner takes (its preset, "
                        "overrides and game), in place of --preset and --game.")
    app.run(main)
