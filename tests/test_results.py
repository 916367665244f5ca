"""benchmarks/results.py and results/: the folders' format (never a score), the generated table,
the rows' commands, and the figures computed from training games on small synthetic runs."""
import csv
import dataclasses
import json
import os
import re

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


def test_the_pages_are_what_the_folders_generate():
    """results/README.md's generated part and the main README's table: a figure typed into
    either, or a row's data changed without `--table`, fails here."""
    rows = list(results.ROWS.values())
    with open(README) as f:
        assert results_table.section(rows, results.SOURCES, 'results',
                                     results.PAPER_TABLE_SOURCES) in f.read()
    with open('README.md') as f:
        assert results_table.summary(rows, 'results', results.PAPER_TABLE_SOURCES) in f.read()


@pytest.fixture(scope='module', name='folders')
def _folders():
    return results_table.read_folders(list(results.ROWS.values()), 'results')


def _typed_figures(text):
    """The digits of `text` outside placeholders, `code`, paper references (table G.1) and the
    names of the sources (D4PG)."""
    text = results_table.PLACEHOLDER.sub('', text)
    for name in results.SOURCES:
        text = text.replace(name, '')
    text = re.sub(r'`[^`]*`|\(results/[^)]*\)|\b(?:table|figure|sec\.|appendix) [A-Z]?\.?\d[\d.]*',
                  '', text)
    return re.findall(r'\S*\d\S*', text)


@pytest.mark.parametrize('row', [r for r in results.ROWS.values() if not r.experiment],
                         ids=lambda r: r.name)
def test_a_headline_rows_causes_type_no_figure_and_stay_short(row, folders):
    """Every figure of a headline row's causes is a placeholder rendered from the folders, each
    naming a row; rendered, they hold at most 80 words."""
    assert row.causes, row.name
    assert _typed_figures(row.causes) == []
    placeholders = results_table.PLACEHOLDER
    names = [m.group(1) for m in placeholders.finditer(row.causes)]
    assert set(names) <= set(results.ROWS)
    if all(folders[name] for name in names):
        rendered = results_table.render(row.causes, results.ROWS, folders)
        assert len(rendered.split()) <= 80, rendered


def test_the_results_page_is_short_and_its_prose_types_no_figure():
    """results/README.md: at most 1,500 words of prose, all of it generated (between the
    markers); the main README's Results section types no figure outside its table."""
    with open(README) as f:
        page = f.read()
    assert results_table.prose_words(page) <= 1500
    outside = page[:page.find(results_table.BEGIN)] + page[page.find(results_table.END):]
    assert _typed_figures(outside.replace(results_table.END, '')) == []
    with open('README.md') as f:
        readme = f.read()
    section = readme[readme.find('## Results'):readme.find('\n## ', readme.find('## Results') + 1)]
    generated = section[section.find(results_table.BEGIN):section.find(results_table.END)]
    assert _typed_figures(section.replace(generated, '').replace(results_table.END, '')) == []


def test_paper_table_sources_are_sources():
    assert set(results.PAPER_TABLE_SOURCES) <= set(results.SOURCES)


def _command_config(row):
    """The config the row's command trains (its preset with its flags), unchecked."""
    spec = experiments.get(row.program.removeprefix('launch.'))
    config = spec.presets[row.preset](spec.paper_config())
    for flag in row.flags:
        field, value = flag.removeprefix('--').split('=', 1)
        if field.startswith('config.'):
            field = field.removeprefix('config.')
            assert field in config, flag
            kind = type(config[field])
            parsed = value.lower() in ('true', 't', '1') if kind is bool else kind(value)
            config = config.replace(**{field: parsed})
        elif field != 'preset':
            assert field in (spec.target_field, 'sweep'), flag   # --sweep: a config field too
            config = config.replace(**{field: value})
    if config.sweep:   # its learners are its members; the folder holds the first's config
        config = config.replace(num_learners=len(spec.sweeps.members(config)))
        config = spec.sweeps.member_config(config, 0)
    return spec, config


