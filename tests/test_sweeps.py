"""Sweeps (agents/core/sweeps.py): named and inline grids, members' configs, one-line errors."""
import pytest

from agents.core import runtime_config
from agents.core import sweeps
from agents.core import typed_config
from agents.core.config_checks import ConfigError
from agents.laser import config as laser_config
from launch import experiments
from launch import program

SWEEPS = sweeps.Sweeps(named={'pair': {'learning_rate': (1.0, 2.0)}},
                       sweepable=('learning_rate', 'entropy_cost', 'seed'))


@typed_config.config
class _SweptRuntime(runtime_config.Runtime):
    """The runtime fields sweeps read (agents/core/runtime_config.py)."""
    experiment: str = typed_config.setting('swept', 'a test')
    eval_protocol: str = typed_config.setting('atari_noop', 'a test')


@typed_config.config
class _Knobs(typed_config.Config):
    """Fields to vary, in a section of their own as an experiment's are."""
    learning_rate: float = typed_config.setting(0.5, 'a test')
    entropy_cost: float = typed_config.setting(0.01, 'a test')


@typed_config.config
class _Swept(typed_config.Config):
    game: str = typed_config.setting('pong', 'a test')
    runtime: runtime_config.Runtime = typed_config.member(_SweptRuntime)
    knobs: _Knobs = typed_config.member(_Knobs)


def _config(sweep):
    return _Swept().replace(sweep=sweep)


def test_members_are_the_grid_product_first_field_slowest():
    config = _config('learning_rate=1,2;entropy_cost=0.1,0.2,0.3')
    members = SWEEPS.members(config)
    assert len(members) == 6
    assert members[0] == {'learning_rate': 1.0, 'entropy_cost': 0.1}
    assert members[1] == {'learning_rate': 1.0, 'entropy_cost': 0.2}
    assert members[5] == {'learning_rate': 2.0, 'entropy_cost': 0.3}
    member = SWEEPS.member_config(config, 4)
    assert (member.learning_rate, member.entropy_cost) == (2.0, 0.2)
    assert config.learning_rate == 0.5    # the run's config is left as it was


def test_integer_fields_stay_integers_and_no_sweep_is_one_member():
    assert SWEEPS.members(_config('seed=1,2'))[1] == {'seed': 2}
    assert isinstance(SWEEPS.members(_config('seed=1,2'))[1]['seed'], int)
    assert SWEEPS.members(_config('')) == [{}]
    assert SWEEPS.member_config(_config(''), 0).learning_rate == 0.5


def test_named_grids_of_the_laser_paper():
    """LASER sec. 5.1: 9 agents, {3e-4, 6e-4, 1.2e-3} x {5e-3, 1e-2, 2e-2}."""
    config = laser_config.LaserAtari().replace(sweep='paper')
    members = laser_config.SWEEPS.members(config)
    assert len(members) == 9
    assert {m['learning_rate'] for m in members} == {3e-4, 6e-4, 1.2e-3}
    assert {m['entropy_cost'] for m in members} == {5e-3, 1e-2, 2e-2}


@pytest.mark.parametrize('sweep, message', [
    ('nope', "unknown sweep 'nope': name one of pair"),
    ('learning_rte=1,2', "names 'learning_rte', which is not a field a sweep can vary (did you "
                         "mean: learning_rate?"),
    ('game=1,2', "names 'game', which is not a field a sweep can vary"),
    ('learning_rate=fast', "sweep value 'fast' for 'learning_rate' is not a number"),
    ('learning_rate=nan', "must be a finite number"),
    ('learning_rate=', "gives no values for 'learning_rate'"),
])
def test_bad_sweeps_are_one_line_errors(sweep, message):
    with pytest.raises(ConfigError, match=message.replace('(', r'\(').replace('?', r'\?')):
        SWEEPS.members(_config(sweep))


def test_a_learner_outside_the_sweep_is_refused():
    with pytest.raises(ConfigError, match='--learner_id=2 is out of range: sweep'):
        SWEEPS.member_config(_config('pair'), 2)


def test_learner_names_carry_the_members_values():
    config = _config('learning_rate=1e-4,2e-4').replace(num_learners=2)
    assert SWEEPS.learner_name(config, 1) == 'learner_1 learning_rate=0.0002'
    config = config.replace(sweep='')
    assert SWEEPS.learner_name(config, 1) == 'learner_1'
    config = config.replace(num_learners=1)
    assert SWEEPS.learner_name(config, 0) == 'learner'


@pytest.mark.parametrize('name', experiments.NAMES)
def test_sweep_help_comes_from_the_experiments_own_sweeps(name):
    """--sweep's help names the program's grids and the fields a sweep can vary, or says that
    it runs none (issue 39: from the registry, not written by hand)."""
    sweeps = experiments.get(name).sweeps
    text = program.sweep_help(sweeps)
    for word in [*sweeps.named, *sweeps.sweepable]:
        assert word in text
    assert ('runs no sweeps' in text) == (not sweeps.sweepable)
