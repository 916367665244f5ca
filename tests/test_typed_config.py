"""Typed experiment configs (agents/core/typed_config.py, issue 39): frozen, changed by
`replace` only, each field citing its source, a redeclared field keeping its section's rule and
resume rule, and a run's config.json read back field for field."""
import dataclasses
import glob
import importlib
import json
import os
import re
import shutil

import pytest

from agents.core import config_checks
from agents.core import environment_config
from agents.core import population
from agents.core import runtime_config
from agents.core import typed_config
from agents.core.config_checks import ConfigError
from agents.core.typed_config import member
from agents.core.typed_config import setting
from launch import configs
from launch import experiments
from tests import experiment_configs


@typed_config.config
class _Section(typed_config.Config):
    learning_rate: float = setting(1e-3, 'a section', config_checks.STEP_SIZE)
    torso: str = setting('shallow', 'a section', ('shallow', 'deep'), fixed_on_resume=True)


@typed_config.config
class _Stated(_Section):
    learning_rate: float = setting(5e-4, 'its paper')          # keeps the section's rule


@typed_config.config
class _Runtime(runtime_config.Runtime):
    experiment: str = setting('made_up', 'a test')
    eval_protocol: str = setting('atari_noop', 'a test')


@typed_config.config
class _Experiment(typed_config.Config):
    section: _Section = member(_Stated)
    runtime: runtime_config.Runtime = member(_Runtime)


def test_a_config_is_frozen_and_changed_by_replace_only():
    config = _Experiment()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.learning_rate = 1.0
    changed = config.replace(learning_rate=1.0)
    assert (changed.learning_rate, config.learning_rate) == (1.0, 5e-4)
    with pytest.raises(ValueError, match="_Experiment has no field 'learning_rte'; did you mean: "
                                         "learning_rate?"):
        config.replace(learning_rte=1.0)
    assert changed.to_dict() == {**config.to_dict(), 'learning_rate': 1.0}
    assert 'torso' in config and config['torso'] == 'shallow' and 'game' not in config


def test_a_redeclared_field_keeps_its_sections_rule_and_resume_rule():
    assert _Experiment.about('learning_rate') == typed_config.About(
        'its paper', config_checks.STEP_SIZE, False)
    assert 'torso' in _Experiment.fixed_on_resume()
    with pytest.raises(ConfigError, match=r'^--config.learning_rate must be > 0, got 0.0 '
                                          r'\(a step size\)$'):
        config_checks.declared(_Experiment().replace(learning_rate=0.0))
    with pytest.raises(ConfigError, match="^--config.torso must be one of 'shallow', 'deep', "
                                          "got 'wide'$"):
        config_checks.declared(_Experiment().replace(torso='wide'))


def test_two_sections_declaring_one_field_are_refused():
    with pytest.raises(TypeError, match="_Section and _Section both declare 'learning_rate'"):
        @typed_config.config
        class _Twice(typed_config.Config):   # pylint: disable=unused-variable
            first: _Section = member(_Section)
            second: _Section = member(_Section)


def test_a_member_named_as_a_field_is_refused():
    """Fields are read and replaced by name across the sections: a member may not hide one."""
    with pytest.raises(TypeError, match="_Shadow.torso: a member named as the field of "
                                        "_Section"):
        @typed_config.config
        class _Shadow(typed_config.Config):   # pylint: disable=unused-variable
            section: _Section = member(_Section)
            torso: _Runtime = member(_Runtime)


def test_a_field_is_replaced_in_the_section_holding_it():
    config = _Experiment().replace(learning_rate=1.0, seed=3)
    assert (config.section.learning_rate, config.runtime.seed) == (1.0, 3)
    assert type(config.section) is _Stated and config['learning_rate'] == 1.0


@pytest.mark.parametrize('name', experiments.NAMES)
def test_every_field_of_every_experiment_says_where_its_value_comes_from(name):
    config_class = experiments.get(name).paper_config
    for field in config_class.field_names():
        assert config_class.about(field).cite.strip(), (name, field)


# Each agent's config module and its paper, as citations name it.
_PAPERS = {'agents.impala.config': 'IMPALA', 'agents.laser.config': 'LASER',
           'agents.apex.config': 'Ape-X', 'agents.reactor.config': 'Reactor'}
# The sections any paper's experiment may take.
_SHARED = (environment_config, population, runtime_config)
# A citation of a part of a paper.
_A_PART = re.compile(r'\b(?:sec|app|fig|figs|eq)\.|\b(?:table|appendix|figure|remark)\b', re.I)


def _declared_by(config_class, field):
    """The class of the agents' or the shared config modules that declares `field` as
    `config_class` has it (the metadata its section's class holds)."""
    about = config_class.about(field)
    modules = [importlib.import_module(name) for name in _PAPERS] + list(_SHARED)
    return next(found for module in modules for found in vars(module).values()
                if isinstance(found, type) and issubclass(found, typed_config.Config)
                and field in vars(found).get('__annotations__', {})
                and field in found.field_names() and found.about(field) is about)


