"""IMPALA throughput on this machine: parts alone, their compute-bound limit, and a real run.

  python -m benchmarks.impala_throughput [--game=pong] [--torso=shallow] [--frames=200000]

(a) emulator with appendix G preprocessing and a random policy, frames/s on one core;
(b) the actor's batched inference alone at the actors' batch size, frames/s on one core;
(c) the learner update alone, frames/s per core (all cores busy);
limit = cores / (1/a + 1/b + 1/c), the frames/s this machine could reach if the transport,
Python and idle cores cost nothing; (d) end-to-end frames/s of a local run (the learner's
consumption rate once warm). Prints all five and `ratio=<d / limit>`.
Each part runs in its own process so that its thread settings hold.

  python -m benchmarks.impala_throughput --core=both

instead prints (d) for the feed-forward net and figure 3's LSTM net, run back to back.

  python -m benchmarks.impala_throughput --account [--warmup_s=30 --window_s=60]

instead of (d), accounts for the run's CPU: its CPU seconds per 1,000 frames by process
(actors, learner, replay server, launcher) and by part inside the actors and the learner
(benchmarks/run_account.py), the idle cores, then (a), (b), (c) beside the same parts measured
in the run, and the 'accounted limit': the limit with the run's transport added (the actors'
adders and parameter pulls, the learner's dataset and parameter push, the replay server), so
that d / accounted limit is what the run loses beyond the transport's CPU. It also times
(e), the actor's own loop without transport (its environments and inference stepped in turn,
the steps dropped), and prints the accounted limit with (e) in place of (a) and (b): the part
of the gap that comes from the actor's parts running slower in turn than each alone.

  python -m benchmarks.impala_throughput --account --preset=paper --envs_per_actor=8
  python -m benchmarks.impala_throughput --account --num_actors=1 --envs_per_actor=16

any of these with another actor layout than the preset's: the games each actor steps per
batched call (in the run and in (b) and (e)) and the actor processes of the run, to compare
layouts back to back.

  python -m benchmarks.impala_throughput --account --agent=laser --game=breakout
  python -m benchmarks.impala_throughput --account --agent=reactor --game=breakout

the same account for LASER's single agent and Reactor (`--preset`, default quick), whose
learners bound their runs: (c) is then the agent's own update, timed alone on all cores on one
real batch of its own dataset (drawn from a server its actor filled), in frames at the agent's
pace (LASER: the online unrolls of a batch; Reactor: `acting_steps_per_learning_step` agent
steps per update), and the run is set against that learner-bound limit as well as against the
limit above.

  python -m benchmarks.impala_throughput --components

instead prints the learner update's frames/s with and without XLA (jit_compile) for both
networks at the paper's batch (32 x 20) and the quick preset's, and the actor's inference
steps/s with and without XLA at the batch the actors use.
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from absl import app
from absl import flags

from benchmarks import run_account
from benchmarks import runs

_AGENT = flags.DEFINE_enum('agent', 'impala', ['impala', 'laser', 'reactor'],
                           'Whose local run: IMPALA, or with --account the learner-bound LASER '
                           '(single agent) or Reactor.')
_GAME = flags.DEFINE_string('game', 'pong', 'Atari game.')
_TORSO = flags.DEFINE_string('torso', 'shallow', 'shallow or deep.')
_CORE = flags.DEFINE_string('core', 'feed_forward', "feed_forward, lstm, or 'both': the "
                            "end-to-end run of each, back to back, and their ratio.")
_PRESET = flags.DEFINE_string('preset', 'quick', 'Config preset for the end-to-end run.')
_ENVS_PER_ACTOR = flags.DEFINE_integer(
    'envs_per_actor', None, "Games each actor steps per batched inference call, in the run and "
    "in (b) and (e); default: the preset's.")
_NUM_ACTORS = flags.DEFINE_integer(
    'num_actors', None, "Actor processes of the run; default: the preset's.")
_FRAMES = flags.DEFINE_integer('frames', 300_000, 'Frames of the end-to-end run.')
_SECONDS = flags.DEFINE_float('seconds', 20.0, 'Seconds each part is timed for.')
_COMPONENTS = flags.DEFINE_bool('components', False, 'XLA on/off figures per component.')
_ACCOUNT = flags.DEFINE_bool('account', False, 'CPU seconds per 1,000 frames of a local run '
                             'by process and part, and the accounted limit.')
_WARMUP_S = flags.DEFINE_float('warmup_s', 30.0, '--account: seconds of the run (from its '
                               'first update) before the account starts.')
_WINDOW_S = flags.DEFINE_float('window_s', 60.0, '--account: seconds the account covers.')
_ACCOUNT_OUT = flags.DEFINE_string('account_out', None, '--account: also write the account '
                                   'and the figures as JSON there.')
_PARTS = flags.DEFINE_string('parts', None, 'a,b,c[,e] in frames/s (e.g. a run\'s figures in '
                             'benchmarks/README.md) instead of timing them.')
_PART = flags.DEFINE_string('part', None, 'Internal: run one part and print JSON.')
_JIT = flags.DEFINE_bool('jit', False, 'Internal: XLA for the part.')
_BATCH = flags.DEFINE_integer('batch', None, 'Internal: batch size for the part.')


def _experiment():
    from launch import experiments  # pylint: disable=import-outside-toplevel
    return experiments.get(f'{_AGENT.value}_atari')


def _config(**overrides):
    """The run's config: the agent's `--preset`, on `--game`, with `--envs_per_actor` where
    given; IMPALA's with `--torso` and `--core`, the others' as their preset has them."""
    spec = _experiment()
    c = spec.presets[_PRESET.value](spec.paper_config()).replace(game=_GAME.value)
    if _AGENT.value == 'impala':
        c = c.replace(torso=_TORSO.value, core=_CORE.value)
    if _ENVS_PER_ACTOR.value:
        c = c.replace(envs_per_actor=_ENVS_PER_ACTOR.value)
    return c.replace(**overrides)


def frames_per_update(config) -> float:
    """Frames one learner update stands for at the agent's pace: IMPALA's whole batch, LASER's
    online unrolls, Reactor's acting steps per update."""
    if _AGENT.value == 'reactor':
        return config.acting_steps_per_learning_step * config.action_repeat
    from agents.impala import config as impala_config  # pylint: disable=import-outside-toplevel
    online = config.batch_size - (impala_config.replay_batch_size(config)
                                  if _AGENT.value == 'laser' else 0)
    return online * config.unroll_length * config.action_repeat


