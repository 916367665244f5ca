"""benchmarks/results.py and results/: the folders' format (never a score), the generated table,
the rows' commands, and the figures computed from training games on small synthetic runs."""
import csv
import json
import os

import pytest

from benchmarks import results
from benchmarks import results_table
from benchmarks import runs as benchmark_runs
from launch import experiments
from paper_tables import runs

README = os.path.join('results', 'README.md')


def test_every_row_in_the_table_has_its_folder():
    for name in results_table.listed_rows(README):
        folder = os.path.join('results', name)
        for file in ('episodes.csv', 'config.json', 'run.json', 'curve.png'):
            assert os.path.exists(os.path.join(folder, file)), (name, file)
        with open(os.path.join(folder, 'episodes.csv'), newline='') as f:
            header = next(csv.reader(f))
        assert set(results_table.EPISODE_COLUMNS) <= set(header), name


def test_the_table_is_what_the_folders_generate():
    with open(README) as f:
        content = f.read()
    assert results_table.section(list(results.ROWS.values()), results.SOURCES,
                                 'results') in content


@pytest.mark.parametrize('row', results.ROWS.values(), ids=results.ROWS)
def test_row_commands_are_valid_launch_commands(row):
    spec = experiments.get(row.program.removeprefix('launch.'))
    config = spec.presets[row.preset](spec.paper_config())
    for flag in row.flags:
        field, value = flag.removeprefix('--').split('=', 1)
        if field.startswith('config.'):
            field = field.removeprefix('config.')
            assert field in config, flag
            config[field] = type(config[field])(value)
        elif field != 'preset':
            assert field == spec.target_field, flag
            config[field] = value
    spec.check(config)
    assert row.target.frames in row.marks
    assert {p.frames for p in row.published} <= set(row.marks)
    assert {p.source for p in row.published} <= set(results.SOURCES)
    assert set(row.target.relative_to) <= set(results.ROWS)
    assert max(row.marks) <= (row.stop_frames or config.total_frames)


def _curve(returns, frames_per_game=1000):
    return tuple(((i + 1) * frames_per_game, float(r)) for i, r in enumerate(returns))


def test_mean_at_is_the_mean_of_the_last_100_games_by_those_frames():
    curve = _curve(range(300))              # game i (return i) ends at (i + 1) * 1000 frames
    assert results_table.mean_at(curve, 250_000) == pytest.approx(sum(range(150, 250)) / 100)
    assert results_table.mean_at(curve, 250_999) == pytest.approx(sum(range(150, 250)) / 100)
    assert results_table.mean_at(curve, 10_000) == pytest.approx(4.5)   # 10 games so far
    assert results_table.mean_at(curve, 999) is None


def test_first_crossing_needs_a_full_window_of_100_games():
    curve = _curve([30.0] + [0.0] * 99 + [10.0] * 200)
    assert results_table.first_crossing(curve, 30.0) is None   # one game at 30 is not a mean
    # After game k > 100, the window holds (k - 100) games of 10: 5 needs 50 of them.
    assert results_table.first_crossing(curve, 5.0) == 150_000
    assert results_table.first_crossing(curve, 10.0) == 200_000
    assert results_table.first_crossing(curve, 10.1) is None


def test_verdict_is_level_within_5_percent_of_the_target():
    assert results_table.verdict(18.5, 18.0) == 'level (+0.5)'
    assert results_table.verdict(17.2, 18.0) == 'level (-0.8)'
    assert results_table.verdict(20.0, 18.0) == 'ahead by 2.0'
    assert results_table.verdict(-13.4, 18.0) == 'behind by 31.4'


def _folder(returns, frames):
    return results_table.Folder(_curve(returns, 100_000), {'frames': frames}, {})


def test_a_relative_target_comes_from_the_other_rows_folders():
    row = results.ROWS['reactor_breakout']     # the best of impala_breakout and apex_dqn at 2M
    folders = {'impala_breakout': _folder([4.0] * 30, 3_000_000),
               'apex_dqn_breakout': _folder([6.0] * 30, 2_000_000)}
    assert results_table.target(row, folders)[0] == pytest.approx(6.0)
    folders['apex_dqn_breakout'] = _folder([6.0] * 10, 1_000_000)   # not at 2M yet
    score, text = results_table.target(row, folders)
    assert score is None and 'apex_dqn_breakout not at 2M' in text
    laser = results.ROWS['laser_breakout']     # 1.5x impala_breakout at 5M
    assert results_table.target(laser, {'impala_breakout': _folder([4.0] * 60, 6_000_000)})[0] \
        == pytest.approx(6.0)


