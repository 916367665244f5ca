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

from launch import program

_TARGET = flags.DEFINE_string(
    'task', None, 'Suite task by name, e.g. manipulator_bring_ball (default: humanoid_walk).')
_CONFIG = program.define_config('apex_dpg_control', '--config.exploration_sigma=0.2')


def main(argv):
    del argv
    program.main(module=__spec__.name, experiment='apex_dpg_control', config_flag=_CONFIG,
                 target_flag=_TARGET)


if __name__ == '__main__':
    app.run(main)
