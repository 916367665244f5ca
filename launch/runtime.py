"""Roles, local multi-process launch, supervision and restarts (docs/architecture.md, "Roles").

Every experiment program runs one of these roles:
  local    (default) start replay, learners and their actors as processes, on this machine
           (`LocalLauncher`) or on a Ray cluster (`--launcher=ray`, launch/ray_launcher.py);
           restart a dead actor, learner or replay server, evaluate when training ends, stop
           everything on Ctrl-C;
  replay   the Reverb server with the tables of every learner;
  learner  one learner (--learner_id), reading from --replay_address;
  actor    one actor process (--actor_id) of one learner, writing to --replay_address.
The same program with --role and --replay_address=host:port spreads over many machines.
"""
import ctypes
import dataclasses
import os
import re
import signal
import socket
import subprocess
import sys
import time
from typing import Callable, Mapping, Sequence

import portpicker
import reverb
import tree
from absl import logging

from agents.core import builders
from agents.core import learner as learner_lib
from launch import configs
from launch import evaluate
from launch import fitness

# A role that exits with this code must not be restarted (a learner stopped by non-finite
# updates would only repeat them): the launcher stops the run with the role's last log line.
FATAL_EXIT_CODE = 3
# A learner whose replay state belongs to its checkpoint (Reactor's lazy priorities) exits
# with this when the live replay server ran on past that checkpoint: the launcher restarts
# the replay server from its checkpoint, then the learner.
REPLAY_ROLLBACK_EXIT_CODE = 4
_MAX_RESTARTS_PER_PROCESS = 20
# A role that exits with an error and the same last log line this many times in a row fails
# the same way on every restart (a crash loop): the run stops with that line.
_SAME_FAILURES_TO_STOP = 3


class LaunchError(Exception):
    """A one-line, user-facing reason why the run cannot go on."""


def serve_replay(tables: Sequence[reverb.Table], port: int,
                 checkpoint_dir: str | None = None) -> None:
    """Serves `tables`; with `checkpoint_dir`, restores the newest Reverb checkpoint there first
    and writes one there on each `reverb.Client.checkpoint()`."""
    checkpointer = (reverb.checkpointers.DefaultCheckpointer(path=checkpoint_dir)
                    if checkpoint_dir else None)
    server = reverb.Server(list(tables), port=port, checkpointer=checkpointer)
    print(f'[replay] serving {", ".join(t.name for t in tables)} on port {port}', flush=True)
    if checkpoint_dir:
        info = reverb.Client(f'localhost:{port}').server_info()
        try:
            check_restored_layout(tables, info, checkpoint_dir)
        except LaunchError:
            server.stop()
            raise
        sizes = ' '.join(f'{t.name}={info[t.name].current_size}' for t in tables)
        print(f'[replay] checkpoints in {checkpoint_dir}; items restored: {sizes}', flush=True)
    server.wait()


def _layout(signature) -> tuple:
    """A signature's field names (where it is a dict) and its tensors' shapes and dtypes."""
    return (sorted(signature) if isinstance(signature, Mapping) else None,
            [(tuple(spec.shape), spec.dtype.name) for spec in tree.flatten(signature)])


def check_restored_layout(tables: Sequence[reverb.Table], info, checkpoint_dir: str) -> None:
    """LaunchError where a table restored from `checkpoint_dir` (`info`: the server's) holds
    items of another signature than declared: Reverb restores a checkpoint's own signatures,
    so items written by an earlier layout would reach actors and learners unreadable."""
    for table in tables:
        restored, declared = info[table.name].signature, table.info.signature
        if restored is not None and _layout(restored) != _layout(declared):
            raise LaunchError(
                f'the replay checkpoint in {checkpoint_dir} holds table {table.name} in another '
                f'layout than this code writes (fields {_layout(restored)[0]}, not '
                f'{_layout(declared)[0]}): it was written before the layout changed; move it '
                f'away to start with an empty replay')


def replay_checkpoint_dir(builder, run_dir: str) -> str | None:
    """Where the replay server checkpoints, for builders whose tables must survive a restart
    (`builder.replay_checkpointing`); None for the others."""
    if builder.replay_checkpointing:
        return os.path.join(run_dir, 'replay_checkpoints')
    return None


def wait_for_replay(address: str, timeout_s: float = 60.0,
                    poll: Callable[[], object] | None = None) -> None:
    """Blocks until the Reverb server at `address` answers; one-line error otherwise. `poll`
    runs while waiting (a launcher's replay process, which starts its server there)."""
    host, port = address.rsplit(':', 1)
    deadline = time.monotonic() + timeout_s
    while True:
        if poll:
            poll()
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                pass
            reverb.Client(address).server_info(timeout=5)
            return
        except Exception:  # pylint: disable=broad-except
            if time.monotonic() > deadline:
                raise LaunchError(f'no replay server answers at {address} after '
                                  f'{timeout_s:.0f}s: start one with --role=replay, or check '
                                  f'--replay_address') from None
            time.sleep(0.5)


