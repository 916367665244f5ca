"""The builder seam and the experiment registry: every registered experiment resolves, checks
and builds through the one interface; the package layering holds."""
import ast
import os

import pytest

from agents.core import builders
from agents.core import steps
from agents.core.config_checks import ConfigError
from launch import experiments
from reverb_tables import tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENTS = ('impala', 'apex', 'laser', 'reactor')


@pytest.mark.parametrize('name', experiments.NAMES)
def test_every_experiment_builds_through_the_builder_interface(name, monkeypatch):
    if name.startswith('impala_dmlab'):   # DeepMind Lab has no wheel: its fake (test_dmlab.py)
        monkeypatch.syspath_prepend(os.path.join(ROOT, 'tests', 'fakes'))
    experiment = experiments.get(name)
    config = experiment.presets['tiny'](experiment.paper_config())
    experiment.check(config)
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


def test_no_agent_imports_another_and_environments_stand_alone():
    for agent in AGENTS:
        if not os.path.isdir(os.path.join(ROOT, 'agents', agent)):
            continue
        for path in _sources(os.path.join('agents', agent)):
            for name in _imports(path):
                others = [a for a in AGENTS if a != agent]
                assert not any(name.startswith(f'agents.{a}') for a in others), (path, name)
    for folder in ('environments', 'agents', 'reverb_tables'):
        for path in _sources(folder):
            for name in _imports(path):
                assert not name.startswith(('paper_tables', 'launch')), (path, name)
