"""Reading a run directory written by the launcher and `launch/evaluate.py`.

RUN_DIR/config.json        the run's config: "experiment", "game", "total_frames", "torso", ...
RUN_DIR/logs/episodes.csv  frames,wall_time,actor,env,episode_return,episode_frames (training curve)
RUN_DIR/evaluation.csv     game,protocol,checkpoint_frames,episode,score,episode_frames

A run of several learners (a sweep) keeps each member's files in RUN_DIR/learner_<i>; the run
stands for its best evaluated member (LASER app. A.3: "selecting the best performing agent
instance within each sweep").
"""
import csv
import dataclasses
import json
import math
import pathlib

from paper_tables import protocols


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """The evaluation of one game (level) at one checkpoint under one protocol."""
    game: str
    protocol: str
    checkpoint_frames: int
    scores: tuple

    @property
    def mean_score(self):
        return sum(self.scores) / len(self.scores)


@dataclasses.dataclass(frozen=True)
class Run:
    """A run directory: its config, its evaluations and its training curve."""
    path: pathlib.Path
    config: dict
    evaluations: tuple  # every (game, protocol) at the selected checkpoint
    curve: tuple        # (frames, episode_return) per finished training episode


# The columns each file is read by (by name, so that added columns change nothing).
EVALUATION_COLUMNS = ('game', 'protocol', 'checkpoint_frames', 'score')
EPISODE_COLUMNS = ('frames', 'episode_return')


def _count(text: str) -> int:
    value = float(text)
    if not (value >= 0 and value.is_integer()):
        raise ValueError(text)
    return int(value)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


# What the numeric columns of the run's files hold (what a cell must be, its parser); the
# others are text.
NUMERIC_COLUMNS = {
    'frames': ('a whole number >= 0', _count),
    'checkpoint_frames': ('a whole number >= 0', _count),
    'episode_frames': ('a whole number >= 0', _count),
    'actor': ('a whole number >= 0', _count),
    'env': ('a whole number >= 0', _count),
    'episode_return': ('a finite number', _finite),
    'score': ('a finite number', _finite),
}


def read_csv(path, columns=()):
    """A CSV file with a header as a list of dicts, the cells of `columns` that are numeric
    (`NUMERIC_COLUMNS`) parsed; a one-line ValueError naming the file and the first of
    `columns` its header lacks, or the line and column of a cell that is empty or not a
    number."""
    with open(path, newline='') as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        rows = list(reader)
    missing = [c for c in columns if c not in header]
    if not missing:
        short = [n for n, row in enumerate(rows, 2) if any(row[c] in (None, '') for c in columns)]
        if short:
            raise ValueError(f'{path}: line {short[0]} lacks a value of '
                             f'{", ".join(columns)}: repair or remove that line')
        for line, row in enumerate(rows, 2):
            for column in (c for c in columns if c in NUMERIC_COLUMNS):
                kind, parse = NUMERIC_COLUMNS[column]
                try:
                    row[column] = parse(row[column])
                except ValueError:
                    raise ValueError(f'{path}: line {line}, column {column}: '
                                     f'{row[column]!r} is not {kind}: repair or remove that '
                                     f'line') from None
        return rows
    raise ValueError(f'{path} has no column {missing[0]!r} (its columns: '
                     f'{", ".join(header) or "none"}): it was not written by this version')


def _evaluations(path, checkpoint_frames):
    """Evaluations at `checkpoint_frames`, or at each game's latest checkpoint when None."""
    grouped = {}
    for row in read_csv(path, EVALUATION_COLUMNS):
        key = (row['game'], row['protocol'], row['checkpoint_frames'])
        grouped.setdefault(key, []).append(row['score'])
    chosen = {}
    for (game, protocol, frames), scores in grouped.items():
        if checkpoint_frames is not None and frames != checkpoint_frames:
            continue
        current = chosen.get((game, protocol))
        if current is None or frames > current.checkpoint_frames:
            chosen[(game, protocol)] = Evaluation(game, protocol, frames, tuple(scores))
    return tuple(chosen.values())


