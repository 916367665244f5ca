"""A long run carried across machines in its results row's folder (issue 58).

A row trained over several sittings keeps, in results/<row>/run/seed_<seed>/, what its next
sitting needs to resume on a fresh machine: the run's config.json and sittings.jsonl, its
learner's newest checkpoint, and its logs (csv files; TensorBoard events and process logs
are left out). `carry_out` refreshes that copy from a run directory (during training and at
its end); `carry_in` restores a run directory from it when the directory holds no run yet.
A queue-fed agent (IMPALA) resumes from its learner's checkpoint alone: its actors restart.
"""
import os
import shutil

CARRIED = 'run'
_CHECKPOINTS = 'checkpoints'
_KEPT_LOGS = ('.csv',)


def carried_dir(folder: str, seed: int) -> str:
    """Where the row's folder keeps seed `seed`'s run."""
    return os.path.join(folder, CARRIED, f'seed_{seed}')


def carry_in(carried: str, run_dir: str) -> bool:
    """Copies the carried run into `run_dir` if that holds no run (no config.json) and there
    is one; whether it did."""
    if os.path.exists(os.path.join(run_dir, 'config.json')) or not os.path.isdir(carried):
        return False
    shutil.copytree(carried, run_dir, dirs_exist_ok=True)
    return True


def carry_out(run_dir: str, carried: str) -> None:
    """Replaces the carried copy with `run_dir`'s config, sittings, csv logs and newest
    checkpoint (none yet: no checkpoint is carried)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    staging = carried + '.new'
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(os.path.join(staging, 'logs'))
    for name in ('config.json', 'sittings.jsonl'):
        if os.path.exists(os.path.join(run_dir, name)):
            shutil.copyfile(os.path.join(run_dir, name), os.path.join(staging, name))
    logs = os.path.join(run_dir, 'logs')
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else ():
        if name.endswith(_KEPT_LOGS):
            shutil.copyfile(os.path.join(logs, name), os.path.join(staging, 'logs', name))
    state = tf.train.get_checkpoint_state(os.path.join(run_dir, _CHECKPOINTS))
    if state:
        newest = state.model_checkpoint_path
        directory = os.path.join(staging, _CHECKPOINTS)
        os.makedirs(directory)
        prefix = os.path.basename(newest)
        for name in os.listdir(os.path.dirname(newest)):
            if name.startswith(prefix + '.'):
                shutil.copyfile(os.path.join(os.path.dirname(newest), name),
                                os.path.join(directory, name))
        # TF's state file, naming the one checkpoint with its time (the manager's bookkeeping).
        times = dict(zip(state.all_model_checkpoint_paths, state.all_model_checkpoint_timestamps))
        with open(os.path.join(directory, 'checkpoint'), 'w') as f:
            f.write(f'model_checkpoint_path: "{prefix}"\nall_model_checkpoint_paths: "{prefix}"\n'
                    f'all_model_checkpoint_timestamps: {times.get(newest, 0.0)}\n')
    shutil.rmtree(carried, ignore_errors=True)
    os.replace(staging, carried)
