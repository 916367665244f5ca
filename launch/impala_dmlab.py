"""Train IMPALA on one DeepMind Lab level: the single-task agents of IMPALA sec. 5.2 (figure 4,
tables 1 and 2), figure 3's shallow network with its LSTM core.

  python -m launch.impala_dmlab --level=rooms_watermaze           # the paper's settings
  python -m launch.impala_dmlab --level=seekavoid_arena_01 --preset=quick   # small machine
  python -m launch.impala_dmlab --level=explore_goal_locations_small --config.learning_rate=1e-3

Needs DeepMind Lab's Python module, built from github.com/deepmind/lab (no wheel exists; a
missing module is one line saying how to build it). --level is any DMLab-30 level or the
classic seekavoid_arena_01, in any paper spelling; table 2's five are rooms_watermaze,
rooms_keys_doors_puzzle, lasertag_three_opponents_small, explore_goal_locations_small and
seekavoid_arena_01. The paper reports these runs as training returns ("average final return",
table 2), so a run is scored on its last training games; launch/impala_correction_study.py
--level=LEVEL runs table 2's grid of off-policy corrections and sets it beside the paper.
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='impala_dmlab', target='level',
                target_help='DeepMind Lab level, any paper spelling '
                            '(default: seekavoid_arena_01).',
                example='--config.entropy_cost=1e-3')
