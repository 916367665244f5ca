"""Why table G.1 needs about 10M Pong frames to leave the uniform policy (issue 23, part 5):
the paper preset (or, where named, the quick one) with one change at a time, each stopped at
the same frames.

  python -m benchmarks.impala_pong_causes --variants=batch_8,entropy_polybeast
  python -m benchmarks.impala_pong_causes --summary_only

Variant V trains `launch.impala_atari --game=pong --preset=<its preset>` plus its change in
VARIANTS_ROOT/V (resumed if there), stopped by SIGTERM (which checkpoints) once its learner has
logged --frames. The learning rate keeps its preset's annealing horizon (table G.1's 200M
frames, the quick preset's too since issue 36; when these variants ran for issue 23 the quick
one annealed over its 20M), so stopping early changes nothing else.
The summary prints each variant's mean training return and the policy's entropy per step over
bins of --bin_frames (random play: -20.7; uniform: ln 6 = 1.792).
"""
import os

import numpy as np
from absl import app
from absl import flags

from benchmarks import results
from paper_tables import runs

M = 1_000_000
# name -> (the preset it changes, its one change, what that is)
VARIANTS = {
    'paper': ('paper', (), 'table G.1 unchanged'),
    'batch_8': ('paper', ('--config.batch_size=8',),
                "batch 8 (PolyBeast's): 4x the updates per frame"),
    'entropy_polybeast': ('paper', ('--config.entropy_cost=0.0006',),
                          "entropy cost 0.0006 (PolyBeast's)"),
    'epsilon_floor': ('paper', ('--config.rmsprop_epsilon=0.0001',),
                      "epsilon 1e-4 inside the square root: the denominator's floor 0.01 of "
                      "PolyBeast's epsilon 0.01 outside it"),
    'unroll_80': ('paper', ('--config.batch_size=8', '--config.unroll_length=80'),
                  "PolyBeast's batch shape, 8 unrolls of 80 steps: table G.1's 640 steps per "
                  "update, returns over 80 steps"),
    'rmsprop_pytorch': ('paper', ('--config.rmsprop_form=pytorch',),
                        "PolyBeast's optimizer form (torch.optim.RMSprop): the mean square "
                        "from zeros and epsilon 0.01 outside the square root"),
    'deep_torso': ('paper', ('--config.torso=deep',),
                   "PolyBeast's network, figure 3's deep residual torso"),
    'quick_deep_torso': ('quick', ('--config.torso=deep', '--config.total_frames=20000000'),
                         "impala_pong's row (the quick preset, batch 4) with figure 3's "
                         "deep residual torso: 8x the updates per frame of table G.1, so the "
                         "network's effect per update shows in fewer frames"),
}

_VARIANTS = flags.DEFINE_list('variants', list(VARIANTS), 'Which variants to train.')
_FRAMES = flags.DEFINE_integer('frames', 4 * M, 'Frames at which each variant is stopped.')
_RUN_ROOT = flags.DEFINE_string('variants_root', os.path.join('runs', 'pong_causes'),
                                'Where the variants\' runs are (VARIANTS_ROOT/<variant>).')
_BIN_FRAMES = flags.DEFINE_integer('bin_frames', M, 'Frames per bin of the summary.')
_SUMMARY_ONLY = flags.DEFINE_bool('summary_only', False, 'Only print the summary.')


def row(variant: str, frames: int) -> results.Row:
    """The variant as a results row: its command, stopped at `frames`."""
    preset, change, _ = VARIANTS[variant]
    marks = tuple(range(M, frames + 1, M))
    return results.Row(f'pong_{variant}', f'IMPALA, the {preset} preset with one change',
                       'launch.impala_atari', ('--game=pong', f'--preset={preset}', *change),
                       marks=marks, target=results.Target(frames), stop_frames=frames)


def summary(run_dir: str, frames: int, bin_frames: int = M) -> list[str]:
    """Per bin of `bin_frames`: games, mean training return, entropy per step, updates."""
    episodes = runs.read_csv(os.path.join(run_dir, 'logs', 'episodes.csv'))
    learner = runs.read_csv(os.path.join(run_dir, 'logs', 'learner.csv'))
    game_frames = np.array([float(e['frames']) for e in episodes])
    returns = np.array([float(e['episode_return']) for e in episodes])
    learner_frames = np.array([float(r['frames']) for r in learner])
    updates = np.array([float(r['step']) for r in learner])
    config = runs.read_config(run_dir)
    entropy = np.array([-float(r['entropy_loss']) for r in learner]) / (
        config['batch_size'] * config['unroll_length'])
    lines = []
    for start in range(0, frames, bin_frames):
        end = start + bin_frames
        games = returns[(game_frames > start) & (game_frames <= end)]
        logged = (learner_frames > start) & (learner_frames <= end)
        if not games.size or not logged.any():
            break
        lines.append(f'| {start / M:g}-{end / M:g}M | {games.size} | {games.mean():.2f} | '
                     f'{entropy[logged].mean():.3f} | {int(updates[logged][-1]):,} |')
    return lines


def main(argv):
    del argv
    unknown = sorted(set(_VARIANTS.value) - set(VARIANTS))
    if unknown:
        raise app.UsageError(f'unknown --variants {unknown}; known: {", ".join(VARIANTS)}')
    for variant in _VARIANTS.value:
        run_dir = os.path.join(_RUN_ROOT.value, variant)
        if not _SUMMARY_ONLY.value:
            results.train(row(variant, _FRAMES.value), run_dir)
        if not os.path.exists(os.path.join(run_dir, 'logs', 'learner.csv')):
            print(f'{variant}: no run in {run_dir}')
            continue
        preset, change, what = VARIANTS[variant]
        print(f'\n{variant}: {what} (--preset={preset} {" ".join(change)})')
        print('| frames | games | mean return | entropy per step | updates by then |')
        print('|---|---|---|---|---|')
        print('\n'.join(summary(run_dir, _FRAMES.value, _BIN_FRAMES.value)))


if __name__ == '__main__':
    app.run(main)
