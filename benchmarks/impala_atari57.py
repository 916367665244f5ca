"""The multi-task IMPALA agent on all 57 Atari games, deep network: frames/s on this machine.

  python -m benchmarks.impala_atari57 [--frames=300000] [--envs_per_game=1,2] [--actors=3]

For each count of environments per game, one `launch.impala_atari57` run (quick preset: one
learner, `--actors` actor processes, every game of Atari-57, the deep feed-forward net of
appendix G on the full 18-action set) trains `--frames` frames. The actor count per game is set
by the fixed assignment of builders.assigned_task (IMPALA sec. 5.3: "a fixed number of actors to
each task"): environment g of a learner's actors plays game g mod 57, so envs_per_actor =
envs_per_game x 57 / actors. Printed per run: the learner's frames/s between 20% and 100% of
its frames (start-up left out; the run is stopped before its final evaluation), and how evenly
the games shared the frames, from the episode log (each finished game's frames, by the game its
environment plays).
"""
import csv
import os
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

from benchmarks import runs

_FRAMES = flags.DEFINE_integer('frames', 300_000, 'Frames each run trains.')
_ENVS_PER_GAME = flags.DEFINE_string('envs_per_game', '1,2',
                                     'Environments per game, one run each.')
_ACTORS = flags.DEFINE_integer('actors', 3, 'Actor processes (57 x envs_per_game / actors '
                               'environments each).')


def frames_by_game(run_dir: str, envs_per_actor: int) -> dict[str, int]:
    """Frames of the finished games of each Atari game in the run's episode log."""
    from agents.core import builders  # pylint: disable=import-outside-toplevel
    from environments import names  # pylint: disable=import-outside-toplevel
    with open(os.path.join(run_dir, 'logs', 'episodes.csv'), newline='') as f:
        games = list(csv.DictReader(f))
    frames = dict.fromkeys(names.ATARI57, 0)
    for game in games:
        frames[builders.assigned_task(names.ATARI57, envs_per_actor, int(game['actor']),
                                      int(game['env']))] += int(game['episode_frames'])
    return frames


def train(command, run_dir: str) -> None:
    """Runs the launcher until its learner has trained `--frames`, then stops it (SIGTERM, as
    Ctrl-C) before the final evaluation of 57 games, which is not timed here."""
    learner_csv = os.path.join(run_dir, 'logs', 'learner.csv')
    launcher = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        while launcher.poll() is None:
            time.sleep(5)
            if os.path.exists(learner_csv):
                with open(learner_csv, newline='') as f:
                    rows = list(csv.DictReader(f))
                if rows and int(rows[-1]['frames']) >= _FRAMES.value:
                    break
        if launcher.poll() not in (None, 0):
            raise SystemExit(f'failed: {" ".join(command)}')
    finally:
        launcher.terminate()
        launcher.wait()


def main(argv):
    del argv
    actors = _ACTORS.value
    for envs_per_game in map(int, _ENVS_PER_GAME.value.split(',')):
        envs = 57 * envs_per_game
        if envs % actors:
            raise SystemExit(f'{envs} environments do not split over {actors} actors')
        with tempfile.TemporaryDirectory() as run_dir:
            train([sys.executable, '-m', 'launch.impala_atari57', '--preset=quick',
                   f'--run_dir={run_dir}', f'--config.total_frames={_FRAMES.value}',
                   f'--config.num_actors={actors}', f'--config.envs_per_actor={envs // actors}',
                   '--config.log_interval_s=5'], run_dir)
            fps = runs.frames_per_second(os.path.join(run_dir, 'logs', 'learner.csv'))
            shares = frames_by_game(run_dir, envs // actors)
        played = sorted(frames for frames in shares.values() if frames) or [0]
        print(f'57 games, deep net, {envs_per_game} environment(s) per game ({actors} actors x '
              f'{envs // actors}): {fps:,.0f} frames/s; games finished on '
              f'{sum(map(bool, shares.values()))} of 57, their frames per game: min '
              f'{played[0]:,} median {played[len(played) // 2]:,} max {played[-1]:,}',
              flush=True)


if __name__ == '__main__':
    app.run(main)
