"""Train the multi-task IMPALA agent on DMLab-30 (sec. 5.3.1; appendices B, D, F): figure 3's
network with its LSTM and instruction encoder on all 30 levels, 'IMPALA, deep, PBT' of table 3.

  python -m launch.impala_dmlab30                                  # the paper: PBT of 24
  python -m launch.impala_dmlab30 --config.torso=shallow --config.num_actors=210
  python -m launch.impala_dmlab30 --preset=quick                   # one learner, small machine

Needs DeepMind Lab's Python module, built from github.com/deepmind/lab (no wheel exists; a
missing module is one line saying how to build it). --tasks is 'dmlab30' or levels joined by
commas; levels train on their _train variants and are evaluated on their _test variants (500
episodes each, table 3), and the run's mean capped human-normalised score is set against
appendix B per level and in total.
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='impala_dmlab30', target='tasks',
                target_help="'dmlab30' (default) or levels joined by commas.",
                example='--config.dataset_path=/data/brady_konkle')
