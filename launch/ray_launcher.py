"""Ray as the launcher of a run: every role a Ray actor, placed by resource, restarted by Ray.

  ray start --head                      # then `ray start --address=HEAD:6379` on other machines
  python -m launch.impala_atari --game=pong --launcher=ray --ray_address=auto

Each role (replay server, learner, actor) is a Ray actor that runs the experiment program's own
role process (`python -m launch.<experiment> --role=... --replay_address=...`) on its node,
with TensorFlow's thread pools sized to the role's CPUs; `runtime.launch` supervises them as it
supervises local processes, so a role is restarted, resumed and stopped as in a local run.
Placement: the replay server on the node with the custom resource `replay` (else the node of
this process), fixed so that a restart keeps its address; a learner on a `learner` resource, or
a GPU where the cluster has one; actors spread over the nodes, and moved by Ray when their node
dies. The run directory must be a path that every node mounts at the same place (one shared
file system): checkpoints, logs and config.json are plain files there.
"""
import contextlib
import csv
import math
import os
import socket
import subprocess
import sys

import portpicker
import ray
from ray.util import scheduling_strategies

from launch import runtime

# CPUs each role asks Ray for unless --ray_cpus says otherwise (not stated in the papers: the
# replay server and an actor's environments use about one core each, a learner two).
DEFAULT_CPUS = {'replay': 1.0, 'learner': 2.0, 'actor': 1.0}
# What a role lost with its Ray worker or node reports as its exit code.
LOST_EXIT_CODE = -1
# The child's first act: ask Linux for SIGTERM when its parent (the Ray worker) dies, so that a
# role never outlives its Ray actor. A trampoline, not a preexec_fn: Ray workers are threaded.
_DIE_WITH_PARENT = ('import ctypes, os, signal, sys; '
                    'ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM); '
                    'os.getppid() == int(sys.argv[1]) or sys.exit(1); '
                    'os.execv(sys.executable, [sys.executable] + sys.argv[2:])')


@ray.remote(max_restarts=-1, max_concurrency=2)
class RoleActor:
    """One role on one Ray node: runs its process and reports where it is."""

    def __init__(self):
        self._popen = None

    @ray.method(max_task_retries=-1)   # waits out a restart of this actor
    def where(self) -> tuple[str, str]:
        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()

    def free_port(self) -> int:
        return portpicker.pick_unused_port()

    def run(self, argv: list[str], log_path: str, stdout_path: str | None, cpus: float,
            cwd: str) -> int:
        """Runs `python argv` to its end; its exit code."""
        command = [sys.executable, '-c', _DIE_WITH_PARENT, str(os.getpid()), *argv]
        with contextlib.ExitStack() as files:
            log = files.enter_context(open(log_path, 'ab'))
            out = files.enter_context(open(stdout_path, 'ab')) if stdout_path else log
            self._popen = subprocess.Popen(
                command, stdout=out, stderr=log, env=runtime.role_environment(cpus),
                cwd=cwd if os.path.isdir(cwd) else None, start_new_session=True)
        return self._popen.wait()

    def terminate(self, timeout_s: float) -> None:
        if self._popen is not None:
            runtime.stop_process(self._popen, timeout_s)


@ray.remote(num_cpus=0)
def _write_probe(directory: str) -> str | None:
    """None if this node can create `directory` and write a file in it; the reason otherwise."""
    path = os.path.join(directory, f'.write_probe_{ray.get_runtime_context().get_node_id()}')
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, 'w') as f:
            f.write('probe')
        os.remove(path)
    except OSError as e:
        return e.strerror or str(e)
    return None


def role_cpus(text: str) -> dict[str, float]:
    """`--ray_cpus`, e.g. 'learner=4,actor=0.5': the CPUs each role asks Ray for, by default
    DEFAULT_CPUS."""
    cpus = dict(DEFAULT_CPUS)
    for part in filter(None, text.replace(' ', '').split(',')):
        role, _, value = part.partition('=')
        if role not in cpus:
            raise runtime.LaunchError(f'--ray_cpus names {role!r}; the roles are replay, '
                                      f'learner and actor (e.g. learner=4,actor=0.5)')
        try:
            cpus[role] = float(value)
        except ValueError:
            cpus[role] = float('nan')
        if not cpus[role] > 0:
            raise runtime.LaunchError(f'--ray_cpus: {part!r} is not a positive number of CPUs '
                                      f'(e.g. learner=4,actor=0.5)')
    return cpus