@pytest.mark.parametrize('name', experiments.NAMES)
def test_every_inherited_field_names_the_paper_it_cites(name):
    """A field an experiment takes from another paper's section names that paper (LASER's
    V-trace truncations cite IMPALA sec. 5.2.2, not a LASER sec. 5.2.2); one from a section
    every paper may take names the paper of the part it cites."""
    config_class = experiments.get(name).paper_config
    own = _PAPERS[config_class.__module__]
    for field in config_class.field_names():
        cite = config_class.about(field).cite
        paper = _PAPERS.get(_declared_by(config_class, field).__module__)
        if paper is None:
            assert not _A_PART.search(cite) or re.search(
                '|'.join([*_PAPERS.values(), 'DQN']), cite), (name, field, cite)
        elif paper != own:
            assert paper in cite, (name, field, cite)


def test_a_saved_field_the_experiment_does_not_have_is_one_line(tmp_path):
    experiment = experiments.get('impala_atari')
    saved = {**experiment.paper_config().to_dict(), 'bogus': 1}
    with open(os.path.join(tmp_path, 'config.json'), 'w') as f:
        json.dump(saved, f)
    with pytest.raises(ConfigError, match=r'config.json: "bogus" is not a field of impala_atari: '
                                          r'delete it'):
        configs.load(str(tmp_path))


def test_runs_saved_before_the_typed_config_load_field_for_field(tmp_path):
    """Every results/<row>/config.json, written by the code before the typed config (an
    ml_collections ConfigDict's to_dict), loads as its experiment's typed config holding every
    saved field's value: the runs resume unchanged."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = sorted(glob.glob(os.path.join(root, 'results', '*', 'config.json')))
    assert paths
    for path in paths:
        with open(path) as f:
            saved = json.load(f)
        run_dir = tmp_path / os.path.basename(os.path.dirname(path))
        run_dir.mkdir()
        shutil.copy(path, run_dir / 'config.json')
        config = configs.load(str(run_dir)).config
        assert {field: config[field] for field in saved} == saved, path


# Values breaking each relation between fields, and the start of the line that refuses them.
_BROKEN_RELATIONS = {
    ('v_min', 'v_max'): ({'v_min': 5.0, 'v_max': 1.0}, '--config.v_min must be below'),
    ('batch_size', 'replay_capacity'): ({'batch_size': 64, 'replay_capacity': 32,
                                         'min_replay_size': 8}, '--config.batch_size=64 is more'),
    ('min_replay_size', 'replay_capacity'): ({'min_replay_size': 6000, 'replay_capacity': 5000},
                                             '--config.min_replay_size=6000 exceeds'),
    ('sequence_period', 'sequence_length'): ({'sequence_period': 50, 'sequence_length': 10},
                                             '--config.sequence_period must be <='),
    ('replay_episode_frames', 'unroll_length', 'action_repeat'): (
        {'replay_episode_frames': 10}, '--config.replay_episode_frames=10 is shorter'),
    ('torso', 'channel_multiplier'): ({'torso': 'shallow', 'channel_multiplier': 2},
                                      '--config.channel_multiplier widens the deep torso only'),
    ('replay_proportion', 'batch_size'): ({'replay_proportion': 0.01, 'batch_size': 8},
                                          '--config.replay_proportion=0.01 of'),
    ('max_pool_frames', 'action_repeat'): ({'max_pool_frames': 5, 'action_repeat': 4},
                                           '--config.max_pool_frames must be in [1,'),
}


@pytest.mark.parametrize('name', experiments.NAMES)
def test_every_experiment_declares_the_relations_among_its_fields(name):
    """Each relation is declared by the section or experiment that has its fields: every
    experiment with the fields refuses values that break it, whichever sections compose it."""
    experiment = experiments.get(name)
    paper = experiment.paper_config()
    checked = 0
    for fields, (values, line) in _BROKEN_RELATIONS.items():
        if all(field in paper for field in fields):
            broken = paper.replace(**{k: v for k, v in values.items() if k in paper})
            with pytest.raises(ConfigError, match=re.escape(line)):
                config_checks.declared(broken)
            checked += 1
    assert checked


def test_every_numeric_field_of_every_experiment_declares_its_range():
    """A numeric field is checked by its own rule, where it is declared (config_checks.Rule):
    none is left to a rule applied from outside, so a field added later declares one too."""
    undeclared = {}
    with experiment_configs.fake_deepmind_lab():
        for name in experiments.REGISTRY:
            paper = experiments.get(name).paper_config()
            for field, value in paper.items():
                if config_checks.is_number(value) and not config_checks.rule(paper, field):
                    undeclared.setdefault(field, []).append(name)
    assert undeclared == {}