@pytest.mark.parametrize('row', results.ROWS.values(), ids=results.ROWS)
def test_row_commands_are_valid_launch_commands(row):
    spec, config = _command_config(row)
    config = spec.check(config)
    assert row.target.frames in row.marks
    assert {p.frames for p in row.published} <= set(row.marks)
    assert {p.source for p in row.published} <= set(results.SOURCES)
    assert set(row.target.relative_to) <= set(results.ROWS)
    assert row.target.spread_of in (None, *results.ROWS)
    assert max(row.marks) <= (row.stop_frames or config.total_frames)


@pytest.mark.parametrize('row', results.ROWS.values(), ids=results.ROWS)
def test_a_rows_folder_holds_what_its_command_trains(row):
    """A preset changed since a row ran would leave its command training something else than
    its data: every field of the run's config.json (but the seed, and fields added since) is the
    command's."""
    path = os.path.join('results', row.name, 'config.json')
    if not os.path.exists(path):
        pytest.skip(f'{row.name} has not run yet')
    with open(path) as f:
        ran = json.load(f)
    _, config = _command_config(row)
    fields = [field for field in config if field in ran and field != 'seed']
    assert {f: ran[f] for f in fields} == {f: config[f] for f in fields}


def _games(returns, frames_per_game=1000, **columns):
    """Training games as a folder reads them: game i (return returns[i]) ends at
    (i + 1) * frames_per_game frames."""
    return tuple({'frames': float((i + 1) * frames_per_game), 'episode_return': float(r),
                  **columns} for i, r in enumerate(returns))


def test_last_100_is_the_mean_of_the_last_100_games_by_those_frames():
    games = _games(range(300))
    assert results_table.value_at(games, 250_000) == pytest.approx(sum(range(150, 250)) / 100)
    assert results_table.value_at(games, 250_999) == pytest.approx(sum(range(150, 250)) / 100)
    assert results_table.value_at(games, 10_000) == pytest.approx(4.5)   # 10 games so far
    assert results_table.value_at(games, 999) is None


def test_the_window_statistic_is_the_mean_of_the_games_within_5_percent_of_the_mark():
    games = _games(range(300))          # returns i at (i + 1) * 1000 frames
    # 100k +-5%: the games ending at 95k..105k, returns 94..104.
    assert results_table.value_at(games, 100_000, 'window') == pytest.approx(99.0)
    assert results_table.value_at(games, 400_000, 'window') is None


def test_the_least_exploring_third_scores_the_lowest_epsilon_environments_only():
    """6 environments (2 actors x 3): the third with the lowest epsilon is 2 of them, the games
    of the others (high epsilon, return 0) left out; RLlib's 3 of 8 is ceil(8 / 3)."""
    config = {'num_actors': 2, 'envs_per_actor': 3}
    games = []
    for k, (actor, env, epsilon) in enumerate(((0, 0, 0.4), (0, 1, 0.2), (0, 2, 0.1),
                                               (1, 0, 0.05), (1, 1, 0.01), (1, 2, 0.001))):
        returns = [10.0 + k] * 5 if epsilon <= 0.01 else [0.0] * 5
        games += _games(returns, actor=float(actor), env=float(env), epsilon=epsilon)
    games.sort(key=lambda g: g['frames'])
    chosen = results_table.least_exploring_third(games, config)
    assert {(g['actor'], g['env']) for g in chosen} == {(1.0, 1.0), (1.0, 2.0)}
    assert results_table.value_at(games, 10_000, 'least_exploring_third', config) == \
        pytest.approx(14.5)      # the means of 14 and 15
    assert results_table.value_at(games, 10_000) == pytest.approx((14 + 15) / 6)


def test_first_crossing_needs_a_full_window_of_100_games():
    games = _games([30.0] + [0.0] * 99 + [10.0] * 200)
    assert results_table.first_crossing(games, 30.0) is None   # one game at 30 is not a mean
    # After game k > 100, the window holds (k - 100) games of 10: 5 needs 50 of them.
    assert results_table.first_crossing(games, 5.0) == 150_000
    assert results_table.first_crossing(games, 10.0) == 200_000
    assert results_table.first_crossing(games, 10.1) is None


def test_verdict_is_level_within_5_percent_of_the_target():
    assert results_table.verdict(18.5, 18.0) == 'level (+0.5)'
    assert results_table.verdict(17.2, 18.0) == 'level (-0.8)'
    assert results_table.verdict(20.0, 18.0) == 'ahead by 2.0'
    assert results_table.verdict(-13.4, 18.0) == 'behind by 31.4'