class LocalProcess:
    """A supervised child process of this machine with its log file (stderr, and stdout unless
    `console`)."""

    def __init__(self, name: str, argv: list[str], log_path: str, console: bool,
                 cpus: float | None = None):
        self.name = name
        self._argv = argv
        self._log_path = log_path
        self._console = console
        self._cpus = cpus
        self.restarts = 0
        self.last_failure, self.same_failures = '', 0    # the crash-loop count (_crash_loop)
        self.popen = None
        self.start()

    def start(self) -> None:
        log = open(self._log_path, 'ab')
        self.popen = subprocess.Popen(
            self._argv, stdout=None if self._console else log, stderr=log,
            env=role_environment(self._cpus), start_new_session=True,
            preexec_fn=die_with_parent)
        log.close()

    def poll(self):
        return self.popen.poll()

    def stop(self, timeout_s: float = 30.0) -> None:
        stop_process(self.popen, timeout_s)

    def log_tail(self, lines: int = 5) -> str:
        return log_tail(self._log_path, lines)


def learner_process_name(learner_id: int, num_learners: int) -> str:
    """'learner', or 'learner_<i>' among several: its progress lines' and log's name
    (RUN_DIR/logs/<name>.log)."""
    return f'learner_{learner_id}' if num_learners > 1 else 'learner'


def _append_to_learner_logs(run_dir: str, num_learners: int, line: str) -> None:
    logs = os.path.join(run_dir, 'logs')
    os.makedirs(logs, exist_ok=True)
    for i in range(num_learners):
        with open(os.path.join(logs, f'{learner_process_name(i, num_learners)}.log'), 'a') as f:
            f.write(line + '\n')


class LocalLauncher:
    """Every role a supervised process of this machine; the replay server on a free port.

    An actor's TensorFlow runs on one thread, as on a Ray cluster (ray_launcher.DEFAULT_CPUS):
    its batched inference is small, and a second thread cost it 15% more CPU per frame in a
    local run (benchmarks/README.md, "Every CPU-second of a local run")."""

    def __init__(self, module: str, run_dir: str):
        self.address = f'localhost:{portpicker.pick_unused_port()}'
        self._base = [sys.executable, '-m', module, f'--run_dir={run_dir}',
                      f'--replay_address={self.address}']
        self._logs = os.path.join(run_dir, 'logs')

    def process(self, role: str, name: str, extra=(), console: bool = False) -> LocalProcess:
        """Starts `role` as the process `name` with the extra flags `extra`."""
        return LocalProcess(name, self._base + [f'--role={role}', *extra],
                            os.path.join(self._logs, f'{name}.log'), console,
                            cpus=1 if role == 'actor' else None)

    def describe(self) -> str:
        return f'replay at {self.address}'

    def close(self) -> None:
        pass


def role_environment(cpus: float | None = None) -> dict:
    """A role process's environment; with `cpus`, TensorFlow's thread pools sized to them.

    TensorFlow allocates on the CPU through its BFC allocator, which keeps the memory it frees
    for reuse, unless the caller set TF_CPU_ALLOCATOR_USE_BFC: the default allocator returned
    each update's large tensors to the system, and page faults and copies took 16% of the
    learner's CPU; with BFC the update at the paper batch runs 15-23% faster, in no more memory
    (benchmarks/README.md, "Every CPU-second of a local run")."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', PYTHONUNBUFFERED='1')
    env.setdefault('TF_CPU_ALLOCATOR_USE_BFC', 'true')
    if cpus is not None:
        threads = str(max(1, int(cpus)))
        env.update(TF_NUM_INTRAOP_THREADS=threads, TF_NUM_INTEROP_THREADS=threads,
                   OMP_NUM_THREADS=threads)
    return env


def stop_process(popen: subprocess.Popen, timeout_s: float = 30.0) -> None:
    """SIGTERM (a learner checkpoints on it), then SIGKILL after `timeout_s`."""
    if popen.poll() is None:
        popen.terminate()
        try:
            popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()


def log_tail(path: str, lines: int = 5) -> str:
    """The last `lines` lines of a log file, indented; '' when it cannot be read."""
    try:
        with open(path, errors='replace') as f:
            tail = f.readlines()[-lines:]
    except OSError:
        return ''
    return ''.join('    ' + line for line in tail)


class SupervisedLearner:
    """One learner's supervised processes: the learner and its actors."""

    def __init__(self, learner_id: int, num_learners: int, num_actors: int, child):
        several = num_learners > 1
        ids = [f'--learner_id={learner_id}']
        self.name = learner_process_name(learner_id, num_learners)
        self.process = child('learner', self.name, console=True, extra=ids)
        self.actors = [child('actor', f'actor_{learner_id}_{i}' if several else f'actor_{i}',
                             extra=ids + [f'--actor_id={i}']) for i in range(num_actors)]
        self.finished = False

    def supervise(self) -> None:
        """Restarts a dead learner (it resumes) or actor; stops the actors once it is done."""
        if self.finished:
            return
        code = self.process.poll()
        if code == 0:
            self.finished = True
            for actor in self.actors:
                actor.stop()
            return
        if code == FATAL_EXIT_CODE:
            raise LaunchError(f'{self.process.name} stopped:\n{self.process.log_tail(1)}')
        if code is not None:
            restart_role(self.process, code, 'resuming from its last checkpoint')
        for actor in self.actors:
            code = actor.poll()
            if code is not None:
                restart_role(actor, code, 'training goes on')


