"""Shared pytest setup: quiet TensorFlow logs and run it on CPU unless a GPU is wanted; the
slowest files first, so that two workers (`make test`) end together."""
import os

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

# The files of end-to-end runs, slowest first (seconds on 2026-12-07, 2 workers): handed out
# longest first, a worker's last files are short ones, not a 2-minute launch started while the
# other worker sits idle. The rest follow in collection order.
SLOWEST_FIRST = (
    'test_launch.py',                    # 140
    'test_apex_launch.py',               # 127
    'test_ray_launcher.py',              # 121
    'test_laser.py',                     # 121
    'test_reactor_launch.py',            # 106
    'test_run_account.py',               # 72
    'test_laser_state_correction.py',    # 70
    'test_several_learners.py',          # 68
    'test_laser_dmlab30.py',             # 66
    'test_new_agent_guide.py',           # 65
    'test_bad_input.py',                 # 62
    'test_off_policy_corrections.py',    # 57
    'test_nonfinite.py',                 # 56
    'test_checkpoint_faults.py',         # 55
    'test_multitask.py',                 # 50
    'test_precision.py',                 # 44
    'test_replay_faults.py',             # 42
    'test_crash_loop.py',                # 39
    'test_pbt.py',                       # 34
)


def pytest_collection_modifyitems(items):
    """Orders the files as `SLOWEST_FIRST` says (a stable sort keeps each file's own order);
    `make test` passes `--no-loadscope-reorder`, so that pytest-xdist hands the files out in
    this order rather than by their number of tests."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
