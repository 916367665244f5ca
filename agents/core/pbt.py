"""Population-based training (IMPALA appendix F; Jaderberg et al., 2017): the members of a
population are the learners of one run (docs/architecture.md, "Several learners"), each
adapting its own hyperparameters while it trains.

Appendix F, and how each sentence is done here (the config fields are the agent's, `pbt_*`):
- "a 'burn-in' period of 20 million frames where no evolution is done"
  (`pbt_burn_in_frames`, counted in the member's own frames);
- "After collecting 5,000 episode rewards in total, the mean capped human normalised score is
  calculated" (`pbt_fitness_episodes`): a member is ready each time it has finished that many
  games since its last evolution step, and its fitness is table G.1's mean capped
  human-normalised score of its last `pbt_fitness_episodes` games: per task the mean
  normalised score of its games, capped at 1, averaged over the tasks (launch/fitness.py);
- "a random instance in the population is selected. If the score of the selected instance is
  more than an absolute 5% higher, then the selected instance weights and parameters are
  copied" (`pbt_copy_threshold`, 0.05 of a capped human-normalised score): the donor's newest
  checkpoint (weights, optimizer state and adapted hyperparameters) is loaded into the member,
  which keeps its own step and frame counters;
- "No matter if a copy happened or not, each parameter (RMSProp epsilon, learning rate and
  entropy cost) is permuted with 33% probability by multiplying with either 1.2 or 1/1.2"
  (`pbt_adapted`, `pbt_perturb_probability`, `pbt_perturb_factor`);
- "We reconstruct the learning curves of the PBT runs ... by backtracking through the ancestry
  of copied checkpoints": every member's steps are rows of RUN_DIR/pbt/lineage_<i>.csv, which
  `ancestry` walks back.
The population's settings, checks and table D.1 starting values: agents/core/population.py.

Members share nothing but the run directory, so roles may run on any machines: a member
publishes its fitness in RUN_DIR/pbt/member_<i>.json (replaced whole), reads the others' there
and copies a donor's checkpoint from the donor's learner directory. Files go through
tf.io.gfile, so a gs:// run directory works. Its learner's hook (agents/core/pbt_hook.py) calls
`Member.start` after the restore and `Member.observe` after each log, and is what the member
acts on; a member's current hyperparameters are also written into its learner directory's
config.json.
"""
import collections
import csv
import io
import json
import os
import time
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np
import tensorflow as tf

from agents.core import learner as learner_lib
from agents.core import logging as run_logging
from agents.core import population
from agents.core import typed_config

# The finished games of a member's window, as the learner drains them (actor, env,
# episode_return, episode_frames) -> its fitness (table G.1's formula: launch/fitness.py).
Fitness = Callable[[Sequence[Mapping]], float]


class LearnerHandle(Protocol):
    """What a member needs of its learner (agents/core/pbt_hook.PopulationHook)."""
    hyperparameters: Mapping[str, tf.Variable]

    def copy_from(self, checkpoint: str) -> int:
        """Loads another learner's checkpoint; returns the frames it had trained."""

    def save_now(self) -> str | None:
        """Checkpoints now; the checkpoint's path (None if it could not be written)."""


