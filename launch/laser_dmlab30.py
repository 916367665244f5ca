"""Train LASER on DMLab-30 (Schmitt et al., 2019, sec. 5.1, 5.3, 5.4; figures 2-3; table 1):
trust-region V-trace with 87.5% replay per batch, one agent on all 30 levels, a sweep of agents
sharing one replay, or a sweep with population-based training.

  python -m launch.laser_dmlab30                                 # one agent, paper settings
  python -m launch.laser_dmlab30 --sweep=paper                   # sec. 5.1's 10-agent sweep
  python -m launch.laser_dmlab30 --config.pbt_population=10      # figure 3 (right): with PBT
  python -m launch.laser_dmlab30 --preset=quick --sweep=quick    # 2 agents, small machine
  python -m launch.laser_dmlab30 --sweep=paper --config.trust_region=false
                                                                 # fig. 3 (left): naive sharing

Needs DeepMind Lab's Python module, built from github.com/deepmind/lab (no wheel exists; a
missing module is one line saying how to build it). --tasks is 'dmlab30' or levels joined by
commas, trained on their _train variants. A sweep's members are drawn from IMPALA table D.1
(sec. 5.1); each is a learner with its own actors, checkpoints and logs (RUN_DIR/learner_<i>),
all on one replay table. The run ends scored on each level's last training games (app. A.3),
its best member set beside LASER table 1's DMLab-30 median and mean capped scores.
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='laser_dmlab30', target='tasks',
                target_help="'dmlab30' (default) or levels joined by commas.",
                example='--config.trust_region_threshold=0.5')
