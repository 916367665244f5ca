"""The builder seam and the experiment registry: every registered experiment resolves, checks
and builds through the one interface; the package layering holds."""
import ast
import os
import re

import pytest

from agents.core import builders
from agents.core import steps
from agents.core.config_checks import ConfigError
from agents.impala import builder as impala_builder
from agents.impala import config as impala_config
from launch import experiments
from reverb_tables import tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENTS = ('impala', 'apex', 'laser', 'reactor')


@pytest.mark.parametrize('name', experiments.NAMES)
def test_every_experiment_builds_through_the_builder_interface(name, monkeypatch):
    if 'dmlab' in name:   # DeepMind Lab has no wheel: its fake (test_dmlab.py)
        monkeypatch.syspath_prepend(os.path.join(ROOT, 'tests', 'fakes'))
    experiment = experiments.get(name)
    config = experiment.presets['tiny'](experiment.paper_config())
    config = experiment.check(config)
    builder = experiment.builder(config)
    assert isinstance(builder, builders.Builder)
    spec = builder.step_spec()
    recurrent = steps.CORE_STATE in spec
    for field in ('observation', 'action', 'reward', 'discount', 'mask'):
        assert field in spec, field
    for field in ('first', 'prev_action', 'prev_reward'):
        assert (field in spec) == recurrent, field
    names = [t.name for t in builders.replay_tables(builder, 2)]
    assert tables.VARIABLES in names and tables.private(tables.VARIABLES, 1) in names
    network = builder.network()
    policy = builder.evaluation_policy(network)
    assert recurrent == bool(policy.initial_state(2))


@pytest.mark.parametrize('name', ['impala_atari', 'reactor_atari'])
def test_step_spec_and_tables_are_built_once_per_builder(name, monkeypatch):
    experiment = experiments.get(name)
    config = experiment.presets['tiny'](experiment.paper_config())
    builder = experiment.builder(config)
    built = {'make_step_spec': 0, 'make_tables': 0}
    for method in built:
        def counted(self, method=method, make=getattr(type(builder), method)):
            built[method] += 1
            return make(self)
        monkeypatch.setattr(type(builder), method, counted)
    for _ in range(2):
        builder.step_spec()
        builders.replay_tables(builder, 2)
        builder.table(builder.tables()[0].name, 1)
    assert built == {'make_step_spec': 1, 'make_tables': 1}


def test_a_builder_needs_an_environment_piece():
    with pytest.raises(TypeError, match='is not an environment piece'):
        impala_builder.ImpalaBuilder(impala_config.ImpalaAtari(), object(),
                                     impala_builder.unroll_network)


_PROJECT = ('agents', 'environments', 'launch', 'reverb_tables', 'paper_tables', 'tests')


def _project_bases(path):
    """(class, its bases that are the project's own classes) of each class in `path`."""
    with open(path) as f:
        module = ast.parse(f.read())
    aliases = {alias.asname or alias.name for node in ast.walk(module)
               if isinstance(node, ast.ImportFrom) and (node.module or '').split('.')[0]
               in _PROJECT for alias in node.names}
    local = {node.name for node in ast.walk(module) if isinstance(node, ast.ClassDef)}
    for node in ast.walk(module):
        if isinstance(node, ast.ClassDef):
            yield node.name, [ast.unparse(base) for base in node.bases if (
                isinstance(base, ast.Name) and base.id in local | aliases) or (
                isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name)
                and base.value.id in aliases)]


def test_builders_are_composed_not_inherited_from_two_project_classes():
    """Issue 39: an agent x environment pairing is a registry entry composing an agent's
    builder, an environment piece and a network factory, not a class with two of the
    project's classes as bases (a mixin per environment)."""
    for folder in ('agents', 'environments', 'launch', 'reverb_tables', 'tests/guide_agent'):
        for path in _sources(folder):
            for name, bases in _project_bases(path):
                assert len(bases) <= 1, (os.path.relpath(path, ROOT), name, bases)


