"""bfloat16 against float32, per agent, alternated in one run (issue 37).

  python -m benchmarks.precision [--agents=impala_shallow,impala_deep,laser,apex_dqn,apex_dpg,
      reactor] [--seconds=10] [--rounds=3] [--noend_to_end] [--frames=N] [--jit]

For each agent, with its quick preset (Atari agents on --game, Ape-X DPG on --task), the
networks in float32 and in bfloat16 (`--config.precision`, agents/networks/layers.py):
(learner) its compiled update, the builder's learning state, on one real batch of its own
  dataset (benchmarks/filled_batch.py), on all cores: updates/s;
(acting) the actors' batched policy call, the builder's policy on `envs_per_actor` random
  observations, on one TensorFlow thread as actors run: frames/s;
(end to end) a local run of `--frames` frames (default: the agent's own) in each precision,
  float32 first: the frames/s its learner counted between 20% and 100% of them.
In (learner) and (acting) both precisions are built side by side and timed in turn, `--rounds`
windows of `--seconds` each, so that a load on the machine falls on both alike; each part runs
in its own process, so that its thread settings hold. A header names the processor and its
bfloat16 units, then one line per agent: `agent=`, `learner_ratio=`, `acting_ratio=`,
`end_to_end_ratio=` (bfloat16 / float32) and the rates. `--jit`: the update with XLA in both
precisions (XLA on the CPU was 2.8-7x slower in float32: benchmarks/README.md). A flag that
cannot work is refused in one line before anything runs (`flag_problem`).
"""
import dataclasses
import difflib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from absl import app
from absl import flags

from agents.core.config_checks import ConfigError
from agents.ops import choices
from benchmarks import runs
from launch import processor


@dataclasses.dataclass(frozen=True)
class Agent:
    """A row: its experiment, the quick preset's changes it makes, its end-to-end frames."""
    experiment: str
    fields: dict
    frames: int


AGENTS = {
    'impala_shallow': Agent('impala_atari', {'torso': 'shallow'}, 100_000),
    'impala_deep': Agent('impala_atari', {'torso': 'deep'}, 100_000),
    'laser': Agent('laser_atari', {}, 100_000),
    'apex_dqn': Agent('apex_dqn_atari', {}, 100_000),
    'apex_dpg': Agent('apex_dpg_control', {}, 50_000),
    'reactor': Agent('reactor_atari', {}, 30_000),
}

_AGENTS = flags.DEFINE_list('agents', list(AGENTS), f'Rows, of: {", ".join(AGENTS)}.')
_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game of the Atari agents.')
_TASK = flags.DEFINE_string('task', 'walker_walk', "Ape-X DPG's control task.")
_SECONDS = flags.DEFINE_float('seconds', 10.0, 'Seconds of each timed window.')
_ROUNDS = flags.DEFINE_integer('rounds', 3, 'Windows of each precision, in turn.')
_END_TO_END = flags.DEFINE_bool('end_to_end', True, 'Run (end to end).')
_FRAMES = flags.DEFINE_integer('frames', None, "(end to end) frames of each run, enough for "
                               "its learner's log rows to span them; default: the agent's "
                               "own (" + ', '.join(
                                   f'{name} {agent.frames:,}' for name, agent in AGENTS.items())
                               + ').')
_JIT = flags.DEFINE_bool('jit', False, 'The learner update with XLA, in both precisions.')
_PART = flags.DEFINE_enum('part', None, ['learner', 'acting'], 'Internal: run one part.')


def _target(experiment) -> dict:
    return {experiment.target_field: _TASK.value if experiment.target_field == 'task'
            else _GAME.value}


def _config(name: str, precision: str):
    """The agent's quick preset, on its target, in `precision`."""
    from launch import experiments  # pylint: disable=import-outside-toplevel
    experiment = experiments.get(AGENTS[name].experiment)
    c = experiment.presets['quick'](experiment.paper_config())
    c = c.replace(**_target(experiment), **AGENTS[name].fields, precision=precision,
                  jit_compile=str(_JIT.value).lower())
    return experiment, c


def _alternated(calls: dict) -> dict:
    """{precision: calls/s} of each of `calls` ({precision: fn}), timed in turn."""
    for fn in calls.values():
        for _ in range(3):
            fn()
    counts, seconds = dict.fromkeys(calls, 0), dict.fromkeys(calls, 0.0)
    for _ in range(_ROUNDS.value):
        for precision, fn in calls.items():
            start = time.perf_counter()
            while time.perf_counter() - start < _SECONDS.value:
                fn()
                counts[precision] += 1
            seconds[precision] += time.perf_counter() - start
    return {p: counts[p] / seconds[p] for p in calls}


def part_learner(name: str) -> dict:
    """(learner): updates/s of each precision's learning state on one batch."""
    from benchmarks import filled_batch  # pylint: disable=import-outside-toplevel
    states, batch = {}, None
    for precision in choices.PRECISIONS:
        experiment, config = _config(name, precision)
        builder = experiment.builder(config)
        states[precision] = builder.learning_state()
        if batch is None:   # the server and the waiting actor are kept while timing
            batch, _ = filled_batch.draw(builder, states[precision].network)
    return {'updates_per_second': _alternated(
        {p: lambda s=s: s.update(batch)['loss'].numpy() for p, s in states.items()})}


