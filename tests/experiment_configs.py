"""Every experiment's config, field by field: each preset of its paper config, then each
named sweep's members (their values and the checks' resolution), the fields a resumed run
cannot change (of those the config has), and the range each field is checked against.
`tests/experiment_configs.json` holds the dump as the configs stood before the typed-config
work (issue 39): that work may change how a config is written, never what it holds.

    python -m tests.experiment_configs   # rewrites tests/experiment_configs.json
"""
import contextlib
import json
import os
import sys

from agents.core import config_checks
from launch import experiments

GOLDEN = os.path.join(os.path.dirname(__file__), 'experiment_configs.json')
FAKES = os.path.join(os.path.dirname(__file__), 'fakes')


@contextlib.contextmanager
def fake_deepmind_lab():
    """The DMLab checks import `deepmind_lab`: tests/fakes' for the dump, then forgotten, so
    that tests which expect it missing still find it so."""
    sys.path.insert(0, FAKES)
    try:
        yield
    finally:
        sys.path.remove(FAKES)
        sys.modules.pop('deepmind_lab', None)


def dump() -> dict:
    """{experiment: {preset: fields, 'sweep <name> (<preset>)': [member fields, ...],
    'fixed on resume': [field, ...], 'ranges': {field: 'range (meaning)'}}}."""
    with fake_deepmind_lab():
        return _dump()


def _dump() -> dict:
    result = {}
    for name in experiments.NAMES:
        experiment = experiments.get(name)
        entries = {'fixed on resume': sorted(experiment.fixed_on_resume),
                   'ranges': _ranges(experiment.paper_config())}
        for preset, apply in experiment.presets.items():
            config = experiment.check(apply(experiment.paper_config()))
            entries[preset] = config.to_dict()
            for sweep in experiment.sweeps.named:
                config = config.replace(sweep=sweep)
                entries[f'sweep {sweep} ({preset})'] = [
                    experiment.sweeps.member_config(config, i).to_dict()
                    for i in range(len(experiment.sweeps.members(config)))]
        result[name] = entries
    return json.loads(json.dumps(result, sort_keys=True))   # tuples as lists, as saved


def _ranges(config) -> dict:
    """{field: 'range (meaning)'} of every field `config_checks.declared` holds to a range."""
    return {field: str(found) for field in config
            if isinstance(found := config_checks.rule(config, field), config_checks.Rule)}


if __name__ == '__main__':
    with open(GOLDEN, 'w') as f:
        json.dump(dump(), f, indent=1, sort_keys=True)
        f.write('\n')