class Member:
    """One member of the population, run by its learner's hook (`start`, then `observe` after
    each log). `member_dirs` are the learners' directories, `fitness` the fitness of a window of
    finished games."""

    def __init__(self, config: typed_config.Config, run_dir: str,
                 member_dirs: Sequence[str], member_id: int, fitness: Fitness):
        self._config = config
        self._dirs = list(member_dirs)
        self._id = member_id
        self._fitness = fitness
        self._adapted = population.adapted(config)
        self._window = collections.deque(maxlen=config.pbt_fitness_episodes)
        self._games = 0          # games finished since this learner started
        self._since_step = 0     # ... since its last evolution step
        self._pbt_dir = os.path.join(run_dir, 'pbt')

    def start(self, learner: LearnerHandle, frames: int, step: int) -> None:
        """After the learner restored its checkpoint: logs its (restored) hyperparameters."""
        missing = [name for name in self._adapted if name not in learner.hyperparameters]
        if missing:
            raise ValueError(f'PBT adapts {missing}, which the learning state does not hold as '
                             f'variables (its `hyperparameters`)')
        tf.io.gfile.makedirs(self._pbt_dir)
        resumed = tf.io.gfile.exists(lineage_path(self._pbt_dir, self._id))
        event = 'resume' if resumed else 'start'
        self._record(learner, {'event': event, 'frames': frames, 'step': step})
        self._publish(learner, frames)

    def observe(self, learner: LearnerHandle, frames: int, step: int,
                games: Sequence[Mapping]) -> None:
        """Takes the games finished since the last call; evolves when ready; publishes."""
        self._window.extend(games)
        self._games += len(games)
        self._since_step += len(games)
        if (frames >= self._config.pbt_burn_in_frames
                and self._since_step >= self._config.pbt_fitness_episodes):
            self._evolve(learner, frames, step)
        self._publish(learner, frames)

    def fitness(self) -> float | None:
        """The fitness (table G.1) of the last `pbt_fitness_episodes` games; None until that
        many games were finished since the start or the last copy."""
        if len(self._window) < self._window.maxlen:
            return None
        return float(self._fitness(list(self._window)))

    def _evolve(self, learner: LearnerHandle, frames: int, step: int) -> None:
        """Exploit (copy a better random member) and explore (perturb), appendix F."""
        c = self._config
        fitness = self.fitness()
        rng = np.random.default_rng([c.seed, self._id, frames])
        donor = int(rng.choice([i for i in range(len(self._dirs)) if i != self._id]))
        donor_fitness = read_state(self._pbt_dir, donor).get('fitness')
        row = {'event': 'keep', 'frames': frames, 'step': step, 'fitness': fitness,
               'donor': donor, 'donor_fitness': donor_fitness}
        if donor_fitness is not None and donor_fitness > fitness + c.pbt_copy_threshold:
            row.update(self._copy(learner, donor))
        factors = {}
        for name in self._adapted:
            if rng.random() < c.pbt_perturb_probability:
                factors[name] = float(c.pbt_perturb_factor ** rng.choice([1, -1]))
                variable = learner.hyperparameters[name]
                variable.assign(variable * factors[name])
        row['perturbed'] = ' '.join(f'{name}*{factor:.4g}' for name, factor in factors.items())
        self._since_step = 0
        row['checkpoint'] = learner.save_now() or ''
        self._record(learner, row)
        copied = (f'copied learner_{donor} ({donor_fitness:.3f}) from {row["donor_checkpoint"]}'
                  if row['event'] == 'copy' else f'kept its weights (learner_{donor}: '
                  f'{"no fitness yet" if donor_fitness is None else f"{donor_fitness:.3f}"})')
        print(f'[learner_{self._id}] PBT at frame {frames:,}: fitness {fitness:.3f}, {copied}; '
              f'perturbed: {row["perturbed"] or "none"}', flush=True)

    def _copy(self, learner: LearnerHandle, donor: int) -> dict:
        """Loads `donor`'s newest checkpoint; the lineage fields of the copy ({} if it fails:
        one line, and the member trains on with its own weights)."""
        checkpoint = tf.train.latest_checkpoint(learner_lib.checkpoint_dir(self._dirs[donor]))
        if checkpoint is None:
            return {}
        try:
            donor_frames = learner.copy_from(checkpoint)
        except (tf.errors.OpError, ValueError, AssertionError) as e:
            print(f'[learner_{self._id}] warning: PBT could not copy {checkpoint} '
                  f'({str(e).strip().splitlines()[0] if str(e).strip() else e!r}); it keeps '
                  f'its own weights', flush=True)
            return {}
        self._window.clear()    # its games so far were played by other weights
        return {'event': 'copy', 'donor_checkpoint': checkpoint, 'donor_frames': donor_frames}

    def _values(self, learner: LearnerHandle) -> dict:
        return {name: float(learner.hyperparameters[name].numpy()) for name in self._adapted}

    def _publish(self, learner: LearnerHandle, frames: int) -> None:
        """RUN_DIR/pbt/member_<i>.json: what the others read to compare with this member."""
        state = {'member': self._id, 'frames': frames, 'games': self._games,
                 'fitness': self.fitness(), 'hyperparameters': self._values(learner),
                 'wall_time': time.time()}
        _write(state_path(self._pbt_dir, self._id), json.dumps(state, indent=2))

    def _record(self, learner: LearnerHandle, row: Mapping) -> None:
        """A lineage row, and the member's config.json with its current hyperparameters."""
        values = self._values(learner)
        path = lineage_path(self._pbt_dir, self._id)
        rows = read_lineage(path)
        rows.append({'wall_time': time.time(), 'member': self._id, **row, **values})
        fields = list(LINEAGE_FIELDS) + list(self._adapted)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=fields, extrasaction='ignore')
        writer.writeheader()
        writer.writerows([{k: run_logging.csv_value(v) for k, v in r.items()} for r in rows])
        _write(path, text.getvalue())
        member = self._config.replace(**values)
        _write(os.path.join(self._dirs[self._id], 'config.json'),
               json.dumps(member.to_dict(), indent=2, sort_keys=True))


