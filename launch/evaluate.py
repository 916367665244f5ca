"""Evaluate a run's checkpoint under a paper's protocol; writes RUN_DIR/evaluation.csv.

  python -m launch.evaluate --run_dir=runs/impala_pong [--protocol=impala_atari_noop]
      [--episodes=200] [--checkpoint=PATH] [--before_frames=N]

Each protocol (paper_tables/protocols.py) fixes the episode count, no-op starts, frame cap and
action set of the table it reproduces; a protocol scored on training episodes (LASER app. C,
A.3) reads the run's logs/episodes.csv instead of playing, per task for a multi-task run. With
several learners (a sweep), evaluate each RUN_DIR/learner_<i>. Rows: game, protocol,
checkpoint_frames, episode, score (raw game score), episode_frames.

Bad input (a protocol that cannot score the run, a flag it would ignore) is refused in one line
before TensorFlow is imported (`check_request`).
"""
import os
import sys

import numpy as np
from absl import app
from absl import flags

from launch import configs
from launch import input_checks
from paper_tables import protocols

EVALUATION_FILE = 'evaluation.csv'


def restore_network(builder, run_dir: str, checkpoint: str | None = None):
    """The run's network at `checkpoint` (default: the latest) and that checkpoint's frames."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    network = builder.network()
    frames = tf.Variable(0, dtype=tf.int64)
    path = checkpoint or tf.train.latest_checkpoint(os.path.join(run_dir, 'checkpoints'))
    if not path:
        raise configs.ConfigError(f'no checkpoint in {run_dir}/checkpoints: train first')
    tf.train.Checkpoint(learner=tf.train.Checkpoint(network=network, frames=frames)
                        ).restore(path).expect_partial()
    return network, int(frames.numpy())


def run_episodes(builder, network, protocol: protocols.EvalProtocol, episodes: int,
                 seed: int, parallel: int = 8, task: str | None = None
                 ) -> list[tuple[float, int]]:
    """(raw score, frames) of `episodes` whole games, up to `parallel` at once; of a
    multi-task builder's `task`.

    Environment k plays episodes k, k + K, ... so that short episodes are not over-counted.
    A recurrent policy carries its state through each episode and resets it at the next; the
    policy runs on every environment each step, those done included, so states stay aligned.
    """
    from agents.core import steps  # pylint: disable=import-outside-toplevel
    policy = builder.evaluation_policy(network)
    count = min(parallel, episodes)
    on_task = {'task': task} if task else {}
    envs = [builder.environments.environment(seed=seed + k, evaluation=protocol, **on_task)
            for k in range(count)]
    quota = [len(range(k, episodes, count)) for k in range(count)]
    inputs = steps.StepInputs([env.reset() for env in envs], builder.step_spec()['action'])
    state = policy.initial_state(count)
    scores = np.zeros(count)
    lengths = np.zeros(count, np.int64)
    results = []
    while any(quota):
        actions, _, state = policy.select_actions(inputs.batch(), state)
        for k in range(count):
            if not quota[k]:
                continue
            action = actions[k]
            if protocol.epsilon and np.random.random() < protocol.epsilon:
                action = np.random.randint(envs[k].num_actions)
            ts = envs[k].step(action)
            scores[k] += ts.reward
            lengths[k] += builder.config.action_repeat
            if ts.last():
                results.append((float(scores[k]), int(lengths[k])))
                scores[k], lengths[k] = 0.0, 0
                quota[k] -= 1
                ts = envs[k].reset()
            inputs.advance(k, action, ts)
    for env in envs:
        env.close()
    return results


def training_games(run_dir: str, before_frames: int) -> list[dict]:
    """The training games logged before `before_frames` (LASER app. C: "the mean of the last
    100 training episodes"), in log order."""
    path = os.path.join(run_dir, 'logs', 'episodes.csv')
    rows = []
    if os.path.exists(path):
        rows = [row for row in _read(path, ('frames', 'episode_return', 'episode_frames',
                                            'actor', 'env'))
                if row['frames'] <= before_frames]
    if not rows:
        raise configs.ConfigError(f'no training episodes before frame {before_frames:,} in '
                                  f'{path}: train first')
    return rows


def evaluate_run(spec: configs.RunSpec, protocol_name: str | None = None,
                 episodes: int | None = None, checkpoint: str | None = None,
                 before_frames: int | None = None) -> list[dict]:
    """Evaluates the run of `spec` and appends one row per episode to RUN_DIR/evaluation.csv:
    episodes played by the checkpoint's policy (a multi-task run's: `episodes` on each task,
    rows named as the paper's tables name the task), or, for a protocol scored on training
    (`from_training`), the last training episodes before `before_frames` (default: the run's
    total frames)."""
    run_dir, config = spec.run_dir, spec.config
    protocol = check_request(spec, protocol_name, episodes, checkpoint, before_frames)
    if episodes is None:
        asked = config.runtime.eval_episodes
        episodes = asked if asked > 0 else protocol.episodes
    if protocol.from_training:
        games = training_games(run_dir, before_frames or config.total_frames)
        results = {game: [(row['episode_return'], row['episode_frames'])
                          for row in rows[-episodes:]]
                   for game, rows in _by_trained_game(spec, games).items()}
        frames = games[-1]['frames']
        print(f'[evaluate] {", ".join(results)}: the last {episodes} training episodes before '
              f'{frames:,} frames, protocol {protocol.name}', flush=True)
        return _write_rows(run_dir, protocol, frames, results)
    builder = spec.experiment.builder(config)
    network, frames = restore_network(builder, run_dir, checkpoint)
    tasks = builder.environments.tasks()
    if tasks:
        _print_training_by_task(run_dir, builder)
    results = {}
    for i, task in enumerate(tasks or [None]):
        game = builder.environments.reported_task(task) if task else spec.target
        print(f'[evaluate] {game}: {episodes} episodes, protocol {protocol.name}, '
              f'checkpoint at {frames:,} frames', flush=True)
        results[game] = run_episodes(builder, network, protocol, episodes,
                                     seed=10_000_019 + frames + 1_000 * i, task=task)
    return _write_rows(run_dir, protocol, frames, results)


def check_request(spec: configs.RunSpec, protocol_name: str | None, episodes: int | None,
                  checkpoint: str | None, before_frames: int | None) -> protocols.EvalProtocol:
    """The protocol that scores the run of `spec`; one line for a request the evaluation
    cannot carry out or would ignore, before TensorFlow is imported."""
    flag = '--protocol' if protocol_name else '--config.eval_protocol'
    protocol = input_checks.protocol(spec.experiment, spec.config,
                                     protocol_name or spec.config.runtime.eval_protocol, flag)
    for name, value in (('episodes', episodes), ('before_frames', before_frames)):
        if value is not None and value < 1:
            raise configs.ConfigError(f'--{name} must be >= 1, got {value}')
    ignored = ('--before_frames', before_frames) if not protocol.from_training else (
        '--checkpoint', checkpoint)
    if ignored[1] is not None:
        scored = ('training episodes (logs/episodes.csv)' if protocol.from_training else
                  'a checkpoint\'s play')
        raise configs.ConfigError(f'{ignored[0]} is not read by protocol {protocol.name}, '
                                  f'which scores {scored}: leave it out')
    if checkpoint is not None and not os.path.exists(f'{checkpoint}.index'):
        raise configs.ConfigError(f'--checkpoint={checkpoint}: no such checkpoint (give the '
                                  f'path without .index, e.g. {spec.run_dir}/checkpoints/ckpt-N), '
                                  f'or leave it out for the latest')
    return protocol


def _by_trained_game(spec: configs.RunSpec, games: list[dict]) -> dict[str, list[dict]]:
    """Training games by what they were played on: the run's target, or one task of a
    multi-task builder as the paper's tables name it (its environment's: builders.game_task;
    a run of one level keeps the level's own name)."""
    builder = spec.experiment.builder(spec.config)
    tasks = builder.environments.tasks()
    if len(tasks) < 2:
        return {tasks[0] if tasks else spec.target: games}
    from agents.core import builders  # pylint: disable=import-outside-toplevel
    grouped = {}
    for game in games:
        grouped.setdefault(builders.game_task(builder, game), []).append(game)
    return grouped


def _write_rows(run_dir: str, protocol, frames: int,
                results: dict[str, list[tuple[float, int]]]) -> list[dict]:
    """Appends {game: [(score, frames)]} to RUN_DIR/evaluation.csv; prints each game's mean."""
    from agents.core import logging as run_logging  # pylint: disable=import-outside-toplevel
    log = run_logging.CsvLogger(os.path.join(run_dir, EVALUATION_FILE))
    rows = []
    for game, episodes in results.items():
        for episode, (score, length) in enumerate(episodes):
            row = {'game': game, 'protocol': protocol.name, 'checkpoint_frames': frames,
                   'episode': episode, 'score': score, 'episode_frames': length}
            log.write(row)
            rows.append(row)
        scores = [score for score, _ in episodes]
        name = f'{game}: ' if len(results) > 1 else ''
        print(f'[evaluate] {name}mean score {np.mean(scores):.1f} (min {min(scores):.0f}, '
              f'max {max(scores):.0f}) over {len(scores)} episodes', flush=True)
    return rows


def _read(path: str, columns) -> list[dict]:
    """The rows of a CSV log, read by column name; one line naming a missing column."""
    from paper_tables import runs  # pylint: disable=import-outside-toplevel
    try:
        return runs.read_csv(path, columns)
    except ValueError as e:
        raise configs.ConfigError(str(e)) from None


def _print_training_by_task(run_dir: str, builder) -> None:
    """A multi-task run's training games per task, from logs/episodes.csv (each game's task
    is its environment's: agents/core/builders.game_task)."""
    # pylint: disable=import-outside-toplevel  (TensorFlow: once the input is good)
    from agents.core import builders
    from agents.core import logging as run_logging
    path = os.path.join(run_dir, 'logs', 'episodes.csv')
    if not os.path.exists(path):
        return
    games = _read(path, ('actor', 'env', 'episode_return'))
    by_task = run_logging.returns_by_task(games, lambda game: builders.game_task(builder, game))
    print(f'[evaluate] training games per task ({len(by_task)} of '
          f'{len(builder.environments.tasks())} tasks finished games):\n'
          f'{run_logging.task_returns_table(by_task)}', flush=True)


def evaluate_and_report(run_dir: str, learners: list[configs.RunSpec]) -> None:
    """End of training: evaluate every learner's last checkpoint (`learners`: each one's
    spec, as the launcher holds them); print the table against the paper for the run, or for a
    run of several learners (a sweep) each member's score and the table for the best (LASER
    app. A.3: "the best performing agent instance within each sweep")."""
    # pylint: disable=import-outside-toplevel  (TensorFlow's and the tables': after training)
    from paper_tables import catalog
    from paper_tables import compare
    from paper_tables import runs
    table = no_table = None
    try:
        table = catalog.default_table(learners[0].experiment.name)
    except ValueError as e:
        no_table = e
    scores = {}
    for spec in learners:
        try:
            scores[spec.run_dir] = _member_score(evaluate_run(spec), table)
        except configs.ConfigError as e:   # e.g. a member that finished no episode
            print(f'[evaluate] {spec.run_dir}: {e}', flush=True)
    if not scores:
        return
    if len(learners) > 1:
        print(runs.members_table(run_dir), flush=True)
    if table is None:
        print(f'[evaluate] no comparison with the paper: {no_table}', flush=True)
        return
    try:
        compare.main_report([max(scores, key=scores.get)], *table)
    except ValueError as e:
        print(f'[evaluate] no comparison with the paper: {e}', flush=True)


def _member_score(rows: list[dict], table: tuple[str, str] | None) -> float:
    """What picks the best learner: its mean score on its one game, or over the several tasks
    of the paper's `table` the mean capped human-normalised score (IMPALA appendix B; PBT's
    fitness, appendix F)."""
    from paper_tables import catalog  # pylint: disable=import-outside-toplevel
    from paper_tables import scores  # pylint: disable=import-outside-toplevel
    by_game = {}
    for row in rows:
        by_game.setdefault(row['game'], []).append(row['score'])
    if len(by_game) == 1 or table is None:
        return float(np.mean([row['score'] for row in rows]))
    return scores.mean_capped_human_normalised(catalog.get_table(*table).suite, by_game)


def main(argv):
    del argv   # positional arguments: refused by input_checks.command_line
    f = flags.FLAGS
    try:
        input_checks.command_line(sys.argv, role='local', launcher='local')
        evaluate_run(configs.load(f.run_dir), f.protocol, f.episodes, f.checkpoint,
                     f.before_frames)
    except configs.ConfigError as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)


if __name__ == '__main__':
    # Defined here, not at import: launchers import this module and own their own flags.
    flags.DEFINE_string('run_dir', None, 'Run directory to evaluate.', required=True)
    flags.DEFINE_string('protocol', None, "Protocol name (default: the config's).")
    flags.DEFINE_integer('episodes', None, "Episodes (default: the protocol's).")
    flags.DEFINE_string('checkpoint', None, 'Checkpoint path (default: latest).')
    flags.DEFINE_integer('before_frames', None,
                         'Protocols scored on training episodes: the episodes before this '
                         "frame (default: the run's total frames).")
    app.run(main)