def _curve(path, config, evaluations):
    """(frames, episode_return) of the training games the paper's curve is made of: every
    actor's, or the greediest actor's where the evaluated protocol says so (Ape-X DQN)."""
    if not path.exists():
        return ()
    rows = read_csv(path, EPISODE_COLUMNS)
    greediest = any(protocols.PROTOCOLS[e.protocol].greediest_curve for e in evaluations
                    if e.protocol in protocols.PROTOCOLS)
    if greediest and rows and 'env' in rows[0]:
        last = (str(config['num_actors'] - 1), str(config['envs_per_actor'] - 1))
        rows = [row for row in rows if (row['actor'], row['env']) == last]
    return tuple((row['frames'], row['episode_return']) for row in rows)


CONFIG_FILE = 'config.json'


def read_config(run_dir) -> dict | None:
    """RUN_DIR/config.json as saved (the one reader of the file: launch/configs.py checks its
    fields against the experiment); None if there is none; ValueError (one line) if it is not
    a run's config: not JSON, not an object, or no "experiment"."""
    path = pathlib.Path(run_dir) / CONFIG_FILE
    if not path.exists():
        return None
    try:
        config = json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f'{path} is not a run config ({e})') from None
    if not isinstance(config, dict) or 'experiment' not in config:
        raise ValueError(f'{path} is not a run config (it names no "experiment")')
    return config


def members(run_dir) -> list[pathlib.Path]:
    """The learner directories of a run of several learners, in learner order; [] otherwise."""
    found = [p for p in pathlib.Path(run_dir).glob('learner_*') if (p / CONFIG_FILE).exists()]
    return sorted(found, key=lambda p: int(p.name.split('_')[-1]))


def _member_scores(run_dir, checkpoint_frames=None):
    """{member directory: mean evaluated score} of the evaluated members of a run."""
    scores = {}
    for path in members(run_dir):
        if (path / 'evaluation.csv').exists():
            evaluations = _evaluations(path / 'evaluation.csv', checkpoint_frames)
            if evaluations:
                scores[path] = sum(e.mean_score for e in evaluations) / len(evaluations)
    return scores


def members_table(run_dir, checkpoint_frames=None) -> str:
    """A Markdown table of a sweep's members: what they differ in, and their scores."""
    paths = members(run_dir)
    configs = {p: read_config(p) for p in paths}
    varied = [field for field in configs[paths[0]]
              if len({json.dumps(c.get(field)) for c in configs.values()}) > 1]
    scores = _member_scores(run_dir, checkpoint_frames)
    best = max(scores, key=scores.get) if scores else None
    lines = ['| member | ' + ' | '.join(varied) + ' | score |',
             '|---|' + '---|' * (len(varied) + 1)]
    for path in paths:
        cells = [path.name + (' (best)' if path == best else '')]
        cells += [_text(configs[path].get(field)) for field in varied]
        cells.append(f'{scores[path]:.1f}' if path in scores else 'n/a')
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def _text(value) -> str:
    return f'{value:g}' if isinstance(value, float) else str(value)


def read_run(run_dir, checkpoint_frames=None):
    """The run in `run_dir` (a sweep's best member); ValueError with one line when it cannot
    be compared."""
    path = pathlib.Path(run_dir)
    if not path.is_dir():
        raise ValueError(f'{path}: not a run directory')
    scores = _member_scores(path, checkpoint_frames)
    if not (path / 'evaluation.csv').exists() and scores:
        path = max(scores, key=scores.get)
    if not (path / 'evaluation.csv').exists():
        raise ValueError(f'{path}: no evaluation.csv (evaluate the run with launch/evaluate.py '
                         'first)')
    config = read_config(path) or {}
    evaluations = _evaluations(path / 'evaluation.csv', checkpoint_frames)
    if not evaluations:
        at = f' at checkpoint_frames={checkpoint_frames}' if checkpoint_frames is not None else ''
        raise ValueError(f'{path}: evaluation.csv has no evaluation{at}')
    return Run(path, config, evaluations,
               _curve(path / 'logs' / 'episodes.csv', config, evaluations))