def test_unknown_experiment_is_a_one_line_error():
    with pytest.raises(ConfigError, match="unknown experiment 'impala'; known: impala_atari"):
        experiments.get('impala')


def _imports(path):
    with open(path) as f:
        module = ast.parse(f.read())
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def _sources(folder):
    for directory, _, files in os.walk(os.path.join(ROOT, folder)):
        yield from (os.path.join(directory, f) for f in files if f.endswith('.py'))


def _allowed_imports():
    """docs/architecture.md's "Layers" table: package -> the packages it may import."""
    with open(os.path.join(ROOT, 'docs', 'architecture.md')) as f:
        text = f.read().split('## Layers', 1)[1].split('\n## ', 1)[0]
    allowed = {}
    for row in re.findall(r'^\| `([a-z_.]+)` \|(.*)\|$', text, re.MULTILINE):
        allowed[row[0]] = set(re.findall(r'`([a-z_.]+)`', row[1]))
    return allowed


def _package(module, packages):
    """The package of the layering table that `module` belongs to (None: outside it)."""
    for package in sorted(packages, key=len, reverse=True):
        if module == package or module.startswith(package + '.'):
            return package
    return None


def test_every_import_between_packages_is_one_the_layering_table_allows():
    allowed = _allowed_imports()
    assert {'agents.core', 'agents.impala', 'agents.laser', 'launch'} <= set(allowed)
    for package in allowed:
        assert os.path.isdir(os.path.join(ROOT, *package.split('.'))), package
        assert allowed[package] <= set(allowed), (package, allowed[package] - set(allowed))
        for path in _sources(os.path.join(*package.split('.'))):
            for name in _imports(path):
                target = _package(name, allowed)
                assert target in (None, package) or target in allowed[package], (
                    f'{os.path.relpath(path, ROOT)} imports {name}: {package} may import '
                    f'only {sorted(allowed[package])} (docs/architecture.md, "Layers")')
    assert _package('agents', allowed) is None   # `agents/__init__.py` alone holds nothing


def _modules():
    """{module: its path} of every module of the project's packages."""
    modules = {}
    for folder in _PROJECT:
        for path in _sources(folder):
            name = os.path.relpath(path, ROOT)[:-len('.py')].replace(os.sep, '.')
            modules[name.removesuffix('.__init__')] = path
    return modules


def _imported_modules(path, modules):
    """The project's modules `path` imports, at its top or inside a function (`from package
    import module` names the module)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if f'{node.module}.{alias.name}' in modules:
                    yield f'{node.module}.{alias.name}'
                elif node.module in modules:
                    yield node.module


def test_no_module_imports_itself_back():
    """No import cycle between the project's modules, not even through an import inside a
    function (as agents/core/config_checks.py once imported population, which imports it)."""
    modules = _modules()
    graph = {name: set(_imported_modules(path, modules)) - {name}
             for name, path in modules.items()}
    assert 'agents.core.population' in graph['agents.impala.config']
    for start in graph:
        path, seen = [start], set()
        stack = [(start, iter(sorted(graph[start])))]
        while stack:
            name, targets = stack[-1]
            target = next(targets, None)
            if target is None:
                stack.pop()
                path.pop()
                continue
            assert target != start, f'import cycle: {" -> ".join(path + [start])}'
            if target not in seen:
                seen.add(target)
                path.append(target)
                stack.append((target, iter(sorted(graph[target]))))


def test_no_shared_layer_names_an_agent():
    """Shared layers hold agent-agnostic machinery: no agent's name in their imports."""
    for folder in ('agents/core', 'agents/ops', 'agents/networks', 'reverb_tables',
                   'environments', 'launch'):
        for path in _sources(folder):
            for name in _imports(path):
                assert not any(name.startswith(f'agents.{a}') for a in AGENTS), (path, name)