def _folder(frames, *returns_per_seed):
    """A folder of one run per seed, each a game per 100k frames, having trained `frames`."""
    return results_table.Folder(
        {seed: _games(r, 100_000) for seed, r in enumerate(returns_per_seed)},
        {'seeds': {str(seed): {'frames': frames} for seed in range(len(returns_per_seed))}},
        {})


def test_a_rows_score_is_the_mean_over_its_seeds_with_their_range():
    folder = _folder(3_000_000, [4.0] * 30, [6.0] * 30, [11.0] * 30)
    assert results_table.score_at(folder, 2_000_000) == pytest.approx(7.0)
    assert results_table.score_text(folder, 2_000_000) == '7.0 (4.0-11.0)'
    assert results_table.score_text(_folder(3_000_000, [4.0] * 30), 2_000_000) == '4.0'
    negative = _folder(3_000_000, [-20.4] * 30, [-20.1] * 30)
    assert results_table.score_text(negative, 2_000_000) == '-20.2 (-20.4 to -20.1)'
    assert results_table.score_at(folder, 4_000_000) is None    # no run got there


def test_a_relative_target_comes_from_the_other_rows_folders():
    row = results.ROWS['reactor_breakout']     # the best of impala_breakout and apex_dqn at 2M
    folders = {'impala_breakout': _folder(3_000_000, [4.0] * 30, [2.0] * 30),
               'apex_dqn_breakout': _folder(2_000_000, [6.0] * 30)}
    assert results_table.target(row, folders)[0] == pytest.approx(6.0)
    folders['apex_dqn_breakout'] = _folder(1_000_000, [6.0] * 10)   # not at 2M yet
    score, text = results_table.target(row, folders)
    assert score is None and 'apex_dqn_breakout not at 2M' in text
    laser = results.ROWS['laser_breakout']     # 1.5x impala_breakout's mean at 5M
    assert results_table.target(laser, {'impala_breakout': _folder(
        6_000_000, [4.0] * 60, [2.0] * 60)})[0] == pytest.approx(4.5)


def test_a_spread_target_is_the_other_rows_lowest_seed():
    """Issue 37's bfloat16 rows: within the float32 seeds' spread (or above) at the mark."""
    row = results.ROWS['impala_breakout_bfloat16']
    folders = {'impala_breakout': _folder(10_000_000, [60.0] * 100, [66.0] * 100,
                                          [63.0] * 100)}
    score, text = results_table.target(row, folders)
    assert score == pytest.approx(60.0) and 'lowest seed of impala_breakout' in text
    folders['impala_breakout'] = _folder(5_000_000, [60.0] * 50)     # not at 10M yet
    score, text = results_table.target(row, folders)
    assert score is None and 'impala_breakout not at 10M' in text


def test_training_time_leaves_out_the_pause_of_a_resumption():
    rows = [{'frames': f, 'wall_time': t} for f, t in
            ((100, 0), (200, 10), (300, 20), (350, 1000), (450, 1010))]
    assert benchmark_runs.training_time(rows) == (30.0, 300)


def _write_run(run_dir, games):
    """A run directory as the launcher leaves it: config, learner and episode logs."""
    os.makedirs(os.path.join(run_dir, 'logs'))
    config = experiments.get('impala_atari').presets['quick'](
        experiments.get('impala_atari').paper_config()).replace(game='breakout')
    with open(os.path.join(run_dir, 'config.json'), 'w') as f:
        json.dump(config.to_dict(), f)
    with open(os.path.join(run_dir, 'logs', 'learner.csv'), 'w') as f:
        f.write('step,frames,wall_time\n' + ''.join(
            f'{i},{i * 50_000},{i * 10}\n' for i in range(1, 2 * games + 1)))
    with open(os.path.join(run_dir, 'logs', 'episodes.csv'), 'w') as f:
        f.write('frames,wall_time,actor,env,episode_return,episode_frames\n' + ''.join(
            f'{(i + 1) * 100_000},0,0,0,{i % 7},800\n' for i in range(games)))


