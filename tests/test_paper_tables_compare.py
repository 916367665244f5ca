"""paper_tables: protocols, DMLab-30 names, the table catalog, and compare.py on fake run dirs."""
import json

import pytest

from environments import names
from paper_tables import catalog, compare, protocols, runs, tables

EVALUATION_HEADER = 'game,protocol,checkpoint_frames,episode,score,episode_frames\n'


def _run_dir(root, name, game, evaluations, torso='deep', curve=True):
    """A run directory as the launcher writes it; evaluations: [(protocol, frames, scores)]."""
    path = root / name
    (path / 'logs').mkdir(parents=True)
    (path / 'config.json').write_text(json.dumps({
        'experiment': 'impala_atari', 'game': game, 'total_frames': 10_000_000, 'torso': torso}))
    if curve:
        (path / 'logs' / 'episodes.csv').write_text(
            'frames,wall_time,actor,episode_return,episode_frames\n'
            + ''.join(f'{i * 4000},{i},0,{i % 21 - 10},4000\n' for i in range(1, 250)))
    lines = [f'{game},{protocol},{frames},{episode},{score},3000\n'
             for protocol, frames, episode_scores in evaluations
             for episode, score in enumerate(episode_scores)]
    (path / 'evaluation.csv').write_text(EVALUATION_HEADER + ''.join(lines))
    return path


# --- Protocols, names, catalog ---------------------------------------------------------------

def test_impala_atari_protocol():
    protocol = protocols.get_protocol('impala_atari_noop')
    assert (protocol.episodes, protocol.noop_max, protocol.max_episode_frames,
            protocol.action_set, protocol.human_starts) == (200, 30, 108_000, 'minimal', False)
    assert protocols.get_protocol('impala_atari_multitask_noop').action_set == 'full'


def test_human_start_protocols_are_marked():
    marked = {name for name, protocol in protocols.PROTOCOLS.items() if protocol.human_starts}
    assert marked == {'apex_atari_human', 'reactor_atari_human'}


def test_unknown_protocol_lists_the_known_ones():
    with pytest.raises(ValueError, match='impala_atari_noop') as error:
        protocols.get_protocol('impala_atari')
    assert '\n' not in str(error.value)


def test_every_data_file_protocol_is_defined_or_none():
    for filename in tables.data_files():
        protocol = tables.load(filename).meta['protocol']
        first = protocol.split()[0]
        assert first == 'none' or first in protocols.PROTOCOLS, (filename, protocol)


def test_catalog_tables_use_defined_protocols_and_existing_columns():
    for spec in catalog.PAPER_TABLES.values():
        assert spec.protocol in protocols.PROTOCOLS
        # None: a paper with summaries only (LASER's DMLab-30; tests/test_laser_dmlab30.py)
        assert spec.column is None or spec.column in tables.load(spec.filename).columns


def test_catalog_default_tables_exist():
    tables_ = {(paper, table) for paper, table, _ in catalog.PAPER_TABLES}
    assert set(catalog.DEFAULT_TABLES.values()) <= tables_


def test_catalog_needs_the_torso_for_impala_experts():
    assert catalog.get_table('impala', 'atari_experts', 'shallow').column == 'impala_shallow'
    with pytest.raises(ValueError, match="torso None"):
        catalog.get_table('impala', 'atari_experts')


def test_dmlab_names_resolve_paper_spellings():
    assert names.dmlab_level_name('pyschlab_visual_search') == 'psychlab_visual_search'
    assert (names.dmlab_level_name('lasertag_three_oponents_large')
            == 'lasertag_three_opponents_large')
    assert (names.dmlab_level_name('contributed/dmlab30/rooms_collect_good_objects_train')
            == 'rooms_collect_good_objects_train')
    assert len(set(names.DMLAB30)) == len(set(names.DMLAB30_TRAIN)) == 30


def test_unknown_dmlab_level_suggests_near_matches():
    with pytest.raises(ValueError, match='did you mean: rooms_watermaze') as error:
        names.dmlab_level_name('rooms_watermase')
    assert '\n' not in str(error.value)


# --- Reading run dirs ------------------------------------------------------------------------

