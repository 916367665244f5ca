"""Train Ape-X DPG on one DeepMind Control Suite task from features (Horgan et al., 2018,
sec. 3.2, 4.2, appendix D).

  python -m launch.apex_dpg_control --task=humanoid_walk          # the paper's settings
  python -m launch.apex_dpg_control --task=cartpole_swingup --preset=quick
  python -m launch.apex_dpg_control --task=manipulator_bring_ball --config.num_actors=8

Re-running with the same --run_dir resumes from its last checkpoint. One role per machine:
  --role=replay --replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
  --replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""

from absl import app
from absl import flags

from agents.apex import builder as builder_lib
from agents.apex import config as apex_config
from launch import configs
from launch import program

_TARGET = flags.DEFINE_string('task', None, 'Suite task by name, e.g. manipulator_bring_ball (default: humanoid_walk).')
_CONFIG = program.define_config(apex_config.control_dpg(), '--config.exploration_sigma=0.2')


def main(argv):
    del argv
    program.main(module=__spec__.name, paper_config=apex_config.control_dpg,
                 presets=apex_config.PRESETS, config_flag=_CONFIG,
                 target_flag=_TARGET, target_field='task', run_dir_prefix='apex_dpg',
                 check=configs.check_apex, builder=builder_lib.ApexDPGControlBuilder)


if __name__ == '__main__':
    app.run(main)
