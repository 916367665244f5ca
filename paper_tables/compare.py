"""Set runs beside a paper table: a Markdown report and a learning-curve plot.

    python -m paper_tables.compare RUN_DIR... --paper impala --table atari_experts [--out FILE]

Prints the report, and writes it as report.md with the plot report.png into every RUN_DIR.
Without --paper and --table, the table is the default for the runs' experiment
(`catalog.DEFAULT_TABLES`).
Per game: our raw score and frames, the paper's score, their ratio and both human-normalised
scores (capped for DMLab-30, IMPALA appendix B); then the paper's summary statistics over the
games we have, over the paper's whole table, and as printed in the paper.
"""
import argparse
import dataclasses
import os
import pathlib
import sys

from paper_tables import catalog, plots, protocols, runs, scores, tables


@dataclasses.dataclass(frozen=True)
class Row:
    """One game (level) of the report."""
    game: str
    ours: float
    frames: int
    episodes: int
    paper: object            # the paper's score, None where the paper has none
    ours_normalised: object  # None under human starts (no references)
    paper_normalised: object


def _frames(count):
    for unit, size in (('B', 1e9), ('M', 1e6), ('K', 1e3)):
        if count >= size:
            return f'{count / size:.3g}{unit}'
    return str(count)


def _number(value):
    return '-' if value is None else f'{value:.1f}'


def _percent(value):
    return '-' if value is None else f'{100 * value:.1f}%'


def _ratio(ours, paper):
    return '-' if paper is None or paper <= 0 else f'{ours / paper:.2f}'


def _one(all_runs, field, advice):
    """The config `field` shared by all runs; a one-line ValueError when they differ."""
    values = {run.config.get(field) for run in all_runs}
    if len(values) > 1:
        raise ValueError(f'the runs differ in {field}: {sorted(map(str, values))}; {advice}')
    return values.pop()


def _our_evaluations(all_runs, spec, paper):
    """({game: (run, evaluation)} under the table's protocol, [notes on the rest])."""
    found, notes = {}, []
    for run in all_runs:
        for evaluation in run.evaluations:
            if evaluation.protocol != spec.protocol:
                notes.append(f'{evaluation.game} in {run.path} was evaluated under '
                             f'{evaluation.protocol}, not {spec.protocol}: left out.')
                continue
            try:
                game = scores.canonical_name(spec.suite, evaluation.game)
            except ValueError:
                game = None
            if game not in paper:
                notes.append(f'{evaluation.game} in {run.path} is not in the paper table: '
                             'left out.')
                continue
            if game in found:
                raise ValueError(f'{game} is evaluated in both {found[game][0].path} and '
                                 f'{run.path}; pass one of them')
            found[game] = (run, evaluation)
    return found, notes


def _paper_scores(spec):
    """({game: the paper's score or None}, the label of the table they come from)."""
    table = tables.load(spec.filename)
    label = f'{spec.paper} table {table.meta["table"]}'
    if spec.column is None:     # summaries only: every level of the suite, no paper score
        return dict.fromkeys(scores.references(spec.suite)), label
    key = table.columns[0]
    paper = {scores.canonical_name(spec.suite, row[key]): row[spec.column] for row in table.rows}
    return paper, label


def _rows(spec, protocol, found, paper):
    refs = scores.references(spec.suite)
    normalise = (scores.capped_human_normalised if spec.suite == 'dmlab30'
                 else scores.human_normalised)
    rows = []
    for game in paper:
        if game not in found:
            continue
        evaluation = found[game][1]
        ours, theirs = evaluation.mean_score, paper[game]
        usable = not protocol.human_starts
        rows.append(Row(
            game, ours, evaluation.checkpoint_frames, len(evaluation.scores), theirs,
            normalise(ours, *refs[game]) if usable else None,
            normalise(theirs, *refs[game]) if usable and theirs is not None else None))
    return rows


def _statistics(spec, normalised):
    """{statistic: value} of the paper's summary over `normalised` values (fractions)."""
    if not normalised:
        return {name: None for name in spec.printed}
    summary = {'median': scores.median, 'mean': scores.mean, 'mean_capped': scores.mean}
    return {name: summary[name](normalised) for name in spec.printed}