def test_training_time_leaves_out_the_pause_of_a_resumption():
    rows = [{'frames': f, 'wall_time': t} for f, t in
            ((100, 0), (200, 10), (300, 20), (350, 1000), (450, 1010))]
    assert benchmark_runs.training_time(rows) == (30.0, 300)


def _write_run(run_dir, games):
    """A run directory as the launcher leaves it: config, learner and episode logs."""
    os.makedirs(os.path.join(run_dir, 'logs'))
    config = experiments.get('impala_atari').presets['quick'](
        experiments.get('impala_atari').paper_config())
    config.game = 'breakout'
    with open(os.path.join(run_dir, 'config.json'), 'w') as f:
        json.dump(config.to_dict(), f)
    with open(os.path.join(run_dir, 'logs', 'learner.csv'), 'w') as f:
        f.write('step,frames,wall_time\n' + ''.join(
            f'{i},{i * 50_000},{i * 10}\n' for i in range(1, 2 * games + 1)))
    with open(os.path.join(run_dir, 'logs', 'episodes.csv'), 'w') as f:
        f.write('frames,wall_time,actor,env,episode_return,episode_frames\n' + ''.join(
            f'{(i + 1) * 100_000},0,0,0,{i % 7},800\n' for i in range(games)))


def test_collect_plot_and_table_of_a_run(tmp_path):
    row = results.ROWS['impala_breakout']
    run_dir, results_dir = str(tmp_path / 'runs' / row.name), str(tmp_path / 'results')
    _write_run(run_dir, games=120)
    results.collect(row, run_dir, os.path.join(results_dir, row.name))
    results.plot(row, results_dir)
    readme = os.path.join(results_dir, 'README.md')
    with open(readme, 'w') as f:
        f.write(f'# results\n\n{results_table.BEGIN}\n{results_table.END}\n')
    results_table.rewrite(readme, results_table.section(list(results.ROWS.values()),
                                                        results.SOURCES, results_dir))
    assert results_table.listed_rows(readme) == [row.name]
    with open(readme) as f:
        assert '`impala_pong` (IMPALA' in f.read().split('Not run yet')[1]
    assert 'Not run yet' not in results_table.section([row], results.SOURCES, results_dir)
    with open(os.path.join(results_dir, row.name, 'run.json')) as f:
        run = json.load(f)
    assert run['frames'] == 12_000_000 and run['frames_per_second'] == 5_000
    assert run['changes_from_paper']['batch_size'] == [32, 4]
    assert run['command'] == row.command_line(run_dir)
    assert runs.read_csv(os.path.join(results_dir, row.name, 'episodes.csv'))[0][
        'episode_return'] == '0'
    assert os.path.getsize(os.path.join(results_dir, row.name, 'curve.png')) > 0


def test_the_causes_summary_bins_games_and_updates(tmp_path):
    """benchmarks/impala_pong_causes.summary: per bin of frames, the games finished in it, their
    mean return, the entropy per step and the updates by the bin's end."""
    from benchmarks import impala_pong_causes  # pylint: disable=import-outside-toplevel
    logs = tmp_path / 'logs'
    logs.mkdir()
    with open(logs / 'episodes.csv', 'w') as f:
        f.write('frames,episode_return\n100,-21\n200,-19\n300,-10\n')
    with open(logs / 'learner.csv', 'w') as f:
        f.write('frames,step,entropy_loss\n150,3,-16\n250,5,-8\n350,7,-8\n')
    with open(tmp_path / 'config.json', 'w') as f:
        json.dump({'batch_size': 2, 'unroll_length': 4}, f)
    lines = impala_pong_causes.summary(str(tmp_path), frames=400, bin_frames=200)
    assert lines == ['| 0-0.0002M | 2 | -20.00 | 2.000 | 3 |',
                     '| 0.0002-0.0004M | 1 | -10.00 | 1.000 | 7 |']
