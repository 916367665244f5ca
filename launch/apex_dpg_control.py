"""Train Ape-X DPG on one DeepMind Control Suite task from features (Horgan et al., 2018,
sec. 3.2, 4.2, appendix D).

  python -m launch.apex_dpg_control --task=humanoid_walk          # the paper's settings
  python -m launch.apex_dpg_control --task=cartpole_swingup --preset=quick
  python -m launch.apex_dpg_control --task=manipulator_bring_ball --config.num_actors=8

Re-running with the same --run_dir resumes from its last checkpoint. One role per machine:
  --role=replay --replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
  --replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""
import os
import sys

from absl import app
from absl import flags
from ml_collections import config_flags

from agents.apex import builder as builder_lib
from agents.apex import config as apex_config
from launch import configs
from launch import runtime

_TASK = flags.DEFINE_string('task', None, 'Suite task by name, e.g. manipulator_bring_ball '
                            '(default: humanoid_walk).')
_PRESET = flags.DEFINE_enum('preset', 'paper', list(apex_config.PRESETS),
                            'paper: the paper settings; quick: a demo for a small machine; '
                            'tiny: seconds-long runs for tests.')
_RUN_DIR = flags.DEFINE_string('run_dir', None, 'Run directory (default runs/apex_dpg_<task>).')
_ROLE = flags.DEFINE_enum('role', 'local', runtime.ROLES, 'Which role this process runs.')
_REPLAY_ADDRESS = flags.DEFINE_string('replay_address', None,
                                      'host:port of the replay server (roles other than local).')
_ACTOR_ID = flags.DEFINE_integer('actor_id', 0, 'Index of this actor (--role=actor).')
_REPLAY_WAIT_S = flags.DEFINE_float('replay_wait_s', 60.0,
                                    'How long a role waits for the replay server to answer.')
_CONFIG = config_flags.DEFINE_config_dict('config', apex_config.control_dpg(),
                                          'Overrides of the paper config, e.g. '
                                          '--config.exploration_sigma=0.2.')


def main(argv):
    del argv
    task = _TASK.value or apex_config.control_dpg().task
    run_dir = _RUN_DIR.value or os.path.join('runs', f'apex_dpg_{task}')
    try:
        config = configs.resolve(paper_config=apex_config.control_dpg(),
                                 presets=apex_config.PRESETS, preset=_PRESET.value,
                                 flag_config=_CONFIG.value, argv=sys.argv, run_dir=run_dir)
        if _TASK.value:
            config.task = _TASK.value
        configs.check_apex(config)
        builder = builder_lib.ApexDPGControlBuilder(config)
        runtime.run_role(module=__spec__.name, builder=builder,
                         config=config, run_dir=run_dir, role=_ROLE.value,
                         replay_address=_REPLAY_ADDRESS.value, actor_id=_ACTOR_ID.value,
                         replay_wait_s=_REPLAY_WAIT_S.value)
    except (configs.ConfigError, runtime.LaunchError) as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)


if __name__ == '__main__':
    app.run(main)