def test_read_run_takes_the_latest_checkpoint(tmp_path):
    path = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 5_000_000, [1.0, 3.0]),
                                                ('impala_atari_noop', 9_000_000, [10.0, 12.0])])
    (evaluation,) = runs.read_run(path).evaluations
    assert (evaluation.checkpoint_frames, evaluation.mean_score) == (9_000_000, 11.0)
    (earlier,) = runs.read_run(path, checkpoint_frames=5_000_000).evaluations
    assert earlier.mean_score == 2.0


def test_apex_curve_is_the_greediest_actors(tmp_path):
    """Ape-X DQN's curve comes from its greediest environment: the last of the last actor."""
    path = _run_dir(tmp_path, 'pong', 'pong', [('apex_atari_noop', 1_000, [1.0])])
    (path / 'config.json').write_text(json.dumps({
        'experiment': 'apex_dqn_atari', 'game': 'pong', 'total_frames': 10_000,
        'num_actors': 2, 'envs_per_actor': 3}))
    (path / 'logs' / 'episodes.csv').write_text(
        'frames,wall_time,actor,env,episode_return,episode_frames\n'
        + ''.join(f'{10 * (3 * a + e)},0,{a},{e},{3 * a + e},100\n'
                  for a in range(2) for e in range(3)))
    assert runs.read_run(path).curve == ((50.0, 5.0),)
    impala = _run_dir(tmp_path, 'impala', 'pong', [('impala_atari_noop', 1_000, [1.0])])
    assert len(runs.read_run(impala).curve) == 249   # every actor's games


def test_run_dir_without_evaluation_is_a_one_line_error(tmp_path):
    (tmp_path / 'run').mkdir()
    with pytest.raises(ValueError, match='no evaluation.csv'):
        runs.read_run(tmp_path / 'run')


# --- compare.py end to end -------------------------------------------------------------------

def test_compare_end_to_end(tmp_path, capsys):
    pong = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 10_000_000, [19.0, 21.0])])
    breakout = _run_dir(tmp_path, 'breakout', 'Breakout',
                        [('impala_atari_noop', 200_000_000, [787.34] * 200)], curve=False)
    out = tmp_path / 'reports' / 'copy.md'     # a directory --out makes
    assert compare.main([str(pong), str(breakout), '--paper', 'impala',
                         '--table', 'atari_experts', '--out', str(out)]) == 0
    report = capsys.readouterr().out
    assert '| pong | 20.0 | 10M (fewer than the paper\'s 200M) | 21.0 | 0.95 |' in report
    # pong: (20 - -20.7) / (14.6 - -20.7) = 115.3%; the paper's 20.98 gives 118.1%.
    assert '| 115.3% | 118.1% |' in report
    assert '| breakout | 787.3 | 200M | 787.3 | 1.00 |' in report
    assert 'Fewer than the protocol\'s 200 episodes: pong.' in report
    assert 'Missing (55): alien, amidar,' in report
    assert '| median (2 / 57) |' in report and '| 191.8% |' in report
    for run_dir in (pong, breakout):
        assert (run_dir / 'report.md').read_text() == report
        assert (run_dir / 'report.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    assert out.read_text() == report


def test_compare_shows_printed_and_recomputed_means(tmp_path, capsys):
    pong = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 200_000_000, [21.0])])
    compare.main([str(pong), '--paper', 'impala', '--table', 'atari_experts'])
    report = capsys.readouterr().out
    assert '| 1592.5% | 957.6% |' in report  # IMPALA's printed mean does not recompute


def test_compare_dmlab_uses_capped_scores(tmp_path, capsys):
    run_dir = _run_dir(tmp_path, 'dmlab', 'rooms_watermaze',
                       [('impala_dmlab30_test', 10_000_000_000, [80.0])])
    compare.main([str(run_dir), '--paper', 'impala', '--table', 'dmlab30'])
    report = capsys.readouterr().out
    assert '| rooms_watermaze | 80.0 |' in report and '| 100.0% | 54.1% |' in report
    assert '| 49.3% | 49.4% |' in report  # whole table B.1, then table 3 as printed


def test_compare_human_starts_says_the_states_are_not_public(tmp_path, capsys):
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('apex_atari_human', 100, [5.0])])
    compare.main([str(run_dir), '--paper', 'apex', '--table', 'atari_human'])
    assert 'not public' in capsys.readouterr().out


def test_compare_leaves_out_other_protocols_and_says_so(tmp_path, capsys):
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 100, [5.0]),
                                                  ('apex_atari_noop', 100, [5.0])])
    compare.main([str(run_dir), '--paper', 'impala', '--table', 'atari_experts'])
    report = capsys.readouterr().out
    assert 'pong in' in report and 'evaluated under apex_atari_noop' in report
    assert 'Missing (56)' in report