# The lineage's columns, followed by the adapted hyperparameters' values after the row's step.
# event: start | resume (the learner restored its checkpoint) | copy | keep (no copy).
LINEAGE_FIELDS = ('wall_time', 'member', 'event', 'frames', 'step', 'fitness', 'donor',
                  'donor_fitness', 'donor_frames', 'donor_checkpoint', 'perturbed',
                  'checkpoint')


def member(config: typed_config.Config, run_dir: str, member_dirs: Sequence[str],
           member_id: int, fitness: Fitness | None) -> Member | None:
    """Learner `member_id`'s member of the population; None without PBT. `fitness` comes from
    the launch layer (launch/fitness.py), as the references are paper data, which agents do
    not import."""
    if not population.enabled(config):
        return None
    if fitness is None:
        raise ValueError('population-based training needs the fitness of a window of games: '
                         'make_learner(fitness=launch.fitness.fitness(builder, target))')
    if len(member_dirs) != config.pbt_population:
        raise ValueError(f'a population of {config.pbt_population} needs as many learners, not '
                         f'{len(member_dirs)}: the agent\'s check must run population.check '
                         f'on the run\'s config')
    return Member(config, run_dir, member_dirs, member_id, fitness)


def state_path(pbt_dir: str, member_id: int) -> str:
    return os.path.join(pbt_dir, f'member_{member_id}.json')


def lineage_path(pbt_dir: str, member_id: int) -> str:
    return os.path.join(pbt_dir, f'lineage_{member_id}.csv')


def read_state(pbt_dir: str, member_id: int) -> dict:
    """What member `member_id` last published; {} before it has."""
    path = state_path(pbt_dir, member_id)
    if not tf.io.gfile.exists(path):
        return {}
    with tf.io.gfile.GFile(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:     # not written by a member (files are replaced whole)
        return {}


def read_lineage(path: str) -> list[dict]:
    """The rows of one member's lineage file, as written (strings); [] if there is none."""
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path) as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def ancestry(run_dir: str, member_id: int) -> list[tuple[int, int, int | None]]:
    """Where member `member_id`'s weights come from, oldest first: (member, from frames, to
    frames), each in that member's own frames (to None: up to now). Its curve is each
    ancestor's games in its range, e.g. from its logs/episodes.csv (appendix F: "backtracking
    through the ancestry of copied checkpoints")."""
    pbt_dir = os.path.join(run_dir, 'pbt')
    segments = []
    current, until = member_id, None
    while (current, until) not in [(m, end) for m, _, end in segments]:
        copies = [row for row in read_lineage(lineage_path(pbt_dir, current))
                  if row['event'] == 'copy' and (until is None or int(row['frames']) <= until)]
        if not copies:
            segments.append((current, 0, until))
            break
        last = copies[-1]
        segments.append((current, int(last['frames']), until))
        current, until = int(last['donor']), int(last['donor_frames'])
    return segments[::-1]


def _write(path: str, text: str) -> None:
    """Writes `path` whole: a temporary file renamed over it, so readers never see half."""
    temporary = f'{path}.tmp-{os.getpid()}'
    with tf.io.gfile.GFile(temporary, 'w') as f:
        f.write(text)
    tf.io.gfile.rename(temporary, path, overwrite=True)
