"""benchmarks/run_account.py on a tiny IMPALA run (real processes, Reverb, ALE): every role's
laps cover its CPU as the kernel counts it, to within a tenth, and the run's CPU fits inside
the machine's cores x wall; and the learner-bound agents' learner part of the same benchmark."""
import json
import subprocess
import sys

import pytest

from benchmarks import run_account


def test_account_of_a_tiny_run_adds_up(tmp_path):
    argv = [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
            f'--run_dir={tmp_path}', '--config.total_frames=10000000000',
            '--config.anneal_frames=10000000000']
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


@pytest.mark.parametrize('agent', ['laser', 'reactor'])
def test_a_learner_bound_agents_update_is_timed_on_a_batch_its_actor_wrote(agent):
    """benchmarks/impala_throughput.py's (c) for LASER and Reactor: the filling actor stops
    (it waits on the full queue or the pace table) and the update runs on its batch."""
    out = subprocess.run(
        [sys.executable, '-m', 'benchmarks.impala_throughput', '--part=learner',
         f'--agent={agent}', '--game=breakout', '--preset=tiny', '--seconds=1'],
        check=True, capture_output=True, text=True).stdout
    part = json.loads(out.strip().splitlines()[-1])
    assert part['updates_per_second'] > 0
    assert part['fps'] == pytest.approx(part['updates_per_second'] * (
        5 * 4 if agent == 'reactor' else 2 * 5 * 4))   # tiny: pace 5; 2 online unrolls of 5


def test_the_actors_own_loop_is_timed_without_its_transport():
    """benchmarks/impala_throughput.py's (e): a real actor's games and inference stepped in
    turn, its steps dropped; its frames are its steps times the action repeat."""
    out = subprocess.run(
        [sys.executable, '-m', 'benchmarks.impala_throughput', '--part=actor', '--game=pong',
         '--preset=tiny', '--seconds=1'], check=True, capture_output=True, text=True).stdout
    part = json.loads(out.strip().splitlines()[-1])
    assert part['steps_per_second'] > 0
    assert part['fps'] == pytest.approx(part['steps_per_second'] * 4)
