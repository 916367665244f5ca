"""Whether this machine computes bfloat16 in hardware, read without TensorFlow (issue 37).

An x86 processor does where /proc/cpuinfo lists `avx512_bf16` or `amx_bf16` (the units
oneDNN's bfloat16 kernels run on; without them bfloat16 is emulated, slower than float32); a
GPU does from compute capability 8.0 (Ampere's bfloat16 tensor cores), as nvidia-smi reports
it.
"""
import subprocess
from typing import Sequence

CPU_FLAGS = ('avx512_bf16', 'amx_bf16')
GPU_CAPABILITY = 8.0


def cpu_units(cpuinfo: str) -> tuple[str, ...]:
    """The flags of `CPU_FLAGS` that the `flags` lines of `cpuinfo` (/proc/cpuinfo's text)
    list."""
    flags = set()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(':')
        if name.strip() == 'flags':
            flags.update(value.split())
    return tuple(flag for flag in CPU_FLAGS if flag in flags)


def gpu_units(capabilities: Sequence[str]) -> tuple[str, ...]:
    """'GPU <capability>' for each compute capability ('8.6', as nvidia-smi spells it) of
    `GPU_CAPABILITY` or more."""
    return tuple(f'GPU {c}' for c in capabilities if float(c) >= GPU_CAPABILITY)


def gpu_capabilities() -> list[str]:
    """This machine's GPUs' compute capabilities, from nvidia-smi; none without it."""
    try:
        out = subprocess.run(['nvidia-smi', '--query-gpu=compute_cap', '--format=csv,noheader'],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def _cpuinfo() -> str:
    try:
        with open('/proc/cpuinfo') as f:
            return f.read()
    except OSError:       # not Linux: no flags to read
        return ''


def bfloat16_units() -> tuple[str, ...]:
    """This machine's bfloat16 units: the processor's flags, else its capable GPUs."""
    return cpu_units(_cpuinfo()) or gpu_units(gpu_capabilities())


def describe() -> str:
    """The processor's name and its bfloat16 units, in one line (benchmark headers)."""
    info = _cpuinfo()
    model = next((line.partition(':')[2].strip() for line in info.splitlines()
                  if line.startswith('model name')), 'unknown processor')
    units = bfloat16_units()
    return f'{model}; bfloat16 units: {", ".join(units) if units else "none"}'
