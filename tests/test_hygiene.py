"""The tests' own rules (issue 19): no test that can only skip, no `pytest.raises(Exception)`,
and no reaching into another object's private attributes (a test uses the public API, which
the production class grows where a test needs it). Each rule is read from the syntax tree of
every file under tests/.
"""
import ast
import pathlib
import sys
import textwrap

import pytest

TESTS = pathlib.Path(__file__).parent
PROJECT_PACKAGES = {'agents', 'benchmarks', 'environments', 'launch', 'paper_tables',
                    'reverb_tables'}
# Named tuples' public API is spelled with one underscore so as not to clash with field names.
NAMEDTUPLE_API = {'_asdict', '_field_defaults', '_fields', '_make', '_replace'}
BROAD = {'Exception', 'BaseException'}


def _private(name):
    """One leading underscore (or a mangled `__name`), not a dunder like `__name__`."""
    return name.startswith('_') and not (name.startswith('__') and name.endswith('__'))


def _dotted(node):
    """'pytest.mark.skip' for that expression; None for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return base and f'{base}.{node.attr}'
    return None


def _standard_library_names(tree):
    """The names this module binds by importing from the standard library."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound |= {alias.asname or alias.name.split('.')[0] for alias in node.names
                      if alias.name.split('.')[0] in sys.stdlib_module_names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split('.')[0] in sys.stdlib_module_names:
                bound |= {alias.asname or alias.name for alias in node.names}
    return bound


def _only_skips(function):
    """Whether a test function skips whatever happens: a mark.skip, or pytest.skip(...) as a
    statement of its own body (not under an if, a with or a try)."""
    if any(_dotted(d.func if isinstance(d, ast.Call) else d) == 'pytest.mark.skip'
           for d in function.decorator_list):
        return True
    return any(isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
               and _dotted(statement.value.func) == 'pytest.skip'
               for statement in function.body)


def violations(source):
    """(line, what) for each break of the rules in one module's source."""
    tree = ast.parse(source)
    standard = _standard_library_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.startswith('test') and _only_skips(node):
            found.append((node.lineno, f'{node.name} can only skip'))
        elif isinstance(node, ast.Call) and _dotted(node.func) in ('pytest.raises', 'raises'):
            expected = node.args[0] if node.args else None
            names = expected.elts if isinstance(expected, ast.Tuple) else [expected]
            broad = sorted({_dotted(n) for n in names if n is not None} & BROAD)
            if broad:
                found.append((node.lineno, f'pytest.raises({broad[0]}): name the error'))
        elif isinstance(node, ast.Attribute) and _private(node.attr) \
                and node.attr not in NAMEDTUPLE_API:
            owner = _dotted(node.value)
            if owner not in ('self', 'cls') and (owner or '').split('.')[0] not in standard:
                found.append((node.lineno, f'{owner or "(expression)"}.{node.attr} is private'))
        elif isinstance(node, ast.Call) and _dotted(node.func) in ('getattr', 'setattr',
                                                                   'hasattr', 'delattr') \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and _private(node.args[1].value) \
                and _dotted(node.args[0]) not in ('self', 'cls'):
            found.append((node.lineno, f'{_dotted(node.func)}(..., {node.args[1].value!r}) '
                                       f'reads a private attribute'))
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split('.')[0] in PROJECT_PACKAGES:
            found += [(node.lineno, f'from {node.module} import {alias.name} is private')
                      for alias in node.names if _private(alias.name)]
    return sorted(found)


def test_every_test_file_keeps_the_rules():
    found = [f'{path.relative_to(TESTS.parent)}:{line}: {what}'
             for path in sorted(TESTS.rglob('*.py'))
             for line, what in violations(path.read_text())]
    assert not found, '\n'.join(found)


@pytest.mark.parametrize('source, expected', [
    ('def test_a():\n    pytest.skip("no data")\n', 'test_a can only skip'),
    ('@pytest.mark.skip(reason="later")\ndef test_a():\n    pass\n', 'test_a can only skip'),
    ('with pytest.raises(Exception):\n    f()\n', 'pytest.raises(Exception): name the error'),
    ('pytest.raises((ValueError, BaseException), f)\n',
     'pytest.raises(BaseException): name the error'),
    ('learner._pusher.push(0)\n', 'learner._pusher is private'),
    ('self.learner._step\n', 'self.learner._step is private'),
    ('make()._lock.close()\n', '(expression)._lock is private'),
    ('replay._client = client\n', 'replay._client is private'),
    ('getattr(env, "_lab")\n', "getattr(..., '_lab') reads a private attribute"),
    ('from agents.core.learner import _first_line\n',
     'from agents.core.learner import _first_line is private'),
])
def test_the_rules_catch(source, expected):
    assert [what for _, what in violations(source)] == [expected]


def test_the_rules_pass_what_is_allowed():
    source = textwrap.dedent('''
        import os
        import collections as c
        from launch_processes import wait_for as _wait_for

        def _program(*args):
            return list(args)

        class Fake:
            def __init__(self):
                self._frames = 0
                self.__secret = 1

            @classmethod
            def make(cls):
                return cls._registry

        def test_a(tmp_path):
            if not os.path.exists(tmp_path):
                pytest.skip('no directory')
            _program('--flag')
            _wait_for(lambda: True, 'nothing')
            os._exit
            c.OrderedDict.__name__
            point._replace(x=1)._asdict()
            type(point)._fields
            getattr(point, 'x')
            with pytest.raises(ValueError, match='bad'):
                raise ValueError('bad')
        ''')
    assert violations(source) == []


def test_the_slowest_first_order_names_test_files_once():
    """conftest.SLOWEST_FIRST orders real files: a renamed one would fall silently to the end."""
    import conftest
    assert len(set(conftest.SLOWEST_FIRST)) == len(conftest.SLOWEST_FIRST)
    assert [name for name in conftest.SLOWEST_FIRST if not (TESTS / name).is_file()] == []