@pytest.mark.parametrize('args, message', [
    (['--paper', 'apex', '--table', 'atari_noop'],
     'apex atari_noop is scored under protocol apex_atari_noop, and the runs were evaluated '
     'under impala_atari_noop'),
    (['--paper', 'apex'], '--paper apex alone: impala_atari runs are compared with --paper '
                          'impala --table atari_experts'),
])
def test_compare_refuses_a_table_that_does_not_fit_the_run(tmp_path, capsys, args, message):
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 100, [5.0])])
    with pytest.raises(SystemExit) as exit_:
        compare.main([str(run_dir)] + args)
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and message in error and error.count('\n') == 1, error


def test_compare_refuses_a_game_evaluated_twice(tmp_path, capsys):
    first = _run_dir(tmp_path, 'a', 'pong', [('impala_atari_noop', 100, [5.0])])
    second = _run_dir(tmp_path, 'b', 'Pong', [('impala_atari_noop', 100, [6.0])])
    with pytest.raises(SystemExit):
        compare.main([str(first), str(second), '--paper', 'impala', '--table', 'atari_experts'])
    assert 'evaluated in both' in capsys.readouterr().err


@pytest.mark.parametrize('args, message', [
    (['--paper', 'impala', '--table', 'atari'], "unknown paper table 'impala' 'atari'"),
    (['--paper', 'dqn', '--table', 'atari_experts'], "unknown paper table 'dqn'"),
])
def test_compare_unknown_table_is_a_one_line_error(tmp_path, capsys, args, message):
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 100, [5.0])])
    with pytest.raises(SystemExit) as exit_:
        compare.main([str(run_dir)] + args)
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and message in error and error.count('\n') == 1


def test_compare_run_dir_without_evaluation_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / 'run').mkdir()
    with pytest.raises(SystemExit):
        compare.main([str(tmp_path / 'run'), '--paper', 'impala', '--table', 'atari_experts'])
    error = capsys.readouterr().err
    assert 'no evaluation.csv' in error and error.count('\n') == 1


def test_main_report_defaults_to_the_experiments_table(tmp_path, capsys):
    """launch/evaluate.py calls compare.main_report([run_dir]) at the end of training."""
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 100, [5.0])],
                       torso='shallow')
    markdown = compare.main_report([run_dir])
    assert markdown.startswith('# impala atari_experts: 1 of 57 games')
    assert '`impala_shallow`' in markdown and (run_dir / 'report.png').exists()


def test_no_default_table_for_an_unknown_experiment(tmp_path):
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 100, [5.0])])
    (run_dir / 'config.json').write_text(json.dumps({'experiment': 'my_agent', 'game': 'pong'}))
    with pytest.raises(ValueError, match="no default paper table for experiment 'my_agent'"):
        compare.main_report([run_dir])


def test_runs_of_different_torsos_are_a_one_line_error(tmp_path):
    shallow = _run_dir(tmp_path, 'a', 'pong', [('impala_atari_noop', 1_000, [1.0])], 'shallow')
    deep = _run_dir(tmp_path, 'b', 'breakout', [('impala_atari_noop', 1_000, [1.0])], 'deep')
    with pytest.raises(ValueError, match=r"the runs differ in torso: \['deep', 'shallow'\]"):
        compare.build_report([shallow, deep])


@pytest.mark.parametrize('file, header, message', [
    ('evaluation.csv', 'game,protocol,checkpoint_frames,episode,points\n',
     "evaluation.csv has no column 'score' (its columns: game, protocol, checkpoint_frames, "
     'episode, points)'),
    ('logs/episodes.csv', 'frames,actor,return\n', "episodes.csv has no column "
     "'episode_return'"),
])
def test_compare_names_the_file_and_the_column_it_lacks(tmp_path, capsys, file, header,
                                                        message):
    run_dir = _run_dir(tmp_path, 'pong', 'pong', [('impala_atari_noop', 100, [5.0])])
    (run_dir / file).write_text(header + 'pong,impala_atari_noop,100,0,5\n')
    with pytest.raises(SystemExit) as exit_:
        compare.main([str(run_dir)])
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and message in error and error.count('\n') == 1, error
