"""Running launch programs from benchmarks and reading their figures back."""
import csv
import math
import subprocess


def frames_per_second(learner_csv: str) -> float:
    """Frames/s a learner counted, between 20% and 100% of its frames (start-up left out)."""
    with open(learner_csv, newline='') as f:
        rows = [(int(r['frames']), float(r['wall_time'])) for r in csv.DictReader(f)]
    final = rows[-1][0]
    start = next(row for row in rows if row[0] >= 0.2 * final)
    return (final - start[0]) / max(rows[-1][1] - start[1], 1e-9)


def run_together(commands):
    """Runs the commands at once; exits naming the first that fails."""
    processes = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for c in commands]
    for process, command in zip(processes, commands):
        if process.wait() != 0:
            raise SystemExit(f'failed: {" ".join(command)}')


def training_time(learner_rows, pause_s: float = 60.0) -> tuple[float, int]:
    """(seconds, frames) between a learner's consecutive log rows, leaving out gaps over
    `pause_s` (a stopped run and its resumption)."""
    seconds, frames = 0.0, 0
    for before, after in zip(learner_rows, learner_rows[1:]):
        gap = float(after['wall_time']) - float(before['wall_time'])
        if gap <= pause_s:
            seconds += gap
            frames += int(after['frames']) - int(before['frames'])
    return seconds, frames


def seconds_problem(flag, zero_allowed: bool = False) -> str | None:
    """The one line refusing absl `flag` unless it is a finite number of seconds > 0 (>= 0
    if `zero_allowed`); None if it is."""
    value = flag.value
    if math.isfinite(value) and (value >= 0 if zero_allowed else value > 0):
        return None
    return (f'--{flag.name} must be a finite number of seconds {">=" if zero_allowed else ">"} '
            f'0, got {value}')


def budget_problem(frames: int, experiment, config, run: str = 'the run') -> str | None:
    """The one line refusing `--frames` that end `run`, of `config` (of `experiment`,
    launch/experiments.py), before its first update; None if they do not."""
    needed, counted = experiment.first_update_frames(config)
    if frames >= needed:
        return None
    return (f'--frames={frames} ends before {run}\'s first update ({counted} = {needed} '
            f'frames): raise it')
