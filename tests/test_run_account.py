"""benchmarks/run_account.py on a tiny IMPALA run (real processes, Reverb, ALE): every role's
laps cover its CPU as the kernel counts it, to within a tenth, and the run's CPU fits inside
the machine's cores x wall."""
import sys

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
        assert p['total'] > 0 and abs(p['remainder']) < 0.1 * p['total'], name
    # Measured against the machine: no more CPU than its cores had, no negative idle core.
    assert 0 < result['roles_total'] <= 1.05 * result['cores_x_wall']
    assert min(result['core_idle']) >= 0
    text = run_account.table(result)
    assert 'CPU seconds per 1,000 frames' in text and 'idle cores' in text