def _summary(spec, protocol, rows, paper):
    lines = ['| statistic | ours | paper, same games | paper, whole table | paper as printed |',
             '|---|---|---|---|---|']
    if protocol.human_starts:
        lines.append('| (no human-start references in the papers) | - | - | - | '
                     + ', '.join(f'{k} {v}%' for k, v in spec.printed.items()) + ' |')
        return lines
    paired = [row for row in rows if row.paper_normalised is not None]
    # Without per-level paper scores (spec.column None) ours are over every level we have. A
    # DMLab-30 median is of capped scores: the capped median, the paper's below 100%.
    measured = rows if spec.column is None else paired
    ours = _statistics(spec, [row.ours_normalised for row in measured])
    same = _statistics(spec, [row.paper_normalised for row in paired])
    known = {game: value for game, value in paper.items() if value is not None}
    whole = _statistics(spec, list(scores.normalised_scores(
        spec.suite, known, capped=spec.suite == 'dmlab30').values()))
    label = (f'{len(known)} of {len(paper)}' if spec.column and len(known) < len(paper)
             else f'{len(paper)}')
    for name, printed in spec.printed.items():
        lines.append(f'| {name} ({len(measured)} / {label}) | {_percent(ours[name])} | '
                     f'{_percent(same[name])} | {_percent(whole[name])} | {printed}% |')
    return lines


def _header(spec, protocol, label, rows, paper):
    unit = 'level' if spec.suite == 'dmlab30' else 'game'
    noops = f'1 to {protocol.noop_max} no-ops' if protocol.noop_max else 'no no-ops'
    lines = [
        f'# {spec.paper} {spec.table}: {len(rows)} of {len(paper)} {unit}s',
        '',
        (f'Paper: column `{spec.column}` of {label}' if spec.column else
         f'Paper: no per-{unit} scores, only the summary of {label}')
        + f' (`paper_tables/data/{spec.filename}`), {_frames(spec.frames)} frames; summary '
          f'from {spec.source}.',
        f'Protocol `{protocol.name}`: {protocol.episodes} episodes, {noops}, '
        f'frame cap {protocol.max_episode_frames or "none"}, '
        f'{protocol.action_set} action set, epsilon {protocol.epsilon}.',
    ]
    if protocol.human_starts:
        lines.append('Human starts: the paper starts episodes from human-played states, which '
                     'are not public; our scores cannot be measured that way, and no '
                     'human-start references are printed, so nothing is normalised.')
    return lines


def _per_game(spec, rows):
    measure = 'capped human-normalised' if spec.suite == 'dmlab30' else 'human-normalised'
    unit = 'level' if spec.suite == 'dmlab30' else 'game'
    lines = [f'| {unit} | ours | our frames | paper | ratio | ours, {measure} | '
             f'paper, {measure} |', '|---|---|---|---|---|---|---|']
    for row in rows:
        frames = _frames(row.frames)
        if row.frames < spec.frames:
            frames += f' (fewer than the paper\'s {_frames(spec.frames)})'
        lines.append(f'| {row.game} | {_number(row.ours)} | {frames} | {_number(row.paper)} | '
                     f'{_ratio(row.ours, row.paper)} | {_percent(row.ours_normalised)} | '
                     f'{_percent(row.paper_normalised)} |')
    return lines


def _footer(protocol, rows, paper, found, notes):
    lines = []
    short = [row.game for row in rows if row.episodes < protocol.episodes]
    if short:
        lines.append(f'Fewer than the protocol\'s {protocol.episodes} episodes: '
                     + ', '.join(short) + '.')
    no_paper = [row.game for row in rows if row.paper is None]
    if no_paper:
        lines.append('No paper score (not printed or unreadable): ' + ', '.join(no_paper) + '.')
    missing = [game for game in paper if game not in found]
    lines.append(f'Missing ({len(missing)}): ' + (', '.join(missing) or 'none') + '.')
    return lines + notes


def _paper_score_for(spec, paper, game):
    """The paper's score for a run's config "game", None if it names no game of the table."""
    try:
        return paper.get(scores.canonical_name(spec.suite, game))
    except (ValueError, AttributeError):
        return None


