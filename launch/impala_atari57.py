"""Train the multi-task IMPALA agent on Atari-57 (sec. 5.3.2, appendix G): one deep network for
all 57 games on the full 18-action set, each game played by a fixed number of environments.

  python -m launch.impala_atari57                                  # the paper: PBT of 24
  python -m launch.impala_atari57 --preset=quick                   # one learner, small machine
  python -m launch.impala_atari57 --tasks=pong,breakout,boxing --preset=tiny   # 3 games

--tasks is 'atari57' or games joined by commas (any paper spelling). Environment g of each
learner's actors (g = actor_id x envs_per_actor + env) plays game g mod N, so
--config.num_actors x --config.envs_per_actor must be a multiple of the number of games. At the
end every game is evaluated (table C.1's protocol on the full action set) and the run is set
against the multi-task column of table C.1 and table 4's summary.
"""

from launch import program

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment='impala_atari57', target='tasks',
                target_help="'atari57' (default) or games joined by commas.",
                example='--config.envs_per_actor=2')