def test_collect_plot_and_table_of_a_row_of_two_seeds(tmp_path):
    row = results.ROWS['impala_breakout']
    results_dir = str(tmp_path / 'results')
    folder = os.path.join(results_dir, row.name)
    run_root = str(tmp_path / 'runs')
    for seed, games in ((1, 130), (0, 120)):
        _write_run(row.run_dir(run_root, seed), games=games)
        results.collect(row, run_root, seed, folder)
    results.collect(row, run_root, 0, folder)       # collected again: its rows replaced
    results.plot(row, results_dir)
    for readme, text in (('README.md', results_table.section(list(results.ROWS.values()),
                                                             results.SOURCES, results_dir)),
                         ('summary.md', results_table.summary(list(results.ROWS.values()),
                                                              results_dir))):
        readme = os.path.join(results_dir, readme)
        with open(readme, 'w') as f:
            f.write(f'# results\n\n{results_table.BEGIN}\n{results_table.END}\n')
        results_table.rewrite(readme, text)
    assert results_table.listed_rows(os.path.join(results_dir, 'README.md')) == [row.name]
    with open(os.path.join(results_dir, 'README.md')) as f:
        table = f.read()
    assert '| `impala_pong` | IMPALA' in table.split('Not run yet')[1]
    # Both seeds' games at 10M (those of game 100 on): returns i % 7, mean over seeds.
    expected = [sum(i % 7 for i in range(games - 100, games)) / 100 for games in (120, 130)]
    assert f'10M {sum(expected) / 2:.1f} ({min(expected):.1f}-{max(expected):.1f})' in table
    assert f'| [`{row.name}`](#{row.name}) | 2 |' in table
    assert '2 seeds (0, 1) at' in table        # its section, from run.json
    # Its causes name rows without folders here: rendered, not raised.
    assert '`impala_breakout_lr_200m` (not run yet) reached no data yet' in table
    assert results_table.listed_rows(os.path.join(results_dir, 'summary.md')) == [
        name for name, r in results.ROWS.items() if not r.experiment]
    assert 'Not run yet' not in results_table.section([row], results.SOURCES, results_dir)
    with open(os.path.join(folder, 'run.json')) as f:
        run = json.load(f)
    assert list(run['seeds']) == ['0', '1']
    assert run['seeds']['0']['frames'] == 12_000_000
    assert run['seeds']['1']['frames'] == 13_000_000
    assert run['seeds']['0']['frames_per_second'] == 5_000
    assert run['changes_from_paper']['batch_size'] == [32, 4]
    assert 'seed' not in run['changes_from_paper']
    assert run['seeds']['1']['command'] == row.command_line(row.run_dir(
        str(tmp_path / 'runs'), 1), 1)
    assert '--config.seed=1' in run['seeds']['1']['command']
    games = runs.read_csv(os.path.join(folder, 'episodes.csv'))
    assert [int(g['seed']) for g in games] == [0] * 120 + [1] * 130
    assert os.path.getsize(os.path.join(folder, 'curve.png')) > 0


def test_a_run_of_two_sittings_records_each_with_its_commit_and_frames_per_second(tmp_path):
    row = results.ROWS['impala_breakout']
    run_dir = row.run_dir(str(tmp_path / 'runs'), 0)
    _write_run(run_dir, games=120)       # 12M frames at 5,000 frames/s
    with open(os.path.join(run_dir, 'logs', 'learner.csv'), 'a') as f:   # a second sitting
        f.write(''.join(f'{240 + i},{12_000_000 + i * 20_000},{10_000 + i * 10}\n'
                        for i in range(1, 11)))                           # at 2,000 frames/s
    with open(os.path.join(run_dir, results.SITTINGS), 'w') as f:
        f.write(json.dumps({'commit': 'aaa', 'date': 'd0', 'from_frames': 0}) + '\n' +
                json.dumps({'commit': 'bbb', 'date': 'd1', 'from_frames': 12_000_000}) + '\n')
    folder = str(tmp_path / 'results' / row.name)
    results.collect(row, str(tmp_path / 'runs'), 0, folder)
    with open(os.path.join(folder, 'run.json')) as f:
        seed = json.load(f)['seeds']['0']
    assert seed['commit'] == 'aaa'
    assert [(s['commit'], s['from_frames'], s['frames_per_second']) for s in seed['sittings']] == [
        ('aaa', 0, 5_000.0), ('bbb', 12_000_000, 2_000.0)]


