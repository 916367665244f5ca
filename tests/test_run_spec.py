"""The run spec (launch/configs.py): resolved once by the launching process, written once, read
by the roles a launcher starts; a run directory written before the spec existed resumes."""
import json
import os
import subprocess
import sys

import pytest

from agents.core.config_checks import ConfigError
from launch import configs
from launch import experiments
from launch_processes import ENV
from launch_processes import ROOT


def _old_run(run_dir, experiment, preset, **fields):
    """A run directory as the code before the run spec left it: RUN_DIR/config.json, the
    config dict as JSON with sorted keys."""
    spec = experiments.get(experiment)
    config = spec.presets[preset](spec.paper_config()).replace(**fields)
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, 'config.json')
    with open(path, 'w') as f:
        json.dump(config.to_dict(), f, indent=2, sort_keys=True)
    return path


@pytest.mark.parametrize('experiment, fields', [
    ('impala_atari', {'game': 'breakout'}),
    ('apex_dqn_atari', {}),
    ('laser_atari', {'sweep': 'quick', 'num_learners': 3}),
])
def test_a_run_saved_by_the_old_code_resumes_unchanged(tmp_path, experiment, fields):
    run_dir = str(tmp_path / 'run')
    path = _old_run(run_dir, experiment, 'tiny', **fields)
    before = open(path).read()
    spec = experiments.get(experiment)
    # As a role started by a launcher resolves it: no flags, the saved spec.
    resumed = configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir,
                              preset='quick')
    assert json.loads(before) == json.loads(json.dumps(resumed.config.to_dict()))
    resumed.write()
    assert open(path).read() == before        # nothing to write: the file holds the spec
    changed = configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir,
                              fields={'total_frames': 8_000})
    assert changed.config.total_frames == 8_000
    changed.write()
    assert configs.load(run_dir).config.total_frames == 8_000


def test_an_old_run_is_refused_a_new_network_in_one_line(tmp_path):
    run_dir = str(tmp_path / 'run')
    _old_run(run_dir, 'impala_atari', 'tiny')
    spec = experiments.get('impala_atari')
    with pytest.raises(ConfigError, match="^--config.torso=deep cannot change when resuming: "
                       ) as error:
        configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir,
                        fields={'torso': 'deep'})
    assert '\n' not in str(error.value)


@pytest.mark.parametrize('experiment, field, value', [
    ('apex_dqn_atari', 'samples_per_insert', 32.0),
    ('apex_dpg_control', 'priority_exponent', 0.5),
    ('reactor_atari', 'acting_steps_per_learning_step', 4.0),
    ('laser_atari', 'replay_capacity_observations', 4_000),
])
def test_a_run_with_a_checkpointed_replay_is_refused_a_new_table(tmp_path, experiment, field,
                                                                  value):
    """Reverb restores a checkpointed table whole (its size, sampler and rate limiter), so a
    resumed run would silently keep the old one: a field that makes the table is refused."""
    run_dir = str(tmp_path / 'run')
    _old_run(run_dir, experiment, 'tiny')
    spec = experiments.get(experiment)
    with pytest.raises(ConfigError, match=f"^--config.{field}={value} cannot change when "):
        configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir, fields={field: value})


def test_an_apex_run_saved_before_samples_per_insert_resumes_unthrottled(tmp_path):
    run_dir = str(tmp_path / 'run')
    path = _old_run(run_dir, 'apex_dqn_atari', 'tiny')
    with open(path) as f:
        saved = json.load(f)
    del saved['samples_per_insert']
    with open(path, 'w') as f:
        json.dump(saved, f)
    spec = experiments.get('apex_dqn_atari')
    resumed = configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir)
    assert resumed.config.samples_per_insert == 0.0