def connect(address: str, local_cpus: float) -> None:
    """Joins the Ray cluster at `address` ('auto': the one this machine belongs to; 'local': a
    new one-machine cluster for this run, of at least `local_cpus` logical CPUs so that the
    run's roles fit as they do under the local launcher); one-line LaunchError when there is
    none."""
    advice = ('start one with `ray start --head` (and `ray start --address=HEAD:6379` on the '
              'other machines), or use --ray_address=local for a one-machine cluster')
    if address not in ('auto', 'local'):
        host, _, port = address.rpartition(':')
        try:
            socket.create_connection((host, int(port)), timeout=3).close()
        except (OSError, ValueError):
            raise runtime.LaunchError(f'no Ray cluster answers at --ray_address={address}: '
                                      f'{advice}') from None
    try:
        if address == 'local':
            ray.init(num_cpus=max(os.cpu_count(), math.ceil(local_cpus)), log_to_driver=False,
                     include_dashboard=False, logging_level='ERROR')
        else:
            ray.init(address=address, log_to_driver=False, logging_level='ERROR')
    except ConnectionError:
        raise runtime.LaunchError(f'no Ray cluster found for --ray_address={address}: '
                                  f'{advice}') from None


class RayProcess:
    """A role's process on its Ray actor, with the interface of `runtime.LocalProcess`."""

    def __init__(self, name: str, role: str, actor, argv: list[str], cpus: float,
                 log_path: str, stdout_path: str | None, placement: 'Placement'):
        self.name = name
        self.restarts = 0
        self.last_failure, self.same_failures = '', 0    # the crash-loop count (runtime.py)
        self._role = role
        self._actor = actor
        self._run_args = (argv, log_path, stdout_path, cpus, os.getcwd())
        self._log_path = log_path
        self._stdout_path = stdout_path
        self._echoed = 0
        self._placement = placement
        self.start()

    def start(self) -> None:
        """Runs the role once its Ray actor is up (at once, or after Ray restarted it)."""
        self._where = self._actor.where.remote()
        self._run = None

    def poll(self) -> int | None:
        """None while the role runs or waits for its actor; its exit code when it ended;
        LOST_EXIT_CODE when its worker or node died, or its actor cannot come back."""
        self._echo()
        if self._run is None:
            if not ray.wait([self._where], timeout=0)[0]:
                return None
            try:
                node_id, node_ip = ray.get(self._where)
            except ray.exceptions.RayActorError:
                return LOST_EXIT_CODE     # it cannot be restarted (its pinned node is gone)
            self._placement.record(self.name, self._role, self.restarts, node_id, node_ip)
            self._run = self._actor.run.remote(*self._run_args)
        if not ray.wait([self._run], timeout=0)[0]:
            return None
        try:
            return ray.get(self._run)
        except ray.exceptions.RayActorError:
            return LOST_EXIT_CODE         # its worker or node died; Ray restarts the actor

    def stop(self, timeout_s: float = 30.0) -> None:
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(self._actor.terminate.remote(timeout_s), timeout=timeout_s + 10)
        self._echo()

    def log_tail(self, lines: int = 5) -> str:
        return runtime.log_tail(self._log_path, lines)

    def _echo(self) -> None:
        """Prints what the role wrote to its stdout since the last call (the learner's
        progress lines), as a local run shows them."""
        if not self._stdout_path:
            return
        with contextlib.suppress(OSError), open(self._stdout_path, 'rb') as f:
            f.seek(self._echoed)
            text = f.read()
            whole = text[:text.rfind(b'\n') + 1]
            self._echoed += len(whole)
            if whole:
                sys.stdout.write(whole.decode(errors='replace'))
                sys.stdout.flush()


class Placement:
    """`logs/placement.csv`: where each role ran, one row per (re)start."""

    FIELDS = ('name', 'role', 'restarts', 'node_id', 'node_ip')

    def __init__(self, path: str):
        self._path = path
        if not os.path.exists(path):
            with open(path, 'w', newline='') as f:
                csv.writer(f).writerow(self.FIELDS)

    def record(self, *row) -> None:
        with open(self._path, 'a', newline='') as f:
            csv.writer(f).writerow(row)


