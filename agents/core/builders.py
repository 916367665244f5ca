"""The builder seam: what every agent declares, and the one assembler that turns any builder
into the replay, learner and actor roles (docs/architecture.md, "Where a new agent plugs in").

An agent's builder says what is particular to it: its tables, its step schema, its learning
state and dataset, its adders and policies; its registry entry composes it with an environment
piece and a network factory (launch/experiments.py). Everything else (seeding,
parameter broadcast, episode statistics, checkpoints, logs, which tables are private to a
learner) is done here, once.
"""
import abc
import dataclasses
import functools
import os
import typing
from typing import Any, Callable, Iterator, Mapping, Sequence

import dm_env
import reverb
import sonnet as snt
import tensorflow as tf

from agents.core import actor as actor_lib
from agents.core import checkpointer
from agents.core import config_checks
from agents.core import episode_log
from agents.core import learning
from agents.core import learner as learner_lib
from agents.core import logging as run_logging
from agents.core import pbt
from agents.core import pbt_hook
from agents.core import typed_config
from agents.core import variables
from reverb_tables import tables


@dataclasses.dataclass(frozen=True)
class TableDeclaration:
    """One of an agent's tables: `make(name)` builds it. A private table exists once per
    learner (named by `tables.private`); a shared one once for all learners of the server."""
    name: str
    make: Callable[[str], reverb.Table]
    shared: bool = False


@typing.runtime_checkable
class Environments(typing.Protocol):
    """A builder's environment piece (environments/: `AtariGames`, `DmLabLevels`,
    `ControlTask`), held by the builder, not inherited."""

    suite: str | None     # whose references score its tasks (PBT's fitness); None: none
    frame_stack: int      # frames per observation, which the adders store once each
    max_episode_frames: int   # the cap on a training episode's frames; 0: its own end only

    def environment(self, seed: int, *, evaluation=None, task=None) -> dm_env.Environment:
        """A training environment (of `task`, one of `tasks()`, for a multi-task piece), or
        one set up by an evaluation protocol."""

    def tasks(self) -> tuple[str, ...]:
        """A multi-task agent's tasks (IMPALA sec. 5.3: one set of weights for all of them;
        environments are given tasks by `assigned_task`); () for a single-task agent."""

    def reported_task(self, task: str) -> str:
        """The name `task`'s evaluation is reported under (DMLab-30: its test level)."""

    def environment_specs(self) -> tuple[Any, dm_env.specs.Array]:
        """(the observation spec, a nest of dm_env specs; the action spec): what a network
        factory is given (the registry's `network`)."""


# (environment_specs, the network's settings (Builder.network_settings), precision) -> the
# network, its variables created.
NetworkFactory = Callable[[tuple, Any, str], snt.Module]