def _timed(fn, seconds):
    """Calls fn() repeatedly for about `seconds` after a warm-up; returns calls per second."""
    for _ in range(3):
        fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return calls / (time.perf_counter() - start)


def part_emulator(config):
    env = _experiment().builder(config).environments.environment(seed=0)
    rng = np.random.default_rng(0)
    state = {'ts': env.reset()}

    def step():
        ts = env.step(rng.integers(env.num_actions))
        state['ts'] = env.reset() if ts.last() else ts

    return {'fps': _timed(step, _SECONDS.value) * config.action_repeat}


def _one_tensorflow_thread():
    """TensorFlow on one thread, as an actor runs it (launch/runtime.role_environment)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)


def part_inference(config):
    _one_tensorflow_thread()
    from agents.core import softmax_policy  # pylint: disable=import-outside-toplevel
    from agents.core import steps  # pylint: disable=import-outside-toplevel
    b = _experiment().builder(config)
    policy = (softmax_policy.SoftmaxPolicy(b.network(), jit_compile=_JIT.value)
              if _AGENT.value == 'impala' else b.policy(b.network(), actor_id=0, seed=0))
    batch = _BATCH.value or config.envs_per_actor
    inputs = steps.PolicyInputs(
        np.random.default_rng(0).integers(0, 255, (batch, *b.environments.observation_shape),
                                          np.uint8),
        np.zeros(batch, np.int32), np.zeros(batch, np.float32), np.zeros(batch, bool))
    state = policy.initial_state(batch)
    calls = _timed(lambda: policy.select_actions(inputs, state), _SECONDS.value)
    return {'steps_per_second': calls * batch, 'fps': calls * batch * config.action_repeat}


class _Dropped:
    """An adder and an episode-stats client that drop what they are given."""

    def add(self, step):
        del step

    def insert(self, data, priorities):
        del data, priorities


class _Kept:
    """A parameter source that keeps the policy's parameters."""
    learner_step = 0

    def update(self):
        pass