def launch(launcher, *, run_dir: str, num_learners: int, num_actors: int,
           on_finished: Callable[[], None], poll_interval_s: float = 0.5) -> None:
    """Runs replay, `num_learners` learners and `num_actors` actors per learner as processes of
    `launcher` (`LocalLauncher`, or `ray_launcher.RayLauncher` on a cluster), supervised.

    A dead actor is restarted; a learner that dies is restarted and resumes from its checkpoint;
    a dead replay server is restarted on the same address, restoring its newest checkpoint where
    the agent checkpoints replay, and the other roles' Reverb clients reconnect to it (what is
    lost: docs/fidelity.md, "Faults"). When a learner finishes, its actors are stopped; when all
    have, `on_finished` runs (evaluation). Ctrl-C stops every process (learners checkpoint
    first) and says how to resume.
    """
    logs = os.path.join(run_dir, 'logs')
    os.makedirs(logs, exist_ok=True)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops the run as cleanly as Ctrl-C
    # Ctrl-C even where the launcher inherited SIGINT ignored (a background job of a script).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    replay, learners = None, []
    try:
        replay = launcher.process('replay', 'replay')
        wait_for_replay(launcher.address, poll=replay.poll)
        learners = [SupervisedLearner(i, num_learners, num_actors, launcher.process)
                    for i in range(num_learners)]
        learners_text = (f'{num_learners} learners, {num_actors} actors each'
                         if num_learners > 1 else f'1 learner, {num_actors} actors')
        print(f'[launcher] {launcher.describe()}, {learners_text}; logs in {logs}', flush=True)
        while not all(learner.finished for learner in learners):
            time.sleep(poll_interval_s)
            if replay.poll() is not None:
                restart_role(replay, replay.poll(),
                             'on the same address; the other roles reconnect')
            if any(learner.process.poll() == REPLAY_ROLLBACK_EXIT_CODE for learner in learners):
                print('[launcher] the replay server ran on past the learner\'s checkpoint; '
                      'restarting it from its checkpoint', flush=True)
                replay.stop()
                replay.start()
                wait_for_replay(launcher.address, poll=replay.poll)
            for learner in learners:
                learner.supervise()
        on_finished()
    except KeyboardInterrupt:
        print(f'\n[launcher] stopping; resume with the same command and --run_dir={run_dir}',
              flush=True)
    finally:
        # Learners first, while actors still feed them, so each can finish its step and save
        # a checkpoint; then the actors; the replay server last.
        for process in ([learner.process for learner in learners]
                        + [actor for learner in learners for actor in learner.actors]
                        + [replay] * (replay is not None)):
            process.stop()
        launcher.close()


def die_with_parent() -> None:
    """Linux: a child gets SIGTERM when the launcher dies, even by SIGKILL."""
    ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _interrupt(signum, frame) -> None:
    del signum, frame
    raise KeyboardInterrupt


def _crash_loop(process, code: int) -> None:
    """Stops the run when `process` exited by itself with an error (not by a signal) and the
    same last log line `_SAME_FAILURES_TO_STOP` times in a row."""
    last = process.log_tail(1).strip() if code > 0 else ''
    same = process.same_failures + 1 if last and last == process.last_failure else 1
    process.last_failure, process.same_failures = last, same
    if last and same >= _SAME_FAILURES_TO_STOP:
        raise LaunchError(f'{process.name} failed the same way {same} times in a row (exit '
                          f'code {code}): {last}')


