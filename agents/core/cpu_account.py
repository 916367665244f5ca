"""CPU seconds of a role's main loop by part, for `benchmarks/impala_throughput.py --account`.

Off unless the environment variable DISTRL_CPU_ACCOUNT names a directory; then the actor and
learner loops call `lap(part)` at the end of each piece of their work, and every piece's
process CPU time (`time.process_time()`: all of the process's threads while the piece ran, so
that the TensorFlow pool threads of an inference count as inference) goes to its part. The
laps cover the whole loop; `write` saves the running totals with the process's and its main
thread's CPU as the kernel counts them (/proc/self/stat) and the wall time to
DIRECTORY/<name>_<pid>.json, which the benchmark reads twice and subtracts: the kernel's total
less the parts is what the laps missed. Off, `lap` and `write` do nothing.
"""
import collections
import json
import os
import threading
import time

ENVIRONMENT_VARIABLE = 'DISTRL_CPU_ACCOUNT'
_WRITE_INTERVAL_S = 1.0


class _Off:
    def lap(self, part: str) -> None:
        del part

    def write(self, **counters) -> None:
        del counters


class CpuAccount:
    """Process CPU seconds by part since it was made, written about once a second."""

    def __init__(self, path: str):
        self._path = path
        self._parts = collections.defaultdict(float)
        self._last = time.process_time()
        self._written = 0.0
        self._main_tid = threading.get_native_id()

    def lap(self, part: str) -> None:
        """The process CPU since the previous lap was spent on `part`."""
        now = time.process_time()
        self._parts[part] += now - self._last
        self._last = now

    def write(self, **counters) -> None:
        """Saves the totals, with `counters` (integers or scalar tensors, e.g. frames), if a
        second has passed since the last write; the write's own CPU is the part 'account'."""
        wall = time.time()
        if wall - self._written < _WRITE_INTERVAL_S:
            return
        self._written = wall
        self.lap('account')
        record = {'pid': os.getpid(), 'wall': wall, 'kernel_cpu': kernel_cpu('self'),
                  'main_thread_cpu': kernel_cpu(f'self/task/{self._main_tid}'),
                  'parts': dict(self._parts), **{k: int(v) for k, v in counters.items()}}
        tmp = self._path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(record, f)
        os.replace(tmp, self._path)


def account(name: str):
    """The account of the process `name` (e.g. actor_0), or one that does nothing when
    DISTRL_CPU_ACCOUNT is unset."""
    directory = os.environ.get(ENVIRONMENT_VARIABLE)
    if not directory:
        return _Off()
    return CpuAccount(os.path.join(directory, f'{name}_{os.getpid()}.json'))


def kernel_cpu(task: str) -> float:
    """CPU seconds (user + system) of /proc/`task` as the kernel counts them."""
    with open(f'/proc/{task}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