def part_actor(config):
    """(e) the actor's own loop without its transport: its environments and its batched
    inference (one TensorFlow thread) stepped in turn as in a run, the steps dropped and the
    parameters kept; frames/s on one core."""
    _one_tensorflow_thread()
    from agents.core import actor as actor_lib  # pylint: disable=import-outside-toplevel
    b = _experiment().builder(config)
    envs = [b.environments.environment(seed=k) for k in range(config.envs_per_actor)]
    actor = actor_lib.Actor(
        envs=envs, policy=b.policy(b.network(), actor_id=0, seed=0),
        adders=[_Dropped() for _ in envs], parameters=_Kept(),
        action_spec=b.step_spec()['action'], update_period=b.actor_update_period(),
        client=_Dropped(), actor_id=0, frames_per_step=config.action_repeat)
    actor.run(num_steps=20)
    start = time.perf_counter()
    actor.run(num_steps=50)
    count = max(50, int(50 * _SECONDS.value / (time.perf_counter() - start)))
    start = time.perf_counter()
    actor.run(num_steps=count)
    steps_per_second = count * len(envs) / (time.perf_counter() - start)
    return {'steps_per_second': steps_per_second, 'fps': steps_per_second * config.action_repeat}


def part_learner(config):
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from agents.impala import learning  # pylint: disable=import-outside-toplevel
    from launch import experiments  # pylint: disable=import-outside-toplevel
    from agents.core import steps  # pylint: disable=import-outside-toplevel
    if _BATCH.value:
        config = config.replace(batch_size=_BATCH.value)
    b = experiments.get('impala_atari').builder(config)
    state = learning.impala_learning(b.network(), config, jit_compile=_JIT.value)
    rng = np.random.default_rng(0)
    B, T1 = config.batch_size, config.unroll_length + 1  # noqa: N806
    signature = steps.trajectory_signature(b.step_spec(), T1)
    batch = tf.nest.map_structure(
        lambda spec: tf.constant(
            rng.integers(0, 2, (B, *spec.shape)).astype(spec.dtype.as_numpy_dtype)), signature)
    batch['observation'] = tf.constant(
        rng.integers(0, 255, (B, T1, *b.environments.observation_shape), dtype=np.uint8))
    updates = _timed(lambda: state.update(batch)['loss'].numpy(), _SECONDS.value)
    frames = updates * B * config.unroll_length * config.action_repeat
    return {'updates_per_second': updates, 'fps': frames, 'fps_per_core': frames / os.cpu_count()}


def part_filled_learner(config):
    """(c) of a learner-bound agent: its update on one real batch of its own dataset, drawn
    from a loopback server that its actor filled (the actor then waits on the full queue or
    pace table, and the batch is reused), timed alone on all cores."""
    from benchmarks import filled_batch  # pylint: disable=import-outside-toplevel
    b = _experiment().builder(config)
    state = b.learning_state()
    batch, _ = filled_batch.draw(b, state.network)
    updates = _timed(lambda: state.update(batch)['loss'].numpy(), _SECONDS.value)
    frames = updates * frames_per_update(config)
    return {'updates_per_second': updates, 'fps': frames, 'fps_per_core': frames / os.cpu_count()}