class Builder(abc.ABC):
    """What an agent implements, composed with the pieces its registry entry names
    (launch/experiments.py): an environment piece (`environments`) and a network factory
    (`make_network`), neither inherited. Its step spec and tables are built once, on first
    use. `learner_id` selects a learner's private tables (`self.table(name, learner_id)`);
    with one learner it is always 0."""

    # Tables that must survive a restart are checkpointed with the learner's checkpoints.
    replay_checkpointing = False

    def __init__(self, config: typed_config.Config, environments: Environments,
                 make_network: NetworkFactory):
        if not isinstance(environments, Environments):
            raise TypeError(f'{type(environments).__name__} is not an environment piece: it '
                            f'needs environment(), tasks(), reported_task(), '
                            f'environment_specs(), suite and frame_stack')
        self.config = config
        self.environments = environments
        self._make_network = make_network

    def step_spec(self) -> dict[str, Any]:
        """One step as the actor writes it (agents/core/steps.py)."""
        return self._built_step_spec

    def tables(self) -> Sequence[TableDeclaration]:
        """The agent's tables; the variables and episode-stats tables are added here."""
        return self._built_tables

    @functools.cached_property
    def _built_step_spec(self) -> dict[str, Any]:
        return self.make_step_spec()

    @functools.cached_property
    def _built_tables(self) -> Sequence[TableDeclaration]:
        return tuple(self.make_tables())

    @abc.abstractmethod
    def make_step_spec(self) -> dict[str, Any]:
        """Builds `step_spec()`."""

    @abc.abstractmethod
    def make_tables(self) -> Sequence[TableDeclaration]:
        """Builds `tables()`."""

    def network(self) -> snt.Module:
        """The network of the environment's specs, with its variables created."""
        return self._make_network(self.environments.environment_specs(),
                                  self.network_settings(), self.config.runtime.precision)

    def network_settings(self) -> Any:
        """What the network factory is given of the config beside the runtime's precision:
        the agent's network section or field; None by default."""
        return None

    @abc.abstractmethod
    def learning_state(self) -> learning.LearningState:
        """The learner's state (agents/core/learning.py); everything in it is checkpointed."""

    @abc.abstractmethod
    def dataset(self, replay_address: str, learner_id: int) -> Iterator[Any]:
        """The batches `update` takes (agents/core/datasets.py)."""

    @abc.abstractmethod
    def adder(self, client: reverb.Client, learner_id: int) -> actor_lib.Adder:
        """The adder of one environment of one of `learner_id`'s actors."""

    @abc.abstractmethod
    def policy(self, network: snt.Module, actor_id: int, seed: int) -> actor_lib.BatchedPolicy:
        """The behaviour policy of actor process `actor_id` (all of its environments)."""

    @abc.abstractmethod
    def evaluation_policy(self, network: snt.Module) -> actor_lib.BatchedPolicy:
        """The policy a paper's evaluation protocol runs."""

    @property
    def frame_stack(self) -> int:
        """Frames per observation (its environment piece's): Atari stacks 4 (DQN; IMPALA
        table G.1), which the adders store once each; DMLab's frames and control features are
        one."""
        return self.environments.frame_stack

    def game_columns(self, game: Mapping[str, Any]) -> Mapping[str, Any]:
        """The agent's own columns of a finished game (its `actor` and `env`) in
        episodes.csv; none by default."""
        del game
        return {}

    def actor_update_period(self) -> int:
        """Batched steps between the actors' parameter pulls (IMPALA: each unroll, sec. 3)."""
        return 1

    def replay_feedback(self, client: reverb.Client, state: learning.LearningState,
                        learner_id: int) -> Callable[[Any], Any] | None:
        """Learner(after_update=...): e.g. priorities written back (Ape-X, Reactor)."""
        del client, state, learner_id
        return None

    def replay_checkpoint(self, client: reverb.Client, learner_id: int
                          ) -> Callable[[], Any] | None:
        """Checkpointer(on_checkpoint=...): with `replay_checkpointing`, the server checkpoints
        its tables after each learner checkpoint; one learner does it for all (a sweep's shared
        replay is checkpointed once)."""
        return client.checkpoint if self.replay_checkpointing and learner_id == 0 else None

    def table(self, name: str, learner_id: int) -> str:
        """The name learner `learner_id` uses for the declared table `name`."""
        declared = {t.name: t for t in self.tables()}
        return name if declared[name].shared else tables.private(name, learner_id)


def replay_tables(builder: Builder, num_learners: int) -> list[reverb.Table]:
    """Every table of a replay server that `num_learners` learners of `builder` share."""
    made = []
    for declaration in builder.tables():
        if declaration.shared:
            made.append(declaration.make(declaration.name))
        else:
            made += [declaration.make(tables.private(declaration.name, i))
                     for i in range(num_learners)]
    for i in range(num_learners):
        made += [tables.variables_table(tables.private(tables.VARIABLES, i)),
                 tables.episode_stats_table(name=tables.private(tables.EPISODE_STATS, i))]
    return made


def learner_dir(run_dir: str, learner_id: int, num_learners: int) -> str:
    """Where learner `learner_id` keeps its checkpoints and logs: the run directory itself
    with one learner, RUN_DIR/learner_<id> with several."""
    return run_dir if num_learners == 1 else os.path.join(run_dir, f'learner_{learner_id}')


def learner_seed(config: typed_config.Config, learner_id: int) -> int:
    return config.runtime.seed + learner_id * 1_000_003


def actor_seed(config: typed_config.Config, learner_id: int, actor_id: int) -> int:
    """The seed of the actor's first environment; environment k gets this + k."""
    runtime = config.runtime
    return runtime.seed * 10_000 + actor_id * runtime.envs_per_actor + learner_id * 1_000_003


