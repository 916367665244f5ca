"""Every command README.md, docs/ and the launch programs' docstrings show runs as shown (issue
24): each `python -m launch.<program>` in the docs' shell blocks and in the module docstrings of
launch/*.py is checked as its program would run it, with DISTRL_CHECK_ONLY set (the input
resolved and checked, nothing started); `launch.evaluate` and `paper_tables.compare`, which
need a trained run, with --help. And --help lists the flags every program shares, and prints
the program's docstring as written."""
import ast
import concurrent.futures
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from launch_processes import ENV
from launch_processes import ROOT

_DOCS = ['README.md', *sorted(str(p.relative_to(ROOT)) for p in (pathlib.Path(ROOT) /
                                                                  'docs').glob('*.md'))]
# A documented DMLab command parses, then says in one line that DeepMind Lab is missing.
_NO_DMLAB = 'error: DeepMind Lab is not installed'


_PROGRAMS = sorted(str(p.relative_to(ROOT)) for p in (pathlib.Path(ROOT) / 'launch').glob('*.py'))


def _commands(where: str, text: str) -> list[tuple[str, list[str]]]:
    """(where, argv after `python -m`) of every line of `text` that is a command."""
    found = []
    for line in text.replace('\\\n', ' ').splitlines():
        line = line.split(' #')[0].strip()
        match = re.match(r'^(?:\S*/)?python -m ((?:launch|paper_tables)\.\S+.*)$', line)
        if match:
            found.append((where, shlex.split(match.group(1))))
    return found


def documented_commands() -> list[tuple[str, list[str]]]:
    """Every command in the docs' ```sh blocks and in the launch programs' docstrings."""
    found = []
    for doc in _DOCS:
        text = (pathlib.Path(ROOT) / doc).read_text()
        for block in re.findall(r'```sh\n(.*?)```', text, re.DOTALL):
            found += _commands(doc, block)
    for program in _PROGRAMS:
        module = ast.parse((pathlib.Path(ROOT) / program).read_text())
        found += _commands(program, ast.get_docstring(module) or '')
    return found


COMMANDS = documented_commands()


def _check(argv, tmp):
    module, *args = argv
    if module in ('launch.evaluate', 'paper_tables.compare'):
        args = ['--help']
    elif not any(a.startswith('--run_dir') for a in args):
        args.append(f'--run_dir={tmp}')
    return subprocess.run([sys.executable, '-m', module, *args], cwd=ROOT,
                          env=dict(ENV, DISTRL_CHECK_ONLY='1'), capture_output=True, text=True,
                          timeout=240)


@pytest.fixture(scope='module')
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp('documented')
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda i: _check(COMMANDS[i][1], str(root / str(i))),
                             range(len(COMMANDS))))


def test_the_docs_show_commands_of_every_kind():
    modules = {argv[0] for _, argv in COMMANDS}
    assert len(COMMANDS) >= 20
    assert {where for where, _ in COMMANDS} >= {'README.md', 'launch/impala_atari.py',
                                                'launch/laser_atari.py', 'launch/evaluate.py'}
    assert {'launch.impala_atari', 'launch.laser_atari', 'launch.evaluate',
            'paper_tables.compare', 'launch.impala_correction_study'} <= modules


@pytest.mark.parametrize('index', range(len(COMMANDS)),
                         ids=[f'{doc}:{" ".join(argv)}' for doc, argv in COMMANDS])
def test_a_documented_command_runs_as_shown(index, results):
    result = results[index]
    lines = result.stderr.strip().splitlines()
    if COMMANDS[index][1][0] in ('launch.evaluate', 'paper_tables.compare'):
        assert 'run_dir' in result.stdout.lower(), result.stderr   # absl's --help exits 1
        return
    if result.returncode and lines and lines[-1].startswith(_NO_DMLAB):
        return
    assert result.returncode == 0, result.stdout + result.stderr


def test_help_lists_the_shared_flags():
    result = subprocess.run([sys.executable, '-m', 'launch.impala_atari', '--help'], cwd=ROOT,
                            env=ENV, capture_output=True, text=True, timeout=120)
    for flag in ('--game', '--preset', '--run_dir', '--sweep', '--role', '--replay_address',
                 '--launcher', '--config'):
        assert f'  {flag}:' in result.stdout, result.stdout
    assert 'resumes the run from its checkpoints' in result.stdout   # program's shared usage
    assert 'One role per machine' in result.stdout and '--role=actor --actor_id=N' in result.stdout


def _docstring(program: str) -> str:
    module = ast.parse((pathlib.Path(ROOT) / program).read_text())
    return ast.get_docstring(module, clean=False) or ''


@pytest.mark.parametrize('program', [p for p in _PROGRAMS if '%' in _docstring(p)])
def test_help_prints_the_docstring_as_written(program):
    """absl %-formats the docstring it prints as usage ("87.5% replay" came out mangled)."""
    module = program[:-len('.py')].replace('/', '.')
    result = subprocess.run([sys.executable, '-m', module, '--help'], cwd=ROOT, env=ENV,
                            capture_output=True, text=True, timeout=120)
    assert _docstring(program) in result.stdout, result.stdout[:2000]