def _launch_argv(run_dir, frames, config_overrides):
    """The local run's command: `frames` frames, `--config.<k>=<v>` for `config_overrides`."""
    argv = [sys.executable, '-m', f'launch.{_AGENT.value}_atari', f'--game={_GAME.value}',
            f'--preset={_PRESET.value}', f'--run_dir={run_dir}',
            f'--config.total_frames={frames}', '--config.eval_episodes=1',
            '--config.log_interval_s=5']
    if _ENVS_PER_ACTOR.value:
        argv.append(f'--config.envs_per_actor={_ENVS_PER_ACTOR.value}')
    if _NUM_ACTORS.value:
        argv.append(f'--config.num_actors={_NUM_ACTORS.value}')
    if _AGENT.value == 'impala':
        argv += [f'--config.torso={_TORSO.value}',
                 f'--config.core={config_overrides.pop("core", _CORE.value)}']
    return argv + [f'--config.{k}={v}' for k, v in config_overrides.items()]


def end_to_end(config_overrides):
    """Frames/s of a real local run: learner consumption, after the first 25% of frames."""
    run_dir = tempfile.mkdtemp(prefix='impala_bench_')
    argv = _launch_argv(run_dir, _FRAMES.value, config_overrides)
    start = time.time()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        rows = list(csv.DictReader(f))
    shutil.rmtree(run_dir, ignore_errors=True)
    rows = [r for r in rows if int(r['frames']) >= _FRAMES.value // 4]
    span = float(rows[-1]['wall_time']) - float(rows[0]['wall_time'])
    fps = (int(rows[-1]['frames']) - int(rows[0]['frames'])) / max(span, 1e-9)
    return {'fps': fps, 'wall_s': time.time() - start}


def _run_part(part, torso=None, **kwargs):
    argv = [sys.executable, '-m', 'benchmarks.impala_throughput', f'--part={part}',
            f'--agent={_AGENT.value}', f'--game={_GAME.value}',
            f'--torso={torso or _TORSO.value}', f'--core={_CORE.value}',
            f'--preset={_PRESET.value}', f'--seconds={_SECONDS.value}']
    if _ENVS_PER_ACTOR.value:
        argv.append(f'--envs_per_actor={_ENVS_PER_ACTOR.value}')
    argv += [f'--{k}={v}' for k, v in kwargs.items()]
    from launch import runtime  # pylint: disable=import-outside-toplevel  (TensorFlow)
    env = dict(runtime.role_environment(), TF_CPP_MIN_LOG_LEVEL='3')   # as the run's roles
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def components():
    """Learner and inference speed with and without XLA, for both networks."""
    config = _config()
    print(f'game={_GAME.value} cores={os.cpu_count()} (learner uses all cores, inference one)')
    for torso in ('shallow', 'deep'):
        for batch in sorted({32, config.batch_size}, reverse=True):
            fps = {jit: _run_part('learner', torso, jit=jit, batch=batch)['fps']
                   for jit in (False, True)}
            print(f'learner {torso:7s} batch {batch}x{config.unroll_length}: '
                  f'{fps[False]:8,.0f} frames/s without XLA, {fps[True]:8,.0f} with XLA '
                  f'(x{fps[True] / fps[False]:.2f})', flush=True)
        steps = {jit: _run_part('inference', torso, jit=jit)['steps_per_second']
                 for jit in (False, True)}
        print(f'inference {torso:7s} batch {config.envs_per_actor}: '
              f'{steps[False]:8,.0f} steps/s without XLA, {steps[True]:8,.0f} with XLA '
              f'(x{steps[True] / steps[False]:.2f})', flush=True)


def lstm_against_feed_forward():
    """End-to-end frames/s of the feed-forward and the LSTM net, back to back."""
    fps = {}
    for core in ('feed_forward', 'lstm'):
        fps[core] = end_to_end({'core': core})['fps']
        print(f'(d) end_to_end_fps core={core} torso={_TORSO.value} preset={_PRESET.value}: '
              f'{fps[core]:,.0f}', flush=True)
    print(f'lstm/feed_forward={fps["lstm"] / fps["feed_forward"]:.2f}')


# The parts of the account that the limit leaves out but a distributed run cannot avoid:
# moving unrolls and parameters between processes.
_TRANSPORT = {'actor': ('adder', 'parameters'), 'learner': ('dataset', 'push'),
              'replay': ('total',)}


def account_run(cores, a, b, c, e, limit, learner_limit=None):
    """The account of a local run (run_account.py), then the limit's parts beside the run's,
    the accounted limit, and the same with (e), the actor's own loop, in place of (a) and (b)
    (what stepping them in turn costs beyond each alone); with `learner_limit` (a
    learner-bound agent's frames/s with its learner alone on all cores) the run against it
    too."""
    run_dir = tempfile.mkdtemp(prefix='impala_account_')
    # A run the account stops, annealing over its whole (never reached) budget.
    result = run_account.account(_launch_argv(run_dir, 10**10, {'anneal_frames': 10**10}),
                                 _WARMUP_S.value, _WINDOW_S.value)
    shutil.rmtree(run_dir, ignore_errors=True)
    print(run_account.table(result), flush=True)
    processes = result['processes']

    def summed(role, part):
        return sum(p['total'] if part == 'total' else p['parts'].get(part, 0.0)
                   for name, p in processes.items() if name.startswith(role))

    transport = sum(summed(role, part) for role, parts in _TRANSPORT.items() for part in parts)
    accounted = cores / (1 / a + 1 / b + 1 / c + transport / 1000)
    interleaved = cores / (1 / e + 1 / c + transport / 1000)
    d = result['fps']
    print('the limit\'s parts per 1,000 frames, alone against in the run (CPU seconds):')
    for label, alone, in_run in (('(a) emulator', 1000 / a, summed('actor', 'emulator')),
                                 ('(b) inference', 1000 / b, summed('actor', 'inference')),
                                 ('(c) learner update', 1000 / c, summed('learner', 'update'))):
        print(f'  {label:20s} alone {alone:6.3f}  in the run {in_run:6.3f}')
    print(f'  (e) the actor\'s loop alone {1000 / e:6.3f}: (a) and (b) stepped in turn cost '
          f'{1000 / e - 1000 / a - 1000 / b:+.3f} beyond each alone')
    print(f'  transport (actors\' adders and pulls, dataset, push, replay) {transport:6.3f}')
    print(f'limit_fps={limit:,.0f}  accounted_limit_fps={accounted:,.0f}  '
          f'accounted_limit_with_(e)_fps={interleaved:,.0f}  (d) end_to_end_fps={d:,.0f}')
    print(f'ratio={d / limit:.2f}  accounted_ratio={d / accounted:.2f}  '
          f'accounted_ratio_with_(e)={d / interleaved:.2f}', flush=True)
    if learner_limit:
        print(f'learner_bound_limit_fps={learner_limit:,.0f}  '
              f'learner_bound_ratio={d / learner_limit:.2f}', flush=True)
    if _ACCOUNT_OUT.value:
        with open(_ACCOUNT_OUT.value, 'w') as f:
            json.dump({**result, 'parts': {'a': a, 'b': b, 'c': c, 'e': e}, 'limit': limit,
                       'accounted_limit': accounted, 'accounted_limit_with_e': interleaved,
                       'transport': transport, 'learner_bound_limit': learner_limit}, f,
                      indent=1)


def parts_given() -> list[float]:
    """--parts as numbers: (a), (b), (c) and perhaps (e)."""
    return [float(x) for x in _PARTS.value.split(',')]


def flag_problem() -> str | None:
    """What makes the flags unusable, in one line; None if nothing. Checked before any part
    or run starts and before TensorFlow is imported (issue 38)."""
    if _AGENT.value != 'impala' and not _ACCOUNT.value:
        return f'--agent={_AGENT.value} is for --account'
    for flag, zero in ((_SECONDS, False), (_WINDOW_S, False), (_WARMUP_S, True)):
        problem = runs.seconds_problem(flag, zero)
        if problem:
            return problem
    for flag in (_ENVS_PER_ACTOR, _NUM_ACTORS):
        if flag.value is not None and flag.value < 1:
            return f'--{flag.name} must be >= 1, got {flag.value}'
    if _PARTS.value:
        try:
            given = parts_given()
        except ValueError:
            given = []
        if len(given) not in (3, 4) or not all(0 < x < math.inf for x in given):
            return (f'--parts={_PARTS.value}: give a,b,c[,e], each in frames/s > 0 (e.g. '
                    f'--parts=8935,16020,9403)')
    if _TORSO.value not in ('shallow', 'deep'):
        return f'--torso must be shallow or deep, got {_TORSO.value!r}'
    if _CORE.value not in ('feed_forward', 'lstm', 'both'):
        return f'--core must be feed_forward, lstm or both, got {_CORE.value!r}'
    spec = _experiment()
    if _PRESET.value not in spec.presets:
        return f'unknown --preset={_PRESET.value}; choose one of: {", ".join(spec.presets)}'
    from launch import input_checks  # pylint: disable=import-outside-toplevel
    config = _config(**({'core': 'feed_forward'} if _CORE.value == 'both' else {}))
    try:
        spec.check(config)    # the game, as the run's program checks it
    except input_checks.ConfigError as e:
        return str(e)
    return runs.budget_problem(_FRAMES.value, spec, config)


def main(argv):
    del argv
    if _PART.value:
        parts = {'emulator': part_emulator, 'inference': part_inference, 'actor': part_actor,
                 'learner': part_learner if _AGENT.value == 'impala' else part_filled_learner}
        print(json.dumps(parts[_PART.value](_config())), flush=True)
        if _PART.value == 'learner' and _AGENT.value != 'impala':
            # Its filling actor still waits inside a Reverb write, which neither stopping the
            # server ends nor the interpreter's exit survives (it aborted in CI): leave now.
            os._exit(0)  # pylint: disable=protected-access
        return
    problem = flag_problem()
    if problem:
        print(f'error: {problem}', file=sys.stderr)
        sys.exit(2)
    if _COMPONENTS.value:
        components()
        return
    if _CORE.value == 'both':
        lstm_against_feed_forward()
        return
    cores = os.cpu_count()
    config = _config()
    if _PARTS.value:
        a, b, c, *given_e = parts_given()
    else:
        a = _run_part('emulator')['fps']
        b = _run_part('inference', jit=False)['fps']
        c = _run_part('learner', jit=False)['fps_per_core']
        given_e = []
    limit = cores / (1 / a + 1 / b + 1 / c)
    torso = config.torso if 'torso' in config else '-'
    print(f'agent={_AGENT.value} game={_GAME.value} torso={torso} '
          f'preset={_PRESET.value} cores={cores} envs_per_actor={config.envs_per_actor} '
          f'batch={config.batch_size} frames_per_update={frames_per_update(config):g}',
          flush=True)
    print(f'(a) emulator_fps_per_core={a:,.0f}', flush=True)
    print(f'(b) inference_fps_per_core={b:,.0f}', flush=True)
    print(f'(c) learner_fps_per_core={c:,.0f}', flush=True)
    print(f'limit_fps={limit:,.0f}', flush=True)
    if _ACCOUNT.value:
        e = given_e[0] if given_e else _run_part('actor')['fps']
        print(f'(e) actor_loop_fps_per_core={e:,.0f}', flush=True)
        account_run(cores, a, b, c, e, limit,
                    learner_limit=c * cores if _AGENT.value != 'impala' else None)
        return
    d = end_to_end({})
    print(f'(d) end_to_end_fps={d["fps"]:,.0f}  (run of {_FRAMES.value:,} frames took '
          f'{d["wall_s"]:.0f}s)', flush=True)
    print(f'ratio={d["fps"] / limit:.2f}')


if __name__ == '__main__':
    app.run(main)