def test_an_old_run_directory_checks_through_its_program(tmp_path):
    run_dir = str(tmp_path / 'run')
    _old_run(run_dir, 'reactor_atari', 'tiny', game='breakout')
    done = subprocess.run(
        [sys.executable, '-m', 'launch.reactor_atari', f'--run_dir={run_dir}'], cwd=ROOT,
        env=dict(ENV, DISTRL_CHECK_ONLY='1'), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert 'the input is good' in done.stdout



def test_a_run_of_an_agent_without_a_launch_program_is_refused_without_naming_one(tmp_path):
    """The refusal names launch.<experiment> only where launch/ has that program: not for
    the guide's agent, registered by its own program (tests/guide_agent/program.py)."""
    from tests.guide_agent import program  # noqa: F401  (registers the experiment)
    run_dir = str(tmp_path / 'run')
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, 'config.json'), 'w') as f:
        json.dump({'experiment': 'guide_actor_critic_atari'}, f)
    spec = experiments.get('impala_atari')
    with pytest.raises(ConfigError) as error:
        configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir)
    assert str(error.value) == (f'{run_dir} holds a run of guide_actor_critic_atari, not of '
                                'impala_atari: choose another --run_dir')


@pytest.mark.parametrize('experiment, preset_horizon', [('impala_atari', 200_000_000),
                                                        ('laser_atari', 5_000_000)])
def test_a_run_saved_before_anneal_frames_resumes_with_its_schedule(tmp_path, experiment,
                                                                     preset_horizon):
    """Before `anneal_frames`, the learning rate annealed over `total_frames`: a run saved then
    (no such field) resumes annealing over its own budget; a new run of the same preset anneals
    over the preset's horizon, not its budget (IMPALA's: the paper's 200M frames; LASER's: 5M,
    its docstring says why)."""
    spec = experiments.get(experiment)
    run_dir = str(tmp_path / 'old')
    path = _old_run(run_dir, experiment, 'quick', total_frames=10_000_000)
    saved = json.load(open(path))
    del saved['anneal_frames']
    json.dump(saved, open(path, 'w'))
    resumed = configs.resolve(spec, paper=spec.paper_config(), run_dir=run_dir)
    assert resumed.config.anneal_frames == 10_000_000
    assert configs.load(run_dir).config.anneal_frames == 10_000_000
    new = configs.resolve(spec, paper=spec.paper_config(), run_dir=str(tmp_path / 'new'),
                          preset='quick', fields={'total_frames': 4_000_000})
    assert (new.config.anneal_frames, new.config.total_frames) == (preset_horizon, 4_000_000)


def test_the_end_of_training_evaluation_takes_the_launchers_specs(tmp_path, monkeypatch, capsys):
    """From the launcher to the report, an evaluation looks no experiment up and loads no
    config: it scores the learners' specs the launcher holds (here a LASER sweep scored on its
    training games, app. C), and the report reads each config.json through runs.read_config."""
    from launch import evaluate  # pylint: disable=import-outside-toplevel
    from launch import runtime  # pylint: disable=import-outside-toplevel
    from paper_tables import runs  # pylint: disable=import-outside-toplevel
    run_dir = str(tmp_path / 'sweep')
    experiment = experiments.get('laser_atari')
    spec = configs.resolve(experiment, paper=experiment.paper_config(), run_dir=run_dir,
                           preset='tiny', target='pong', sweep='quick')
    spec.write()
    learners = [runtime.learner_spec(spec, i) for i in range(spec.config.num_learners)]
    assert [learner.run_dir for learner in learners] == [
        os.path.join(run_dir, f'learner_{i}') for i in range(3)]
    for i, learner in enumerate(learners):
        learner.write()   # as each learner does
        assert configs.load(learner.run_dir).config == learner.config
        os.makedirs(os.path.join(learner.run_dir, 'logs'))
        with open(os.path.join(learner.run_dir, 'logs', 'episodes.csv'), 'w') as f:
            f.write('frames,actor,env,episode_return,episode_frames\n'
                    + ''.join(f'{100 * k},0,0,{k - 21 + 5 * i},50\n' for k in range(1, 4)))
    calls = []
    reads = []

    def refused(name):
        return lambda *args, **kwargs: calls.append(name)

    read_config = runs.read_config
    monkeypatch.setattr(experiments, 'get', refused('experiments.get'))
    monkeypatch.setattr(configs, 'load', refused('configs.load'))
    monkeypatch.setattr(runs, 'read_config', lambda d: reads.append(d) or read_config(d))
    evaluate.evaluate_and_report(run_dir, learners)
    assert not calls
    assert os.path.exists(os.path.join(run_dir, 'learner_2', 'report.md'))   # the best member
    out = capsys.readouterr().out
    assert '| learner_2 (best) |' in out and 'no comparison' not in out
    assert len(reads) == 4   # the members table's three, the best member's report
