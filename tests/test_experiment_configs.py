"""No behaviour change from the configs' form (issue 39): every experiment, preset and named
sweep holds the fields it held, field by field (tests/experiment_configs.py)."""
import json

from tests import experiment_configs


def test_every_experiment_preset_and_sweep_holds_its_fields():
    with open(experiment_configs.GOLDEN) as f:
        golden = json.load(f)
    now = experiment_configs.dump()
    assert sorted(now) == sorted(golden)
    for name, entries in golden.items():
        assert sorted(now[name]) == sorted(entries), name
        for entry, fields in entries.items():
            assert now[name][entry] == fields, f'{name} {entry}'
