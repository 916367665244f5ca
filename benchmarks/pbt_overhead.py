"""What population-based training costs: frames/s of a population against independent runs.

  python -m benchmarks.pbt_overhead [--frames=150000] [--game=pong] [--members=4]

Back to back, quick preset, one actor process per learner, every learner `--frames` frames:
(a) one `launch.impala_atari` run with `--config.pbt_population=--members` (IMPALA app. F,
    with a burn-in of `--burn_in` frames and a fitness window of `--window` games, so that
    members evolve several times; `--copy_threshold=-1` makes every comparison with a member
    that has a fitness copy its checkpoint, the most work PBT can do);
(b) the same run without PBT: as many independent learners on one replay server;
(c) as many separate runs, each with its own replay server, started together.
The figure is the sum over learners of the frames each counted per second, from its
learner.csv between 20% and 100% of its frames (start-up and evaluation left out).
"""
import os
import sys
import tempfile

from absl import app
from absl import flags

from agents.core import pbt
from benchmarks import runs

_FRAMES = flags.DEFINE_integer('frames', 150_000, 'Frames each learner trains.')
_GAME = flags.DEFINE_string('game', 'pong', 'Atari game.')
_MEMBERS = flags.DEFINE_integer('members', 4, 'Population size, and independent runs.')
_BURN_IN = flags.DEFINE_integer('burn_in', 20_000, 'PBT burn-in, frames.')
_WINDOW = flags.DEFINE_integer('window', 8, 'PBT fitness window, games.')
_COPY_THRESHOLD = flags.DEFINE_float('copy_threshold', -1.0, 'PBT copy threshold.')


def _learner_csv(directory):
    return os.path.join(directory, 'logs', 'learner.csv')


def _report(label, figures):
    print(f'{label}: {sum(figures):,.0f} frames/s (per learner: '
          f'{", ".join(f"{x:,.0f}" for x in figures)})', flush=True)
    return sum(figures)


def main(argv):
    del argv
    members = _MEMBERS.value
    common = [sys.executable, '-m', 'launch.impala_atari', f'--game={_GAME.value}',
              '--preset=quick', f'--config.total_frames={_FRAMES.value}',
              '--config.num_actors=1', '--config.log_interval_s=2', '--config.eval_episodes=1']
    with tempfile.TemporaryDirectory() as root:
        population_dir, learners_dir = os.path.join(root, 'pbt'), os.path.join(root, 'learners')
        member_dirs = [os.path.join(population_dir, f'learner_{i}') for i in range(members)]
        runs.run_together([common + [
            f'--run_dir={population_dir}', f'--config.pbt_population={members}',
            f'--config.pbt_burn_in_frames={_BURN_IN.value}',
            f'--config.pbt_fitness_episodes={_WINDOW.value}',
            f'--config.pbt_copy_threshold={_COPY_THRESHOLD.value}']])
        a = _report(f'(a) PBT population of {members}',
                    [runs.frames_per_second(_learner_csv(d)) for d in member_dirs])
        rows = [row for i in range(members) for row in pbt.read_lineage(
            pbt.lineage_path(os.path.join(population_dir, 'pbt'), i))]
        print(f'    evolution steps: {sum(r["event"] in ("copy", "keep") for r in rows)}, of '
              f'which copies: {sum(r["event"] == "copy" for r in rows)}', flush=True)
        runs.run_together([common + [f'--run_dir={learners_dir}',
                                     f'--config.num_learners={members}']])
        b = _report(f'(b) {members} independent learners, one run',
                    [runs.frames_per_second(_learner_csv(os.path.join(learners_dir,
                                                                      f'learner_{i}')))
                     for i in range(members)])
        separate = [os.path.join(root, f'run_{i}') for i in range(members)]
        runs.run_together([common + [f'--run_dir={d}', f'--config.seed={i}']
                           for i, d in enumerate(separate)])
        c = _report(f'(c) {members} separate runs',
                    [runs.frames_per_second(_learner_csv(d)) for d in separate])
    print(f'ratio (a)/(b): {a / b:.2f}; (a)/(c): {a / c:.2f}')


if __name__ == '__main__':
    app.run(main)