def part_acting(name: str) -> dict:
    """(acting): frames/s of each precision's policy on one batch of observations."""
    from agents.core import steps  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng(0)
    calls, frames_per_call = {}, 0
    for precision in choices.PRECISIONS:
        experiment, config = _config(name, precision)
        builder = experiment.builder(config)
        policy = builder.policy(builder.network(), actor_id=0, seed=0)
        spec, k = builder.step_spec(), config.envs_per_actor
        inputs = steps.PolicyInputs(
            _random(rng, spec['observation'], k), np.zeros((k, *spec['action'].shape),
                                                           spec['action'].dtype.as_numpy_dtype),
            np.zeros(k, np.float32), np.zeros(k, bool))
        state = policy.initial_state(k)
        calls[precision] = lambda p=policy, i=inputs, s=state: p.select_actions(i, s)
        frames_per_call = k * config.action_repeat
    return {'frames_per_second': {p: rate * frames_per_call
                                  for p, rate in _alternated(calls).items()}}


def _random(rng, spec, k: int) -> np.ndarray:
    """`k` observations of `spec`: random frames, or random features."""
    if spec.dtype.is_integer:
        return rng.integers(0, 256, (k, *spec.shape)).astype(spec.dtype.as_numpy_dtype)
    return rng.normal(size=(k, *spec.shape)).astype(spec.dtype.as_numpy_dtype)


def _run_part(part: str, name: str) -> dict:
    """A part in its own process, with the thread settings of the role it stands for."""
    from launch import runtime  # pylint: disable=import-outside-toplevel  (TensorFlow)
    argv = [sys.executable, '-m', 'benchmarks.precision', f'--part={part}',
            f'--agents={name}', f'--game={_GAME.value}', f'--task={_TASK.value}',
            f'--seconds={_SECONDS.value}', f'--rounds={_ROUNDS.value}',
            f'--{"" if _JIT.value else "no"}jit']
    env = dict(runtime.role_environment(1 if part == 'acting' else None),
               TF_CPP_MIN_LOG_LEVEL='3')
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def _frames(name: str) -> int:
    """(end to end): the frames of each run of agent `name`."""
    return AGENTS[name].frames if _FRAMES.value is None else _FRAMES.value


def flag_problem() -> str | None:
    """What makes the flags unusable, in one line; None if nothing. Checked before any part
    or run starts and before TensorFlow is imported."""
    unknown = [name for name in _AGENTS.value if name not in AGENTS]
    if unknown or not _AGENTS.value:
        near = difflib.get_close_matches(unknown[0], AGENTS, n=1) if unknown else []
        return (f'--agents names {f"{unknown[0]!r}, not an agent" if unknown else "no agent"}: '
                f'{f"did you mean {near[0]}? " if near else ""}choose among '
                f'{", ".join(AGENTS)}')
    if _ROUNDS.value < 1:
        return f'--rounds must be >= 1 (windows of each precision), got {_ROUNDS.value}'
    if _FRAMES.value is not None and not _END_TO_END.value:
        return '--frames sets the end-to-end runs, which --noend_to_end leaves out: drop one'
    problem = runs.seconds_problem(_SECONDS)
    if problem:
        return problem
    for name in _AGENTS.value:
        experiment, config = _config(name, 'float32')
        try:
            experiment.check(config)    # the game or task, as the run's program checks it
        except ConfigError as e:
            return str(e)
        if _END_TO_END.value:
            problem = runs.budget_problem(_frames(name), experiment, config, name)
            if problem:
                return problem
    return None


def end_to_end(name: str) -> dict:
    """(end to end): {precision: frames/s} of a local run in each, float32 first."""
    experiment, _ = _config(name, 'float32')
    frames = _frames(name)
    rates = {}
    with tempfile.TemporaryDirectory(prefix='precision_') as root:
        for precision in choices.PRECISIONS:
            run_dir = os.path.join(root, precision)
            fields = {**AGENTS[name].fields, 'precision': precision, 'total_frames': frames,
                      'eval_episodes': 1, 'log_interval_s': 2}
            target = _target(experiment)
            runs.run_together([[sys.executable, '-m', f'launch.{AGENTS[name].experiment}',
                                *[f'--{k}={v}' for k, v in target.items()], '--preset=quick',
                                f'--run_dir={run_dir}',
                                *[f'--config.{k}={v}' for k, v in fields.items()]]])
            rates[precision] = runs.frames_per_second(
                os.path.join(run_dir, 'logs', 'learner.csv'))
    return rates


def _ratio(rates: dict | None) -> str:
    """bfloat16 / float32; nan where float32's rate is 0 (a run too short for its log)."""
    if not rates:
        return 'not_run'
    return f'{rates["bfloat16"] / rates["float32"] if rates["float32"] else float("nan"):.2f}'


def _rates(rates: dict | None) -> str:
    return '/'.join(f'{rates[p]:.4g}' for p in choices.PRECISIONS) if rates else 'not_run'


def main(argv):
    del argv
    problem = flag_problem()
    if problem:
        print(f'error: {problem}', file=sys.stderr)
        sys.exit(2)
    if _PART.value:
        part = part_learner if _PART.value == 'learner' else part_acting
        print(json.dumps(part(_AGENTS.value[0])), flush=True)
        return
    print(f'{processor.describe()}; {os.cpu_count()} cores; XLA {"on" if _JIT.value else "off"}'
          f'; {_ROUNDS.value} x {_SECONDS.value:g} s per precision and part; rates float32/'
          f'bfloat16', flush=True)
    for name in _AGENTS.value:
        learner = _run_part('learner', name)['updates_per_second']
        acting = _run_part('acting', name)['frames_per_second']
        total = end_to_end(name) if _END_TO_END.value else None
        print(f'agent={name} learner_ratio={_ratio(learner)} acting_ratio={_ratio(acting)} '
              f'end_to_end_ratio={_ratio(total)} learner_updates_per_s={_rates(learner)} '
              f'acting_frames_per_s={_rates(acting)} end_to_end_frames_per_s={_rates(total)}',
              flush=True)


if __name__ == '__main__':
    app.run(main)
