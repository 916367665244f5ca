"""Train Ape-X DPG on one DeepMind Control Suite task from features (Horgan et al., 2018,
sec. 3.2, 4.2, appendix D).

  python -m launch.apex_dpg_control --task=humanoid_walk          # the paper's settings
  python -m launch.apex_dpg_control --task=cartpole_swingup --preset=quick
  python -m launch.apex_dpg_control --task=manipulator_bring_ball --config.num_actors=8

Re-running with the same --run_dir resumes from its last checkpoint. One role per machine:
  --role=replay --replay_address=:PORT, then --role=learner / --role=actor --actor_id=N
  --replay_address=HOST:PORT elsewhere, all with the same --run_dir on a shared file system.
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='apex_dpg_control', target='task',
                target_help='Suite task by name, e.g. manipulator_bring_ball '
                            '(default: humanoid_walk).',
                example='--config.exploration_sigma=0.2')
