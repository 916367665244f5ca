"""Every CPU-second of a local run per 1,000 frames: by process, by part, and the idle cores.

`account(argv, warmup_s, window_s)` starts the launch command `argv` (a local run) with
DISTRL_CPU_ACCOUNT set, so that its actors and learner count their loops' CPU by part
(agents/core/cpu_account.py); after `warmup_s` from the learner's first update it reads every
process twice, `window_s` apart, then stops the run (SIGTERM, as Ctrl-C). Process totals are the
kernel's (/proc/<pid>/stat: the roles read their own when they write their laps, psutil reads
the launcher's and the replay server's); a role's parts are its laps, and the difference is
shown as its remainder. The machine's cores x wall time splits into the run's processes, the
idle cores (per core) and whatever else ran on the machine.
"""
import glob
import json
import os
import signal
import subprocess
import tempfile
import time

import psutil

from agents.core import cpu_account

_STARTUP_TIMEOUT_S = 600.0


def _process_cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _snapshot(directory: str, launcher: psutil.Process) -> dict:
    """Every role's laps and kernel CPU, the launcher's and replay server's CPU, the cores."""
    roles = {}
    for path in glob.glob(os.path.join(directory, '*.json')):
        with open(path) as f:
            roles[os.path.basename(path)[:-len('.json')].rsplit('_', 1)[0]] = json.load(f)
    others = {}
    for child in launcher.children(recursive=True):
        if any(arg == '--role=replay' for arg in child.cmdline()):
            others['replay'] = _process_cpu(child)
    others['launcher'] = _process_cpu(launcher)
    return {'wall': time.time(), 'roles': roles, 'others': others,
            'cores': [t._asdict() for t in psutil.cpu_times(percpu=True)]}


def _core_seconds(before: dict, after: dict) -> tuple[float, float]:
    """(idle, busy) seconds of one core between two psutil.cpu_times readings."""
    delta = {k: after[k] - before[k] for k in after}
    idle = delta['idle'] + delta.get('iowait', 0.0)
    return idle, sum(delta.values()) - idle - delta.get('guest', 0) - delta.get('guest_nice', 0)


def account(argv: list[str], warmup_s: float, window_s: float) -> dict:
    """Runs `argv` and returns CPU seconds per 1,000 frames (learner frames) by process and
    part, the idle seconds of each core, and the learner's frames/s over the window."""
    directory = tempfile.mkdtemp(prefix='cpu_account_')
    env = dict(os.environ, **{cpu_account.ENVIRONMENT_VARIABLE: directory})
    popen = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    try:
        launcher = psutil.Process(popen.pid)
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while not glob.glob(os.path.join(directory, 'learner_*.json')):
            if popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'the run made no update in {_STARTUP_TIMEOUT_S:.0f} s '
                                   f'(exit code {popen.poll()})')
            time.sleep(0.5)
        time.sleep(warmup_s)
        first = _snapshot(directory, launcher)
        time.sleep(window_s)
        last = _snapshot(directory, launcher)
    finally:
        popen.send_signal(signal.SIGTERM)
        popen.wait()
    return _per_thousand_frames(first, last)


def _per_thousand_frames(first: dict, last: dict) -> dict:
    learner = [name for name in last['roles'] if name.startswith('learner')][0]
    a, b = first['roles'][learner], last['roles'][learner]
    fps = (b['frames'] - a['frames']) / (b['wall'] - a['wall'])
    wall = last['wall'] - first['wall']
    per_k = 1000.0 / fps     # wall seconds per 1,000 frames

    def scaled(cpu, seconds):  # CPU seconds over `seconds` of wall -> per 1,000 frames
        return cpu / seconds * per_k

    processes = {}
    for name in sorted(last['roles']):
        if name not in first['roles'] or first['roles'][name]['pid'] != last['roles'][name]['pid']:
            continue       # started or restarted during the window
        a, b = first['roles'][name], last['roles'][name]
        span = b['wall'] - a['wall']
        parts = {part: scaled(b['parts'][part] - a['parts'].get(part, 0.0), span)
                 for part in b['parts']}
        total = scaled(b['kernel_cpu'] - a['kernel_cpu'], span)
        processes[name] = {
            'parts': parts, 'total': total, 'remainder': total - sum(parts.values()),
            'main_thread': scaled(b['main_thread_cpu'] - a['main_thread_cpu'], span)}
    for name in last['others']:
        processes[name] = {'parts': {}, 'remainder': 0.0, 'total': scaled(
            last['others'][name] - first['others'][name], wall)}
    cores = [_core_seconds(a, b) for a, b in zip(first['cores'], last['cores'])]
    idle = [scaled(i, wall) for i, _ in cores]
    busy = scaled(sum(b for _, b in cores), wall)
    roles_total = sum(p['total'] for p in processes.values())
    return {'fps': fps, 'window_s': wall, 'cores': len(cores), 'processes': processes,
            'roles_total': roles_total, 'core_idle': idle,
            'other_load': busy - roles_total, 'cores_x_wall': busy + sum(idle)}


def table(result: dict) -> str:
    """The account as text: CPU seconds per 1,000 frames."""
    lines = [f'CPU seconds per 1,000 frames (learner {result["fps"]:,.0f} frames/s over '
             f'{result["window_s"]:.0f} s, {result["cores"]} cores)',
             f'  {"process":12s} {"part":22s} {"cpu_s":>7s}']
    for name, process in result['processes'].items():
        for part, value in sorted(process['parts'].items(), key=lambda kv: -kv[1]):
            lines.append(f'  {name:12s} {part:22s} {value:7.3f}')
        if process['parts']:
            lines.append(f'  {name:12s} {"(remainder)":22s} {process["remainder"]:7.3f}')
            lines.append(f'  {name:12s} {"(off main thread)":22s} '
                         f'{process["total"] - process["main_thread"]:7.3f}  '
                         f'(inside the parts above)')
        lines.append(f'  {name:12s} {"= total (kernel)":22s} {process["total"]:7.3f}')
    idle = result['core_idle']
    lines += [f'  {"all processes of the run":35s} {result["roles_total"]:7.3f}',
              f'  {"idle cores":35s} {sum(idle):7.3f}  (per core: '
              + ', '.join(f'{i:.3f}' for i in idle) + ')',
              f'  {"other load on the machine":35s} {result["other_load"]:7.3f}',
              f'  {"= cores x wall":35s} {result["cores_x_wall"]:7.3f}']
    return '\n'.join(lines)
