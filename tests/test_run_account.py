"""benchmarks/run_account.py on a tiny IMPALA run (real processes, Reverb, ALE): every role's
parts and remainder add up to its total as the kernel counts it, the laps miss little of it,
and the machine's cores x wall splits into the run, the idle cores and the other load."""
import sys

import pytest

from benchmarks import run_account


def test_account_of_a_tiny_run_adds_up(tmp_path):
    argv = [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
            f'--run_dir={tmp_path}', '--config.total_frames=10000000000']
    result = run_account.account(argv, warmup_s=2, window_s=5)
    processes = result['processes']
    assert set(processes) == {'actor_0', 'learner', 'replay', 'launcher'}
    assert {'parameters', 'inference', 'emulator', 'adder'} <= set(processes['actor_0']['parts'])
    assert {'dataset', 'update', 'push'} <= set(processes['learner']['parts'])
    for name in ('actor_0', 'learner'):
        p = processes[name]
        assert sum(p['parts'].values()) + p['remainder'] == pytest.approx(p['total'])
        assert abs(p['remainder']) < 0.1 * p['total'], name
    assert (result['roles_total'] + sum(result['core_idle']) + result['other_load']
            == pytest.approx(result['cores_x_wall']))
    text = run_account.table(result)
    assert 'CPU seconds per 1,000 frames' in text and 'idle cores' in text
