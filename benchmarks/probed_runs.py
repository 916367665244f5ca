"""A results row's runs with the recurrent probe at their checkpoints (issue 57).

  python -m benchmarks.probed_runs --row=laser_breakout [--seed=N] [--run_root=runs/results]
      [--marks=1000000,2000000,5000000] [--probe_only]

Trains each seed of the row as `benchmarks.results --row` does (resuming, collecting and
drawing the row), keeping a copy of every checkpoint the learner writes (its directory keeps
only the last three) in RUN_DIR/kept_checkpoints; then probes the kept checkpoint nearest each
mark with `recurrent_probe.probe` (400 steps of the game) and writes the figures to
results/<row>/probes.csv, a line per seed and mark, printing them as a table. `--probe_only`
probes the kept checkpoints of runs already trained.
"""
import csv
import os
import shutil
import subprocess
import sys
import time

from absl import app
from absl import flags

from benchmarks import recurrent_probe
from benchmarks import results
from launch import configs
from launch import evaluate

# --row, --seed, --run_root and --results_dir are benchmarks.results' own flags.
_MARKS = flags.DEFINE_list('marks', None, 'Frames to probe at (default: 500k, 1M and the '
                           "row's marks).")
_STEPS = flags.DEFINE_integer('steps', 400, 'Agent steps each probe plays.')
_PROBE_ONLY = flags.DEFINE_bool('probe_only', False, 'Probe the kept checkpoints, no training.')

KEPT = 'kept_checkpoints'
FIGURES = ('torso_mean', 'torso_units_at_zero', 'gate_input_std_from_torso',
           'gate_input_std_from_state', 'cell_abs_mean', 'cell_abs_max',
           'lstm_output_std_over_time', 'policy_entropy')


def keep_new_checkpoints(run_dir: str) -> None:
    """Copies the checkpoints the run's state file names (each complete: TF names one there
    only once its files are written) into RUN_DIR/kept_checkpoints, those not copied yet."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    directory = os.path.join(run_dir, 'checkpoints')
    state = tf.train.get_checkpoint_state(directory) if os.path.isdir(directory) else None
    if state is None:
        return
    kept = os.path.join(run_dir, KEPT)
    os.makedirs(kept, exist_ok=True)
    for path in state.all_model_checkpoint_paths:
        name = os.path.basename(path)
        if os.path.exists(os.path.join(kept, name + '.index')):
            continue
        try:
            files = [f for f in os.listdir(directory) if f.startswith(name + '.')]
            for f in sorted(files, key=lambda f: f.endswith('.index')):   # the index last
                shutil.copyfile(os.path.join(directory, f), os.path.join(kept, f))
        except FileNotFoundError:   # deleted by the manager meanwhile: a later one is kept
            continue


def kept_checkpoints(run_dir: str) -> dict[int, str]:
    """{frames: checkpoint path} of RUN_DIR/kept_checkpoints (named ckpt-<frames>)."""
    kept = os.path.join(run_dir, KEPT)
    if not os.path.isdir(kept):
        return {}
    return {int(f[len('ckpt-'):-len('.index')]): os.path.join(kept, f[:-len('.index')])
            for f in os.listdir(kept) if f.startswith('ckpt-') and f.endswith('.index')}


def train_keeping_checkpoints(row_name: str, seed: int, run_dir: str) -> None:
    """`benchmarks.results --row --seed` (train, collect, draw), copying checkpoints aside."""
    command = [sys.executable, '-m', 'benchmarks.results', f'--row={row_name}', f'--seed={seed}',
               f'--run_root={flags.FLAGS.run_root}', f'--results_dir={flags.FLAGS.results_dir}']
    process = subprocess.Popen(command)
    while process.poll() is None:
        time.sleep(5)
        keep_new_checkpoints(run_dir)
    keep_new_checkpoints(run_dir)
    if process.returncode != 0:
        raise SystemExit(f'failed: {" ".join(command)}')


def probe_marks(run_dir: str, marks: list[int], steps: int) -> list[dict]:
    """The probe's figures at the kept checkpoint nearest each mark (one line per mark,
    none for a mark whose nearest checkpoint is an earlier mark's)."""
    kept = kept_checkpoints(run_dir)
    if not kept:
        raise SystemExit(f'{run_dir}/{KEPT}: no kept checkpoints (train with this script)')
    spec = configs.load(run_dir)
    builder = spec.experiment.builder(spec.config)
    lines = []
    for mark in marks:
        frames = min(kept, key=lambda f: abs(f - mark))
        if any(line['checkpoint_frames'] == frames for line in lines):
            continue    # a run stopped before the mark: probed once, at its last checkpoint
        network, _ = evaluate.restore_network(builder, run_dir, kept[frames])
        figures = recurrent_probe.probe(builder, network, steps)
        lines.append({'mark': mark, 'checkpoint_frames': frames,
                      **{name: round(float(figures[name]), 4) for name in FIGURES}})
    return lines


def write_probes(path: str, seed: int, lines: list[dict]) -> None:
    """PATH := its lines of other seeds and `lines` for `seed`, by seed and mark."""
    kept = []
    if os.path.exists(path):
        with open(path, newline='') as f:
            kept = [line for line in csv.DictReader(f) if int(line['seed']) != seed]
    rows = kept + [{'seed': seed, **line} for line in lines]
    rows.sort(key=lambda line: (int(line['seed']), int(line['mark'])))
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=['seed', 'mark', 'checkpoint_frames', *FIGURES])
        writer.writeheader()
        writer.writerows(rows)


def main(argv):
    del argv
    if flags.FLAGS.row not in results.ROWS:
        raise SystemExit(f'error: unknown --row={flags.FLAGS.row}; rows: {", ".join(results.ROWS)}')
    row = results.ROWS[flags.FLAGS.row]
    try:
        marks = sorted({int(m) for m in _MARKS.value} if _MARKS.value
                       else {500_000, 1_000_000, *row.marks})
    except ValueError:
        raise SystemExit(f'error: --marks must be frames, got {_MARKS.value}') from None
    seeds = row.seeds if flags.FLAGS.seed is None else (flags.FLAGS.seed,)
    path = os.path.join(flags.FLAGS.results_dir, row.name, 'probes.csv')
    for seed in seeds:
        run_dir = row.run_dir(flags.FLAGS.run_root, seed)
        if not _PROBE_ONLY.value:
            train_keeping_checkpoints(row.name, seed, run_dir)
        lines = probe_marks(run_dir, marks, _STEPS.value)
        write_probes(path, seed, lines)
        print(f'seed {seed}: ' + '; '.join(
            f"{line['checkpoint_frames']:,}: units at zero {line['torso_units_at_zero']:.2f}, "
            f"cell max {line['cell_abs_max']:.1f}, "
            f"output std {line['lstm_output_std_over_time']:.3f}"
            for line in lines), flush=True)


if __name__ == '__main__':
    app.run(main)
