"""Train Ape-X DPG on one DeepMind Control Suite task from features (Horgan et al., 2018,
sec. 3.2, 4.2, appendix D).

  python -m launch.apex_dpg_control --task=humanoid_walk          # the paper's settings
  python -m launch.apex_dpg_control --task=cartpole_swingup --preset=quick
  python -m launch.apex_dpg_control --task=manipulator_bring_ball --config.num_actors=8
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='apex_dpg_control', target='task',
                target_help='Suite task by name, e.g. manipulator_bring_ball '
                            '(default: humanoid_walk).',
                example='--config.exploration_sigma=0.2')