def _default_table(all_runs, paper_name, table_name):
    """(paper, table) of the runs' experiment; --paper or --table alone must name it."""
    experiment = _one(all_runs, 'experiment', 'pass --paper and --table')
    default = catalog.default_table(experiment)
    if (paper_name or default[0], table_name or default[1]) != default:
        given = f'--paper {paper_name}' if paper_name else f'--table {table_name}'
        raise ValueError(f'{given} alone: {experiment} runs are compared with --paper '
                         f'{default[0]} --table {default[1]}; pass both --paper and --table '
                         f'for another table')
    return default


def _check_fits(spec, all_runs):
    """A table fits runs evaluated under its protocol: one line otherwise."""
    evaluated = sorted({e.protocol for run in all_runs for e in run.evaluations})
    if spec.protocol not in evaluated:
        raise ValueError(f'{spec.paper} {spec.table} is scored under protocol {spec.protocol}, '
                         f'and the runs were evaluated under {", ".join(evaluated)}: pick a '
                         f'table of their experiment, or evaluate them with launch.evaluate '
                         f'--protocol={spec.protocol}')


def build_report(run_dirs, paper_name=None, table_name=None, checkpoint_frames=None):
    """(Markdown text, curves for the plot, plot label) comparing `run_dirs` with the table."""
    all_runs = [runs.read_run(path, checkpoint_frames) for path in run_dirs]
    if paper_name is None or table_name is None:
        paper_name, table_name = _default_table(all_runs, paper_name, table_name)
    spec = catalog.get_table(paper_name, table_name,
                             _one(all_runs, 'torso', 'compare them separately'))
    _check_fits(spec, all_runs)
    protocol = protocols.get_protocol(spec.protocol)
    paper, label = _paper_scores(spec)
    found, notes = _our_evaluations(all_runs, spec, paper)
    rows = _rows(spec, protocol, found, paper)
    lines = _header(spec, protocol, label, rows, paper)
    lines += [''] + _per_game(spec, rows)
    lines += [''] + _summary(spec, protocol, rows, paper)
    lines += [''] + _footer(protocol, rows, paper, found, notes)
    curves = [(str(run.config.get('game', run.path.name)), run.curve,
               _paper_score_for(spec, paper, run.config.get('game'))) for run in all_runs]
    return '\n'.join(lines) + '\n', curves, f'paper ({label})'


def main_report(run_dirs, paper=None, table=None, checkpoint_frames=None, out=None):
    """Print the report and write report.md and report.png into every run dir (and `out`).

    Raises ValueError with a one-line reason when the runs cannot be compared.
    """
    markdown, curves, label = build_report(run_dirs, paper, table, checkpoint_frames)
    print(markdown, end='')
    for run_dir in run_dirs:
        (pathlib.Path(run_dir) / 'report.md').write_text(markdown)
        plots.learning_curves(curves, pathlib.Path(run_dir) / 'report.png', label)
    if out:
        pathlib.Path(out).write_text(markdown)
    return markdown


def _writable(out: pathlib.Path) -> None:
    """`--out`'s directory, made where missing; ValueError (one line) where `out` cannot be
    written, before any report is built."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f'--out={out}: cannot make its directory ({e.strerror}); choose '
                         f'another path') from None
    if out.is_dir():
        raise ValueError(f'--out={out} is a directory: name a file, e.g. {out / "report.md"}')
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise ValueError(f'--out={out}: cannot write there; choose another path')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('run_dirs', nargs='+', metavar='RUN_DIR')
    parser.add_argument('--paper', help='impala | apex | laser | reactor')
    parser.add_argument('--table', help='e.g. atari_experts, dmlab30')
    parser.add_argument('--checkpoint_frames', type=int, default=None,
                        help='evaluate this checkpoint (default: the latest per game)')
    parser.add_argument('--out', type=pathlib.Path,
                        help='also write the Markdown here (its directory made where missing)')
    args = parser.parse_args(argv)
    try:
        if args.out:
            _writable(args.out)
        main_report(args.run_dirs, args.paper, args.table, args.checkpoint_frames, args.out)
    except ValueError as error:
        parser.exit(2, f'error: {error}\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
