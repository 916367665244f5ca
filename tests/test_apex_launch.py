"""The Ape-X launchers end to end: real processes, a real Reverb server, real dm_control."""
import csv
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_launcher_runs_a_tiny_dpg_experiment(tmp_path):
    run_dir = tmp_path / 'run'
    result = subprocess.run(
        [sys.executable, '-m', 'launch.apex_dpg_control', '--task=cartpole_swingup',
         '--preset=tiny', f'--run_dir={run_dir}', '--config.total_frames=1500'],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2'))
    assert result.returncode == 0, result.stderr[-2000:]
    with open(run_dir / 'evaluation.csv') as f:
        rows = list(csv.DictReader(f))
    assert rows and rows[0]['game'] == 'cartpole_swingup'
    assert rows[0]['protocol'] == 'apex_control_noiseless'
    assert int(rows[0]['episode_frames']) == 1000     # the task's own time limit


def test_unknown_task_is_a_one_line_error(tmp_path):
    result = subprocess.run(
        [sys.executable, '-m', 'launch.apex_dpg_control', '--task=cartpole_swingupp',
         f'--run_dir={tmp_path}/run'], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2'))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: unknown dm_control task 'cartpole_swingupp'"), result.stderr