def make_learner(builder: Builder, replay_address: str, run_dir: str,
                 learner_id: int = 0, name: str = 'learner',
                 fitness: pbt.Fitness | None = None) -> learner_lib.Learner:
    """The learner role of `learner_id`, reading its batches and writing to its tables;
    `name` heads its progress lines. With population-based training it is a member of the
    population (agents/core/pbt.py), whose fitness is `fitness` of its window of finished
    games (launch/fitness.py)."""
    c = builder.config
    tf.random.set_seed(learner_seed(c, learner_id))
    state = builder.learning_state()
    client = reverb.Client(replay_address)
    dirs = [learner_dir(run_dir, i, c.runtime.num_learners) for i in range(c.runtime.num_learners)]
    iterator = builder.dataset(replay_address, learner_id)
    after_update = builder.replay_feedback(client, state, learner_id)
    on_checkpoint = builder.replay_checkpoint(client, learner_id)
    member = pbt.member(c, run_dir, dirs, learner_id, fitness)
    pusher = variables.VariablePusher(client, state.network.trainable_variables,
                                      table=tables.private(tables.VARIABLES, learner_id))
    checkpoints = checkpointer.Checkpointer(state, dirs[learner_id], name, on_checkpoint)
    logs = os.path.join(dirs[learner_id], 'logs')
    tensorboard = run_logging.TensorBoardLogger(os.path.join(logs, 'tensorboard'))
    games = episode_log.EpisodeLog(
        episode_log.EpisodeStatsReader(
            client, tables.private(tables.EPISODE_STATS, learner_id)), logs, tensorboard,
        (lambda game: game_task(builder, game)) if builder.environments.tasks() else None,
        builder.game_columns)
    return learner_lib.Learner(
        state=state, iterator=iterator, pusher=pusher, checkpointer=checkpoints,
        episode_log=games, tensorboard=tensorboard, logs_dir=logs,
        schedule=learner_lib.Schedule(c.total_frames, c.runtime.checkpoint_interval_s,
                                      c.runtime.log_interval_s, c.runtime.max_nonfinite_updates),
        name=name, after_update=after_update,
        hook=member and pbt_hook.PopulationHook(member, state, checkpoints, pusher, name))


def assigned_task(tasks: Sequence[str], envs_per_actor: int, actor_id: int, env: int) -> str:
    """The task environment `env` of actor `actor_id` plays (every learner's actors alike).

    IMPALA sec. 5.3: "we allocate a fixed number of actors to each task". Our actors step
    `envs_per_actor` environments each, so the unit is an environment: numbering a learner's
    environments g = actor_id * envs_per_actor + env, environment g plays task g mod N of the N
    tasks (scalable_agent gives actor i level i mod N). With num_actors * envs_per_actor a
    multiple of N, as the multi-task configs' checks require, every task gets the same fixed
    number of environments, num_actors * envs_per_actor / N, for the whole run.
    """
    return tasks[(actor_id * envs_per_actor + env) % len(tasks)]


def game_task(builder: Builder, game: Mapping[str, Any]) -> str:
    """The task a finished game of the learner's episode log (its `actor` and `env`) was
    played on, by `assigned_task`, named as its results are reported (`reported_task`); ''
    for a single-task builder."""
    tasks = builder.environments.tasks()
    return builder.environments.reported_task(assigned_task(
        tasks, builder.config.envs_per_actor, int(game['actor']),
        int(game['env']))) if tasks else ''


def make_actor(builder: Builder, replay_address: str, run_dir: str, actor_id: int,
               learner_id: int = 0) -> actor_lib.Actor:
    """Actor process `actor_id` of learner `learner_id`: its environments (each on its
    `assigned_task` for a multi-task builder), policy, adders."""
    c = builder.config
    seed = actor_seed(c, learner_id, actor_id)
    tf.random.set_seed(seed)
    policy = builder.policy(builder.network(), actor_id, seed)
    client = reverb.Client(replay_address)
    tasks = builder.environments.tasks()
    per_actor = c.runtime.envs_per_actor
    envs = [builder.environments.environment(seed=seed + k, **(
                {'task': assigned_task(tasks, per_actor, actor_id, k)} if tasks else {}))
            for k in range(per_actor)]
    logs = os.path.join(learner_dir(run_dir, learner_id, c.runtime.num_learners), 'logs')
    return actor_lib.Actor(
        envs=envs, policy=policy, adders=[builder.adder(client, learner_id) for _ in envs],
        parameters=variables.VariableClient(
            client, policy.variables, table=tables.private(tables.VARIABLES, learner_id)),
        action_spec=builder.step_spec()['action'],
        update_period=builder.actor_update_period(), client=client, actor_id=actor_id,
        frames_per_step=c.environment.action_repeat,
        episode_stats_table=tables.private(tables.EPISODE_STATS, learner_id),
        log_path=os.path.join(logs, f'actor_{actor_id}.csv'))


def resolve_jit(setting) -> bool:
    """`jit_compile`: True/False, or 'auto' = XLA on a GPU, off on CPU (slower there: see the
    learner figures in benchmarks/README.md)."""
    setting = config_checks.jit_setting(setting)
    if setting == 'auto':
        return bool(tf.config.list_physical_devices('GPU'))
    if setting is None:
        raise ValueError("jit_compile must be true, false or 'auto'")
    return setting