def restart_role(process, code: int, consequence: str) -> None:
    _crash_loop(process, code)
    if process.restarts >= _MAX_RESTARTS_PER_PROCESS:
        raise LaunchError(f'{process.name} died {process.restarts + 1} times; last log:\n'
                          f'{process.log_tail()}')
    process.restarts += 1
    print(f'[launcher] {process.name} exited with code {code}; restarting it, {consequence}',
          flush=True)
    logging.info('last log of %s:\n%s', process.name, process.log_tail())
    process.start()


def learner_spec(spec: configs.RunSpec, learner_id: int) -> configs.RunSpec:
    """Learner `learner_id`'s spec: its sweep member's config (agents/core/sweeps.py) in its
    directory (builders.learner_dir: the run's own with one learner), as its learner saves it
    there for evaluation and reports."""
    config = spec.experiment.sweeps.member_config(spec.config, learner_id)
    run_dir = builders.learner_dir(spec.run_dir, learner_id, spec.config.runtime.num_learners)
    saved = spec.saved if run_dir == spec.run_dir else None
    return dataclasses.replace(spec, run_dir=run_dir, config=config, saved=saved)


def run_role(*, module: str, spec: configs.RunSpec, role: str, replay_address: str | None,
             actor_id: int, learner_id: int, replay_wait_s: float,
             launcher: Callable[[], object] | None = None) -> None:
    """What an experiment program does for `role` with its resolved, checked run spec.

    `launcher` makes the launcher of `--role=local` (`LocalLauncher` when None), which checks
    what it needs before anything is written or started; it places the roles, this process
    supervises them. The spec is written to RUN_DIR/config.json by the process that resolved
    it from the user's flags: `--role=local` before any role starts, or a learner started by
    hand; the roles a launcher starts read it (`RunSpec.write` writes only what changed).

    Learners and actors run with their sweep member's config (agents/core/sweeps.py); the
    replay server's tables and the run directory's config.json are the run's."""
    experiment, config, run_dir = spec.experiment, spec.config, spec.run_dir
    if not 0 <= learner_id < config.runtime.num_learners:
        raise configs.ConfigError(f'--learner_id={learner_id} is out of range: this run has '
                                  f'--config.num_learners={config.runtime.num_learners} (ids 0 '
                                  f'to {config.runtime.num_learners - 1})')
    if not 0 <= actor_id < config.runtime.num_actors:
        raise configs.ConfigError(f'--actor_id={actor_id} is out of range: this run has '
                                  f'--config.num_actors={config.runtime.num_actors} per '
                                  f'learner')
    note = configs.precision_note(spec)
    if note and role in ('local', 'learner'):
        # Before any role starts: the launcher's console, where its learners print too.
        print(f'[{"launcher" if role == "local" else "learner"}] {note}', flush=True)
    if role == 'local':
        placer = launcher() if launcher else LocalLauncher(module, run_dir)  # checks first
        with learner_lib.lock_directory(run_dir, 'run',
                                        'wait for it to end, or choose another --run_dir'):
            spec.write()
            if note:   # and in each learner's log, which its sitting's lines follow
                _append_to_learner_logs(run_dir, config.runtime.num_learners, f'[launcher] {note}')
            learners = [learner_spec(spec, i) for i in range(config.runtime.num_learners)]
            launch(placer, run_dir=run_dir, num_learners=config.runtime.num_learners,
                   num_actors=config.runtime.num_actors,
                   on_finished=lambda: evaluate.evaluate_and_report(run_dir, learners))
        return
    if not replay_address:
        raise configs.ConfigError(f'--role={role} needs --replay_address=host:port')
    host = r'[^:\s]*' if role == 'replay' else r'[^:\s]+'   # the server listens on a port
    if not re.fullmatch(host + r':\d+', replay_address):
        raise configs.ConfigError(f'--replay_address={replay_address} is not host:port '
                                  f'(e.g. localhost:9000; --role=replay: :9000)')
    if role == 'replay':
        builder = experiment.builder(config)
        serve_replay(builders.replay_tables(builder, config.runtime.num_learners),
                     port=int(replay_address.rsplit(':', 1)[1]),
                     checkpoint_dir=replay_checkpoint_dir(builder, run_dir))
        return
    wait_for_replay(replay_address, replay_wait_s)
    member = learner_spec(spec, learner_id)
    builder = experiment.builder(member.config)
    if role == 'learner':
        learner = builders.make_learner(builder, replay_address, run_dir, learner_id,
                                        experiment.sweeps.learner_name(config, learner_id),
                                        fitness=fitness.fitness(builder, spec.target))
        spec.write()
        if member.run_dir != run_dir:
            # Each learner directory is a run directory of its own for evaluation and reports.
            member.write()
        learner.run()
    else:
        builders.make_actor(builder, replay_address, run_dir, actor_id, learner_id).run()