class RayLauncher:
    """Places a run's roles on the Ray cluster at `address` (`runtime.launch` supervises them).

    Checks, before any role starts, each with a one-line LaunchError: a cluster answers; it has
    the CPUs (and `learner` resources) the roles ask for; every node can write the run
    directory."""

    def __init__(self, module: str, run_dir: str, *, num_learners: int, num_actors: int,
                 address: str, cpus: str):
        self._module = module
        self._run_dir = os.path.abspath(run_dir)
        self._cpus = role_cpus(cpus)
        wanted = (self._cpus['replay'] + num_learners * self._cpus['learner']
                  + num_learners * num_actors * self._cpus['actor'])
        connect(address, wanted)
        self._cluster = address
        resources = ray.cluster_resources()
        self._check_capacity(resources, wanted, num_learners, num_actors)
        self._check_run_dir()
        self._learner_options = self._learner_resources(resources, num_learners)
        self._logs = os.path.join(self._run_dir, 'logs')
        self._placement = None
        self._actors = []
        self.address = None

    def process(self, role: str, name: str, extra=(), console: bool = False) -> RayProcess:
        """Starts `role` as the process `name` on a Ray actor placed for it."""
        if self._placement is None:
            self._placement = Placement(os.path.join(self._logs, 'placement.csv'))
        if role == 'replay':
            # Pinned to one node, so that a restarted replay server keeps its address.
            actor = RoleActor.options(
                num_cpus=self._cpus['replay'],
                scheduling_strategy=scheduling_strategies.NodeAffinitySchedulingStrategy(
                    self._replay_node(), soft=False)).remote()
            ip = ray.get(actor.where.remote())[1]
            self.address = f'{ip}:{ray.get(actor.free_port.remote())}'
        else:
            options = (self._learner_options if role == 'learner'
                       else {'scheduling_strategy': 'SPREAD'})
            actor = RoleActor.options(num_cpus=self._cpus[role], **options).remote()
        self._actors.append(actor)
        argv = ['-m', self._module, f'--run_dir={self._run_dir}',
                f'--replay_address={self.address}', f'--role={role}', *extra]
        stdout = os.path.join(self._logs, f'{name}.out') if console else None
        return RayProcess(name, role, actor, argv, self._cpus[role],
                          os.path.join(self._logs, f'{name}.log'), stdout, self._placement)

    def describe(self) -> str:
        resources = ray.cluster_resources()
        nodes = sum(node['Alive'] for node in ray.nodes())
        return (f'Ray cluster ({self._cluster}): {nodes} nodes, {resources.get("CPU", 0):g} '
                f'CPUs; replay at {self.address}; placement in '
                f'{os.path.join(self._logs, "placement.csv")}')

    def close(self) -> None:
        for actor in self._actors:
            with contextlib.suppress(ray.exceptions.RayError):
                ray.kill(actor, no_restart=True)
        ray.shutdown()

    def _check_capacity(self, resources, wanted: float, num_learners: int,
                        num_actors: int) -> None:
        cpus = self._cpus
        have = resources.get('CPU', 0.0)
        if wanted > have:
            raise runtime.LaunchError(
                f'the Ray cluster has {have:g} CPUs; this run asks for {wanted:g} (replay '
                f'{cpus["replay"]:g}, {num_learners} learner(s) x {cpus["learner"]:g}, '
                f'{num_learners * num_actors} actors x {cpus["actor"]:g}): add nodes, lower '
                f'--config.num_actors, or give roles fewer CPUs with --ray_cpus')
        if 0 < resources.get('learner', 0) < num_learners:
            raise runtime.LaunchError(
                f'the Ray cluster has {resources["learner"]:g} `learner` resources for '
                f'{num_learners} learners: add learner nodes (`ray start --resources=\'{{'
                f'"learner": 1}}\'`) or lower --config.num_learners')

    def _check_run_dir(self) -> None:
        nodes = [node for node in ray.nodes() if node['Alive']]
        probes = [_write_probe.options(
            scheduling_strategy=scheduling_strategies.NodeAffinitySchedulingStrategy(
                node['NodeID'], soft=False)).remote(self._run_dir) for node in nodes]
        for node, reason in zip(nodes, ray.get(probes)):
            if reason:
                raise runtime.LaunchError(
                    f'the run directory {self._run_dir} is not writable from Ray node '
                    f'{node["NodeManagerAddress"]} ({reason}): use a --run_dir on a file '
                    f'system that every node mounts at the same path')

    @staticmethod
    def _learner_resources(resources, num_learners: int) -> dict:
        """A `learner` resource where the cluster has them, else a GPU (a share of one when
        there are more learners than GPUs), else CPUs alone."""
        if resources.get('learner', 0) > 0:
            return {'resources': {'learner': 1}}
        if resources.get('GPU', 0) > 0:
            return {'num_gpus': min(1.0, resources['GPU'] / num_learners)}
        return {}

    def _replay_node(self) -> str:
        """The node with a `replay` resource, else this process's node."""
        for node in ray.nodes():
            if node['Alive'] and node['Resources'].get('replay', 0) > 0:
                return node['NodeID']
        return ray.get_runtime_context().get_node_id()
