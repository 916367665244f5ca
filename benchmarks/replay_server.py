"""A launch program's replay role on a free loopback port, for the replay benchmarks."""
import contextlib
import subprocess
import sys
import tempfile

import portpicker

from launch import runtime


@contextlib.contextmanager
def started(program: str, *flags: str):
    """Runs `python -m program --role=replay` with `flags` in a fresh run directory until the
    block ends; yields (its address, its pid) once it answers."""
    address = f'localhost:{portpicker.pick_unused_port()}'
    server = subprocess.Popen(
        [sys.executable, '-m', program, '--role=replay', f'--replay_address={address}',
         f'--run_dir={tempfile.mkdtemp()}', *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        runtime.wait_for_replay(address)
        yield address, server.pid
    finally:
        server.terminate()
        server.wait()
