"""What a recurrent run's network does with the frames: the torso's and the LSTM's activations.

  python -m benchmarks.recurrent_probe --run_dir=RUN_DIR [--checkpoint=PATH] [--steps=400]
      [--untrained]

Restores the run's network (the latest checkpoint, `--checkpoint`, or with `--untrained` a
freshly initialised one), plays `--steps` agent steps of the run's game with it (actions
sampled from its policy, the LSTM state carried and reset at each episode's start) and prints,
over those steps: the torso's output (its mean, its standard deviation over time, the share of
its units at zero), the spread of the LSTM gates' pre-activations from the torso's output and
from the state, the LSTM cell's magnitude, the LSTM output's magnitude and its standard
deviation over time, the policy's entropy, and how the value and the cells' magnitude follow
the steps since the core's last reset (their correlations with it: a core that times the
episode from its reset reads near 1). A collapsed core reads as large cells and an output that
no longer changes with the frame (benchmarks/README.md, "Why the recurrent agent stayed at
random play").
"""

import numpy as np
from absl import app
from absl import flags

from launch import configs
from launch import evaluate


def torso_of(network):
    """The network's torso (figure 3's convolutions and Linear 256)."""
    from agents.networks import impala  # pylint: disable=import-outside-toplevel
    return next(module for module in network.submodules if isinstance(module, impala.Torso))


def probe(builder, network, num_steps: int, seed: int = 1) -> dict[str, float]:
    """The activation figures over `num_steps` steps of one environment."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from agents.core import steps  # pylint: disable=import-outside-toplevel
    env = builder.environments.environment(seed=seed)
    inputs = steps.StepInputs([env.reset()], builder.step_spec()['action'])
    state = network.initial_state(1)
    torso = torso_of(network)
    rng = np.random.default_rng(seed)
    record = {'torso': [], 'cell': [], 'hidden': [], 'entropy': [], 'value': [], 'since': []}
    for _ in range(num_steps):
        batch = inputs.batch()
        record['since'].append(0 if batch.first[0] else record['since'][-1] + 1)
        # Tensors: snt.BatchApply leaves numpy frames unmerged, which the deep torso's
        # pooling refuses.
        outputs, state = network.unroll(*(tf.constant(x[None]) for x in (
            batch.observation, batch.prev_action, batch.prev_reward)), None,
            tf.constant(batch.first[None]), state)
        record['torso'].append(torso(tf.constant(batch.observation)).numpy()[0])
        record['cell'].append(state.cell.numpy()[0])
        record['hidden'].append(state.hidden.numpy()[0])
        record['value'].append(float(outputs.value[0, 0]))
        probabilities = tf.nn.softmax(outputs.logits[0, 0]).numpy().astype(np.float64)
        record['entropy'].append(-np.sum(probabilities * np.log(probabilities)))
        action = rng.choice(len(probabilities), p=probabilities / probabilities.sum())
        timestep = env.step(action)
        if timestep.last():
            timestep = env.reset()
        inputs.advance(0, action, timestep)
    torso_out, cell, hidden = (np.array(record[k]) for k in ('torso', 'cell', 'hidden'))
    # The gates' pre-activations from the torso's output and from the state before each step
    # (the first step's state reset to zeros is left out).
    weights = {v.name.split('/')[-1].split(':')[0]: v.numpy()
               for v in network.core.trainable_variables}      # Sonnet's LSTM: w_i, w_h, b
    w_i, w_h = weights['w_i'], weights['w_h']
    from_torso = torso_out @ w_i[:torso_out.shape[1]]
    from_state = hidden[:-1] @ w_h
    return {'torso_mean': torso_out.mean(), 'torso_std_over_time': torso_out.std(0).mean(),
            'torso_units_at_zero': (torso_out == 0).mean(),
            'gate_input_std_from_torso': from_torso.std(),
            'gate_input_std_from_state': from_state.std(),
            'cell_abs_mean': np.abs(cell).mean(), 'cell_abs_max': np.abs(cell).max(),
            'lstm_output_abs_mean': np.abs(hidden).mean(),
            'lstm_output_std_over_time': hidden.std(0).mean(),
            'policy_entropy': float(np.mean(record['entropy'])),
            'value_steps_since_reset_corr': _correlation(record['value'], record['since']),
            'cell_steps_since_reset_corr': _correlation(np.abs(cell).mean(1), record['since'])}


def _correlation(x, y) -> float:
    """Pearson's correlation of two series; 0 where either is constant."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.std() == 0 or y.std() == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])


def load_run(run_dir: str | None) -> configs.RunSpec:
    """The run spec of `run_dir`; a one-line usage error when there is none."""
    try:
        return configs.load(run_dir or '')
    except configs.ConfigError as e:
        raise app.UsageError(str(e)) from None


def main(argv):
    del argv
    f = flags.FLAGS
    spec = load_run(f.run_dir)
    config = spec.config
    core = config.core if 'core' in config else None
    if core != 'lstm':
        raise app.UsageError(f'the run in {f.run_dir} has core={core}: '
                             'this probe reads an LSTM core')
    builder = spec.experiment.builder(config)
    if f.untrained:
        network, frames = builder.network(), 0
    else:
        try:
            network, frames = evaluate.restore_network(builder, f.run_dir, f.checkpoint)
        except configs.ConfigError as e:
            raise app.UsageError(str(e)) from None
    figures = probe(builder, network, f.steps)
    print(f'{f.run_dir} at {frames:,} frames, {f.steps} steps of {config.game}:')
    for name, value in figures.items():
        print(f'  {name}={value:.4f}')


if __name__ == '__main__':
    # Defined here, not at import: tests import this module beside the launchers' flags.
    flags.DEFINE_string('run_dir', None, 'A run of a recurrent (core=lstm) agent.')
    flags.DEFINE_string('checkpoint', None, 'Checkpoint path (default: the latest).')
    flags.DEFINE_integer('steps', 400, 'Agent steps played.')
    flags.DEFINE_bool('untrained', False, 'Probe a freshly initialised network.')
    app.run(main)