def test_a_headline_row_training_across_sittings_shows_its_last_mark_and_its_progress(
        tmp_path):
    """The summary of a row short of its target's frames gives its newest mark reached and how
    far it has trained, not "not run yet" (issue 58's 200M row between sittings)."""
    row = results.ROWS['impala_breakout_paper']
    results_dir = str(tmp_path / 'results')
    _write_run(row.run_dir(str(tmp_path / 'runs'), 0), games=120)      # 12M frames
    results.collect(row, str(tmp_path / 'runs'), 0, os.path.join(results_dir, row.name))
    summary = results_table.summary([row], results_dir, results.PAPER_TABLE_SOURCES)
    at_10m = sum(i % 7 for i in range(20, 120)) / 100
    assert (f'| {at_10m:.1f} at 10M (1 seed); training, at 12M of 200M | '
            f'640.43 (IMPALA table C.1) | target 640.43 by 200M | its command |') in summary, \
        summary
    # Marked as the paper's own number at the paper's frames (issue 58).
    assert 'Set beside a paper table: `impala_breakout_paper`.' in summary, summary


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
        json.dump({'experiment': 'impala_atari', 'batch_size': 2, 'unroll_length': 4}, f)
    lines = impala_pong_causes.summary(str(tmp_path), frames=400, bin_frames=200)
    assert lines == ['| 0-0.0002M | 2 | -20.00 | 2.000 | 3 |',
                     '| 0.0002-0.0004M | 1 | -10.00 | 1.000 | 7 |']


def test_placeholders_render_the_figures_they_name():
    rows = {'a': results.Row('a', 'x', 'launch.impala_atari', ('--preset=quick',), (2_000_000,),
                             results.Target(2_000_000, 6.0),
                             published=(results.Published(2_000_000, 6.0, 'D4PG'),))}
    folders = {'a': _folder(3_000_000, [4.0] * 30, [6.0] * 30, [11.0] * 30)}
    assert results_table.render('{a} at {a@2M}; {a@2M|published}; {b@2M}', rows, folders) == (
        '`a` (3 seeds) at 7.0 (4.0-11.0) at 2M; 7.0 (4.0-11.0) at 2M: ahead by 1.0 against 6; '
        'no data yet')
    assert results_table.render('{a@5M}', rows, folders) == 'no data yet at 5M'


def test_rllibs_epsilon_bound_scores_the_environments_at_most_0_004():
    games = _games([1.0] * 5, epsilon=0.004) + _games([9.0] * 5, epsilon=0.0056)
    assert results_table.value_at(games, 10_000, 'rllib_epsilon_bound') == pytest.approx(1.0)


def test_a_sweep_row_collects_its_members_from_one_run(tmp_path):
    """A sweep (`members`): one command, no seed flag; member i is RUN_DIR/learner_<i>, the
    folder's run i, named a member."""
    row = dataclasses.replace(results.ROWS['laser_breakout'], name='sweep', members=2,
                              flags=(*results.ROWS['laser_breakout'].flags, '--sweep=quick'))
    run_root = str(tmp_path / 'runs')
    assert row.runs == (0, 1) and row.run_dir(run_root, 1) == row.run_dir(run_root, 0)
    assert row.logs_dir(run_root, 1) == os.path.join(row.run_dir(run_root, 0), 'learner_1')
    assert '--config.seed=1' not in row.command('RUN_DIR', 1)
    folder = str(tmp_path / 'results' / row.name)
    for member, games in ((0, 110), (1, 120)):
        _write_run(row.logs_dir(run_root, member), games=games)
        results.collect(row, run_root, member, folder)
    with open(os.path.join(folder, 'run.json')) as f:
        run = json.load(f)
    assert run['unit'] == 'member' and list(run['seeds']) == ['0', '1']
    assert run['seeds']['1']['frames'] == 12_000_000
    assert run['seeds']['1']['command'] == row.command_line(row.run_dir(run_root, 0))
    games = runs.read_csv(os.path.join(folder, 'episodes.csv'))
    assert [int(g['seed']) for g in games] == [0] * 110 + [1] * 120
    folders = {row.name: results_table.read_folder(folder, row.statistic)}
    assert results_table.render('{sweep}', {row.name: row}, folders) == '`sweep` (2 members)'
