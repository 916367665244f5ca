"""Bad input everywhere: every experiment program, `launch.evaluate`, `paper_tables.compare` and
the benchmarks' documented flags exit non-zero with one line saying what is wrong (absl's own
flag errors: two), no traceback, and nothing written to the run directory; and the inputs kept
as they are (`GOOD`: they do what they say) pass the same checks. One table; the cases run two
at a time."""
import concurrent.futures
import importlib.util
import math
import os
import subprocess
import sys

import pytest

from agents.core import config_checks
from agents.core import typed_config
from agents.core.config_checks import ConfigError
from agents.impala import config as impala_config
from benchmarks import results_table
from launch import input_checks
from launch import processor
from launch_processes import ENV
from launch_processes import ROOT

_BLOCKER = 'a_file'                 # a file where a run directory should be
_CORRUPT = 'corrupt_run'            # a run directory whose config.json is cut short
# Run directories of other experiments and tasks: {name: its config.json}.
_SAVED = {'laser_run': '{"experiment": "laser_atari", "game": "pong"}',
          'impala_run': '{"experiment": "impala_atari", "game": "pong"}',
          'atari57_run': '{"experiment": "impala_atari57", "tasks": "pong,breakout", '
                         '"num_actors": 1, "envs_per_actor": 2}',
          'text_laser': '{"experiment": "laser_atari", "game": "pong"}',
          'text_eval': '{"experiment": "impala_atari", "game": "pong"}',
          'text_curve': '{"experiment": "impala_atari", "game": "pong"}',
          'float_run': '{"experiment": "impala_atari", "game": "pong", "total_frames": 2e7}',
          'bool_run': '{"experiment": "laser_atari", "game": "pong", "learning_rate": true}',
          'bfloat16_run': '{"experiment": "impala_atari", "game": "pong", '
                          '"precision": "bfloat16"}'}
_EVALUATION = 'game,protocol,checkpoint_frames,episode,score\n'
# The runs' logs: {path: text}; the text_ runs' hold a cell that is not a number.
_LOGS = {'laser_run/logs/episodes.csv': 'frames,actor,return\n100,0,1.0\n',
         'impala_run/evaluation.csv': _EVALUATION + 'pong,impala_atari_noop,100,0,-21\n',
         'text_laser/logs/episodes.csv': 'frames,actor,env,episode_return,episode_frames\n'
                                         '100,0,0,1.0,50\n200,0,1,n/a,50\n',
         'text_eval/evaluation.csv': _EVALUATION + 'pong,impala_atari_noop,1e2.5,0,-21\n',
         'text_curve/evaluation.csv': _EVALUATION + 'pong,impala_atari_noop,100,0,-21\n',
         'text_curve/logs/episodes.csv': 'frames,episode_return\n-40,1.0\n',
         'results/README.md': f'{results_table.BEGIN}\n{results_table.END}\n'}
# The third element of a case kept as it is: checked with DISTRL_CHECK_ONLY set, it is good.
GOOD = 'the input is good'

# (program, arguments, the start of the one error line). RUN is the case's run directory,
# TMP the case's temporary directory.
CASES = [
    # Unknown names, with near matches.
    ('launch.impala_atari', ['--game=pongg'], "error: unknown Atari game 'pongg'; did you mean: "
     'pong'),
    ('launch.apex_dpg_control', ['--task=cartpole_swingupp'],
     "error: unknown dm_control task 'cartpole_swingupp'"),
    ('launch.reactor_atari', ['--game=breakot'], "error: unknown Atari game 'breakot'"),
    ('launch.impala_dmlab', ['--level=rooms_watermase'],
     "error: --level: unknown DeepMind Lab level 'rooms_watermase'; did you mean: "
     'rooms_watermaze?'),
    ('launch.laser_dmlab30', ['--tasks=rooms_watermase', '--sweep=paper'],
     "error: --tasks: unknown DMLab-30 level 'rooms_watermase'; did you mean: rooms_watermaze?"),
    ('launch.impala_atari', ['--preset=huge'], "error: unknown --preset='huge'; choose one of: "
     'paper, quick, tiny'),
    ('launch.laser_atari', ['--sweep=large'], "error: unknown sweep 'large': name one of paper, "
     'quick'),
    ('launch.laser_atari', ['--sweep=learning_rte=1e-4,2e-4'],
     "error: sweep 'learning_rte=1e-4,2e-4' names 'learning_rte', which is not a field a sweep "
     'can vary (did you mean: learning_rate?'),
    ('launch.impala_atari', ['--sweep=paper'], 'error: --sweep: impala_atari runs no sweeps'),
    ('launch.apex_dqn_atari', ['--config.sweep=learning_rate=1e-4,2e-4'],
     'error: --sweep: apex_dqn_atari runs no sweeps'),
    ('launch.reactor_atari', ['--config.pbt_population=2'],
     'error: --config.pbt_population=2: reactor_atari has no population-based training'),
    ('launch.laser_atari', ['--config.pbt_population=2'],
     'error: --config.pbt_population=2: laser_atari has no population-based training'),
    # Unknown config fields.
    ('launch.apex_dqn_atari', ['--config.core=lstm'],
     "error: --config.core: apex_dqn_atari has no field 'core'"),
    ('launch.impala_atari', ['--config.replay_proportio=0.5'],
     "error: --config.replay_proportio: impala_atari has no field 'replay_proportio'; did you "
     'mean: replay_proportion?'),
    # Values out of range, of the wrong type, NaN.
    ('launch.impala_atari', ['--config.batch_size=0'],
     'error: --config.batch_size must be >= 1, got 0'),
    ('launch.impala_atari', ['--config.discount=1.5'],
     'error: --config.discount must be in [0, 1], got 1.5'),
    ('launch.impala_atari', ['--config.torso=huge'],
     "error: --config.torso must be one of 'shallow', 'deep'"),
    ('launch.laser_atari', ['--config.rmsprop_form=adam'],
     "error: --config.rmsprop_form must be one of 'tf1', 'pytorch'"),
    ('launch.impala_atari', ['--config.learning_rate=nan'],
     'error: --config.learning_rate must be > 0, got nan'),
    ('launch.impala_atari', ['--config.entropy_cost=nan'],
     'error: --config.entropy_cost must be >= 0, got nan'),
    ('launch.impala_atari', ['--config.learning_rate=abc'],
     'error: --config.learning_rate=abc is not a number'),
    ('launch.impala_atari', ['--config.total_frames=1.5e3'],
     'error: --config.total_frames=1.5e3 is not an integer'),
    ('launch.laser_atari', ['--config.trust_region=maybe'],
     'error: --config.trust_region=maybe is not true or false'),
    ('launch.impala_atari', ['--config.replay_proportion=0.1', '--config.batch_size=4'],
     'error: --config.replay_proportion=0.1 of --config.batch_size=4 is 0.4 trajectories'),
    ('launch.impala_atari', ['--config.replay_proportion=1.0'],
     'error: --config.replay_proportion must be in [0, 1)'),
    ('launch.impala_atari', ['--config.num_learners=0'],
     'error: --config.num_learners must be >= 1, got 0'),
    ('launch.apex_dqn_atari', ['--config.n_step=0'], 'error: --config.n_step must be >= 1, got 0'),
    ('launch.laser_atari', ['--config.trust_region_threshold=-0.1'],
     'error: --config.trust_region_threshold must be > 0, got -0.1'),
    ('launch.laser_atari', ['--config.replay_capacity_observations=5'],
     'error: --config.replay_capacity_observations=5 holds 1 trajectories, fewer than one '
     'replay batch (2)'),
    ('launch.laser_atari', ['--sweep=learning_rate=fast'],
     "error: sweep value 'fast' for 'learning_rate' is not a"),
    ('launch.reactor_atari', ['--config.v_max=-20'],
     'error: --config.v_min must be below --config.v_max, got v_min=-10.0, v_max=-20.0'),
    ('launch.reactor_atari', ['--config.num_atoms=1'],
     'error: --config.num_atoms must be >= 2, got 1'),
    ('launch.reactor_atari', ['--config.sequence_length=1'],
     'error: --config.sequence_length must be >= 2, got 1'),
    ('launch.reactor_atari', ['--config.replay_epsilon=1.5'],
     'error: --config.replay_epsilon must be in [0, 1], got 1.5'),
    # Roles, addresses, run directories.
    ('launch.impala_atari', ['--role=actor'],
     'error: --role=actor needs --replay_address=host:port'),
    ('launch.impala_atari', ['--role=actor', '--replay_address=nohost'],
     'error: --replay_address=nohost is not host:port'),
    ('launch.impala_atari', ['--role=learner', '--replay_address=localhost:1',
                             '--replay_wait_s=1'],
     'error: no replay server answers at localhost:1'),
    ('launch.impala_atari', ['--role=learner', '--learner_id=2', '--config.num_learners=2',
                             '--replay_address=localhost:1'],
     'error: --learner_id=2 is out of range: this run has --config.num_learners=2'),
    ('launch.impala_atari', ['--role=actor', '--actor_id=1', '--replay_address=localhost:1'],
     'error: --actor_id=1 is out of range'),
    ('launch.impala_atari', ['--role=bogus'],
     'FATAL Flags parsing error: flag --role=bogus: value should be one of'),
    ('launch.impala_atari', ['--launcher=cloud'],
     'FATAL Flags parsing error: flag --launcher=cloud: value should be one of'),
    ('launch.impala_atari', ['--launcher=ray', '--ray_address=localhost:1'],
     'error: no Ray cluster answers at --ray_address=localhost:1: start one with `ray start'),
    ('launch.apex_dqn_atari', ['--launcher=ray', '--ray_cpus=gpu=1'],
     "error: --ray_cpus names 'gpu'; the roles are replay, learner and actor"),
    ('launch.reactor_atari', ['--launcher=ray', '--ray_cpus=actor=0'],
     "error: --ray_cpus: 'actor=0' is not a positive number of CPUs"),
    ('launch.impala_atari', ['--run_dir=TMP/a_file/run'],
     'error: cannot write to TMP/a_file/run: Not a directory; choose a writable --run_dir'),
    ('launch.impala_atari', ['--run_dir=TMP/corrupt_run'],
     'error: TMP/corrupt_run/config.json is not a run config (Expecting value'),
    # A saved config edited by hand: a field of another type than its paper value's.
    ('launch.impala_atari', ['--run_dir=TMP/float_run'],
     'error: TMP/float_run/config.json: "total_frames": 20000000.0 is not an integer: write '
     '20000000'),
    ('launch.laser_atari', ['--run_dir=TMP/bool_run'],
     'error: TMP/bool_run/config.json: "learning_rate": true is not a number: repair it'),
    # Input a program would drop or reinterpret (issue 24): positional arguments (an unquoted
    # space), empty values, sweeps that are not exactly what was typed, flags a role ignores,
    # another experiment's fields or run directory.
    ('launch.impala_atari', ['breakout'], "error: unexpected argument 'breakout': every input "
     'is a --flag=value'),
    ('launch.laser_atari', ['--sweep=learning_rate=3e-4,', '6e-4'],
     "error: unexpected argument '6e-4'"),
    ('launch.impala_correction_study', ['--corrections', 'vtrace', 'one_step_is'],
     "error: unexpected argument 'one_step_is'"),
    ('launch.impala_atari', ['--game='], 'error: --game= is empty: give it a value, or leave '
     'it out'),
    ('launch.impala_atari57', ['--tasks='], 'error: --tasks= is empty'),
    ('launch.impala_atari', ['--config.eval_protocol='],
     "error: --config.eval_protocol= is empty (the paper: 'impala_atari_noop')"),
    ('launch.laser_atari', ['--sweep=learning_rate=3e-4,'],
     "error: sweep 'learning_rate=3e-4,': 'learning_rate=3e-4,' is not field=v1,v2"),
    ('launch.laser_atari', ['--sweep=learning_rate=3e-4;learning_rate=6e-4'],
     "error: sweep 'learning_rate=3e-4;learning_rate=6e-4' names 'learning_rate' twice"),
    ('launch.laser_atari', ['--sweep=seed=1,1'], "error: sweep 'seed=1,1' repeats a value"),
    ('launch.laser_atari', ['--sweep=seed=1.5,2'],
     "error: sweep value '1.5' for 'seed' is not an integer"),
    ('launch.impala_atari', ['--replay_address=localhost:9000'],
     'error: --replay_address is not read by --role=local'),
    ('launch.impala_atari', ['--role=replay', '--replay_address=:1', '--actor_id=3'],
     'error: --actor_id is not read by --role=replay'),
    ('launch.apex_dqn_atari', ['--ray_cpus=actor=1'],
     'error: --ray_cpus is read by --launcher=ray only'),
    ('launch.impala_atari', ['--role=learner', '--replay_address=host:99999'],
     'error: --replay_address=host:99999: port 99999 is not in 1-65535'),
    ('launch.impala_atari', ['--role=learner', '--replay_address=:9000'],
     'error: --replay_address=:9000 is not host:port'),
    ('launch.impala_atari', ['--config.experiment=laser_atari'],
     'error: --config.experiment: this program runs impala_atari; run launch.laser_atari'),
    ('launch.impala_atari', ['--run_dir=TMP/laser_run'],
     'error: TMP/laser_run holds a run of laser_atari, not of impala_atari: resume it with '
     'launch.laser_atari'),
    ('launch.impala_atari57', ['--run_dir=TMP/atari57_run', '--tasks=pong,boxing'],
     'error: --config.tasks=pong,boxing cannot change when resuming'),
    # Values that cannot work: outside a field's declared range (every numeric field declares
    # one), sizes against each other, a protocol that does not exist.
    ('launch.impala_atari', ['--config.clip_rho_threshold=-1'],
     'error: --config.clip_rho_threshold must be > 0, got -1.0 (a truncation of the importance '
     'weights)'),
    ('launch.apex_dqn_atari', ['--config.n_step=-3'], 'error: --config.n_step must be >= 1'),
    ('launch.reactor_atari', ['--config.checkpoint_interval_s=-5'],
     'error: --config.checkpoint_interval_s must be >= 0, got -5.0 (seconds; 0: at every '
     'update)'),
    ('launch.laser_atari', ['--sweep=learning_rate=-3e-4,6e-4'],
     'error: member 0 of the sweep (learning_rate=-0.0003): --config.learning_rate must be > 0'),
    ('launch.impala_atari', ['--config.total_frames=10'],
     'error: --config.total_frames=10 ends before the first update (one batch of 2 unrolls x '
     '5 steps x action_repeat 4 = 40 frames)'),
    ('launch.apex_dqn_atari', ['--config.total_frames=100'],
     'error: --config.total_frames=100 ends before the first update'),
    ('launch.reactor_atari', ['--config.batch_size=500'],
     'error: --config.batch_size=500 is more than --config.replay_capacity=400 holds'),
    ('launch.apex_dpg_control', ['--config.batch_size=5000'],
     'error: --config.batch_size=5000 is more than --config.replay_capacity=2000 holds'),
    # Declared ranges and relations (agents/core/config_checks.py): upper bounds, fields whose
    # paper value is negative, fields against each other, on every member of a sweep.
    # The Atari section's (agents/core/environment_config.py), for every Atari agent.
    ('launch.impala_atari', ['--config.max_pool_frames=5'],
     'error: --config.max_pool_frames must be in [1, action_repeat=4], got 5'),
    ('launch.apex_dqn_atari', ['--config.action_set=all'],
     "error: --config.action_set must be one of 'minimal', 'full', got 'all'"),
    ('launch.reactor_atari', ['--config.frame_stack=0'],
     'error: --config.frame_stack must be >= 1, got 0 (frames)'),
    ('launch.laser_atari', ['--config.screen_size=0'],
     'error: --config.screen_size must be >= 1, got 0 (a size)'),
    ('launch.impala_atari', ['--config.noop_max=-1'],
     'error: --config.noop_max must be >= 0, got -1 (most no-ops at a reset; 0: none)'),
    ('launch.laser_atari', ['--preset=quick', '--config.total_frames=10000000'],
     'error: --config.total_frames=10000000 runs past --config.anneal_frames=5000000, where the '
     'learning rate reaches 0'),
    ('launch.impala_atari', ['--config.vtrace_lambda=1.5'],
     'error: --config.vtrace_lambda must be in [0, 1], got 1.5 (a trace coefficient)'),
    ('launch.apex_dqn_atari', ['--config.epsilon=1.2'],
     'error: --config.epsilon must be in [0, 1], got 1.2'),
    ('launch.impala_atari57', ['--config.pbt_perturb_probability=2'],
     'error: --config.pbt_perturb_probability must be in [0, 1], got 2.0'),
    ('launch.reactor_atari', ['--config.policy_epsilon=0'],
     'error: --config.policy_epsilon must be in (0, 1], got 0.0'),
    ('launch.apex_dpg_control', ['--config.eviction_exponent=0.5'],
     'error: --config.eviction_exponent must be <= 0, got 0.5'),
    ('launch.reactor_atari', ['--config.v_min=nan'],
     'error: --config.v_min must be a finite number, got nan'),
    # Infinities: every declared range is finite, and every numeric field declares one.
    ('launch.apex_dqn_atari', ['--config.samples_per_insert=inf'],
     'error: --config.samples_per_insert must be a finite number >= 0, got inf'),
    ('launch.impala_atari', ['--config.clip_rho_threshold=inf'],
     'error: --config.clip_rho_threshold must be a finite number > 0, got inf'),
    ('launch.reactor_atari', ['--config.sequence_period=40'],
     'error: --config.sequence_period must be <= sequence_length=6, got 40'),
    ('launch.apex_dqn_atari', ['--config.min_replay_size=5000'],
     'error: --config.min_replay_size=5000 exceeds --config.replay_capacity=2000'),
    ('launch.impala_atari', ['--config.torso=shallow', '--config.channel_multiplier=2'],
     'error: --config.channel_multiplier widens the deep torso only'),
    ('launch.laser_atari', ['--sweep=discount=0.99,1.5'],
     'error: member 1 of the sweep (discount=1.5): --config.discount must be in [0, 1], got '
     '1.5'),
    ('launch.impala_atari', ['--config.eval_protocol=impala_atari_noopp'],
     "error: --config.eval_protocol: unknown protocol 'impala_atari_noopp'"),
    ('launch.impala_atari', ['--config.eval_episodes=0'],
     "error: --config.eval_episodes must be -1 (the protocol's count) or >= 1, got 0"),
    ('launch.apex_dqn_atari', ['--config.eval_protocol=impala_atari_noop'],
     'error: --config.eval_protocol=impala_atari_noop is a protocol of impala (table C.1 and 4 '
     '(experts), minimal action set), not of apex_dqn_atari on the minimal action set; use '
     '--config.eval_protocol=apex_atari_noop'),
    ('launch.impala_atari', ['--config.eval_protocol=atari_noop'],
     'error: --config.eval_protocol=atari_noop is a protocol of no paper (minimal action set), '
     'not of impala_atari on the minimal action set; use '
     '--config.eval_protocol=impala_atari_noop'),
    ('launch.reactor_atari', ['--config.eval_protocol=reactor_atari_human'],
     'error: --config.eval_protocol=reactor_atari_human needs human start states, which are '
     'not public; use the no-op protocol of the same table'),
    ('launch.laser_atari', ['--config.action_set=full'],
     'error: --config.action_set=full: no laser protocol plays it, so the run could not be '
     'evaluated; use --config.action_set=minimal'),
    ('launch.impala_atari', ['--config.jit_compile=maybe'],
     "error: --config.jit_compile must be true, false or 'auto', got 'maybe'"),
    ('launch.apex_dqn_atari', ['--config.precision=fp16'],
     "error: --config.precision must be one of 'float32', 'bfloat16', got 'fp16'"),
    # Evaluation and comparison.
    ('launch.evaluate', ['--run_dir=TMP/corrupt_run'],
     'error: TMP/corrupt_run/config.json is not a run config (Expecting value'),
    ('launch.evaluate', ['--run_dir=TMP/float_run'],
     'error: TMP/float_run/config.json: "total_frames": 20000000.0 is not an integer'),
    ('launch.evaluate', ['--run_dir=TMP/nowhere'],
     "error: TMP/nowhere/config.json not found: is 'TMP/nowhere' a run directory?"),
    ('paper_tables.compare', ['TMP/nowhere'], 'error: TMP/nowhere: not a run directory'),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--checkpoint=TMP/impala_run/ckpt-9'],
     'error: --checkpoint=TMP/impala_run/ckpt-9: no such checkpoint'),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', 'extra'], "error: unexpected argument "
     "'extra'"),
    ('launch.evaluate', ['--run_dir=TMP/laser_run'],
     "error: TMP/laser_run/logs/episodes.csv has no column 'episode_return'"),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--protocol=apex_atari_noop'],
     'error: --protocol=apex_atari_noop is a protocol of apex (table 2 (no-op starts) and 1, '
     'minimal action set), not of impala_atari on the minimal action set; use '
     '--protocol=impala_atari_noop'),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--protocol=impala_atari_multitask_noop'],
     'error: --protocol=impala_atari_multitask_noop is a protocol of impala (table C.1 and 4 '
     '(multi-task), full action set), not of impala_atari on the minimal action set'),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--protocol=impala_atari_nop'],
     "error: --protocol: unknown protocol 'impala_atari_nop'"),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--episodes=0'],
     'error: --episodes must be >= 1, got 0'),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--before_frames=100'],
     'error: --before_frames is not read by protocol impala_atari_noop, which scores a '
     "checkpoint's play: leave it out"),
    ('launch.evaluate', ['--run_dir=TMP/laser_run', '--checkpoint=TMP/laser_run/ckpt-1'],
     'error: --checkpoint is not read by protocol laser_atari_training, which scores training '
     'episodes (logs/episodes.csv): leave it out'),
    ('launch.evaluate', ['--run_dir=TMP/laser_run', '--before_frames=0'],
     'error: --before_frames must be >= 1, got 0'),
    ('launch.evaluate', ['--run_dir=TMP/text_laser'],
     "error: TMP/text_laser/logs/episodes.csv: line 3, column episode_return: 'n/a' is not a "
     'finite number: repair or remove that line'),
    ('paper_tables.compare', ['TMP/text_eval'],
     "error: TMP/text_eval/evaluation.csv: line 2, column checkpoint_frames: '1e2.5' is not a "
     'whole number >= 0'),
    ('paper_tables.compare', ['TMP/text_curve'],
     "error: TMP/text_curve/logs/episodes.csv: line 2, column frames: '-40' is not a whole "
     'number >= 0'),
    ('paper_tables.compare', ['TMP/impala_run', '--paper', 'apex'],
     'error: --paper apex alone: impala_atari runs are compared with --paper impala --table '
     'atari_experts'),
    ('paper_tables.compare', ['TMP/impala_run', '--paper', 'apex', '--table', 'atari_noop'],
     'error: apex atari_noop is scored under protocol apex_atari_noop, and the runs were '
     'evaluated under impala_atari_noop'),
    ('paper_tables.compare', ['TMP/impala_run', '--out=TMP/a_file/reports/report.md'],
     'error: --out=TMP/a_file/reports/report.md: cannot make its directory (Not a directory)'),
    ('paper_tables.compare', ['TMP/impala_run', '--out=TMP/impala_run'],
     'error: --out=TMP/impala_run is a directory: name a file'),
    ('paper_tables.compare', ['TMP/corrupt_run'],
     'error: TMP/corrupt_run: no evaluation.csv (evaluate the run with launch/evaluate.py'),
    # The benchmarks' own flags, which benchmarks/README.md documents for users too.
    ('benchmarks.impala_throughput', ['--frames=0'],
     "error: --frames=0 ends before the run's first update (one batch of 4 unrolls"),
    ('benchmarks.impala_throughput', ['--account', '--window_s=-1'],
     'error: --window_s must be a finite number of seconds > 0, got -1.0'),
    ('benchmarks.impala_throughput', ['--account', '--parts=a,b,c'],
     'error: --parts=a,b,c: give a,b,c[,e], each in frames/s > 0'),
    ('benchmarks.precision', ['--agents=impala_deeep'],
     "error: --agents names 'impala_deeep', not an agent: did you mean impala_deep? choose "
     'among impala_shallow, '),
    ('benchmarks.precision', ['--seconds=-3'],
     'error: --seconds must be a finite number of seconds > 0, got -3.0'),
    ('benchmarks.precision', ['--rounds=0'], 'error: --rounds must be >= 1 (windows of each '
     'precision), got 0'),
    ('benchmarks.precision', ['--frames=-100'],
     "error: --frames=-100 ends before impala_shallow's first update (one batch of 4 unrolls"),
    ('benchmarks.results', ['--table', '--results_dir=TMP/nowhere'],
     'error: --results_dir=TMP/nowhere is not a directory: name the one holding the rows'),
    ('benchmarks.results', ['--table', '--results_dir=TMP/results',
                            '--readme=TMP/nowhere/README.md'],
     'error: --readme: TMP/nowhere/README.md is not a file: name a README holding the generated '
     'table'),
    ('benchmarks.results', ['--row=apex_dpg_walker_walk', '--run_root=TMP/a_file/runs',
                            '--results_dir=TMP/results'],
     'error: --run_root=TMP/a_file/runs: TMP/a_file is not a directory; name one (it is made if '
     'missing)'),
    ('benchmarks.results', ['--row=impala_breakout', '--table', '--plot_only',
                            '--results_dir=TMP/results', '--readme=TMP/results/README.md'],
     'error: --plot_only and --table are two actions: give one per command'),
    ('benchmarks.results', ['--row=impala_breakout', '--table', '--results_dir=TMP/results',
                            '--readme=TMP/results/README.md'],
     'error: --row is not read by --table: leave it out (one action per command)'),
    # An episode cap shorter than an unroll (issue 61).
    ('launch.laser_atari', ['--game=breakout', '--config.replay_episode_frames=8'],
     'error: --config.replay_episode_frames=8 is shorter than one unroll (5 steps x '
     'action_repeat 4 = 20 frames): the replay would keep only episodes shorter than an unroll; '
     'give it at least 20'),
    # Kept as they are (issue 61): they do what they say. A resumed run in another precision
    # (its variables stay float32), an episode cap above the time limit (the limit caps the
    # episodes), a seed the row does not list (trained beside the row's own).
    ('launch.impala_atari', ['--run_dir=TMP/bfloat16_run', '--config.precision=float32'], GOOD),
    ('launch.laser_atari', ['--config.replay_episode_frames=200000'], GOOD),
    ('benchmarks.results', ['--row=impala_breakout', '--seed=7', '--run_root=TMP/runs',
                            '--results_dir=TMP/results'], GOOD),
    # The correction study (table 2) on Atari or on DeepMind Lab.
    ('launch.impala_correction_study', ['--game=pong', '--level=rooms_watermaze'],
     'error: --game and --level both given: the study runs on an Atari game (--game) or on a '
     'DeepMind Lab level (--level), not both'),
]
if importlib.util.find_spec('deepmind_lab') is None:     # unless a real one is installed
    CASES.append(('launch.impala_correction_study', ['--level=seekavoid_arena_01'],
                  'error: DeepMind Lab is not installed (the Python module deepmind_lab has no '
                  'wheel); build it from https://github.com/deepmind/lab'))
if not processor.bfloat16_units():     # a machine that has them: tests/test_precision.py
    CASES.append(('launch.reactor_atari', ['--config.precision=bfloat16'],
                  'error: --config.precision=bfloat16: this machine has no bfloat16 units'))


def _command(program, args, tmp):
    args = [a.replace('TMP', tmp) for a in args]
    if program.startswith('launch.') and program != 'launch.evaluate':
        if not any(a.startswith('--run_dir=') for a in args):
            args.append(f'--run_dir={tmp}/run')
        if not any(a.startswith('--preset=') for a in args):
            args.append('--preset=tiny')
    return [sys.executable, '-m', program, *args]


def _write(tmp, path, text):
    os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
    with open(os.path.join(tmp, path), 'w') as f:
        f.write(text)


def _fixtures(tmp):
    """The files and run directories the cases name, under `tmp`."""
    os.makedirs(os.path.join(tmp, _CORRUPT))
    with open(os.path.join(tmp, _BLOCKER), 'w'):
        pass
    with open(os.path.join(tmp, _CORRUPT, 'config.json'), 'w') as f:
        f.write('{"experiment": "impala_atari", "game": ')
    for name, saved in _SAVED.items():
        _write(tmp, f'{name}/config.json', saved)
    for path, text in _LOGS.items():
        _write(tmp, path, text)


def _run_case(index, tmp_root):
    program, args, message = CASES[index]
    tmp = os.path.join(tmp_root, str(index))
    _fixtures(tmp)
    env = dict(ENV, **{input_checks.CHECK_ONLY: '1'}) if message == GOOD else ENV
    return tmp, subprocess.run(_command(program, args, tmp), cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=240)


@pytest.fixture(scope='module')
def results(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('bad_input'))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda i: _run_case(i, root), range(len(CASES))))


def test_the_table_covers_every_program():
    programs = {program for program, _, _ in CASES}
    assert len(CASES) >= 25
    assert programs >= {'launch.impala_atari', 'launch.apex_dqn_atari', 'launch.apex_dpg_control',
                        'launch.laser_atari', 'launch.reactor_atari', 'launch.evaluate',
                        'paper_tables.compare', 'launch.impala_dmlab', 'launch.laser_dmlab30',
                        'launch.impala_correction_study'}


def _cases(good: bool) -> dict:
    """The parametrization over the cases kept (`good`) or refused."""
    indices = [i for i, (_, _, message) in enumerate(CASES) if (message == GOOD) == good]
    return dict(argvalues=indices, ids=[f'{CASES[i][0].split(".")[-1]}:{" ".join(CASES[i][1])}'
                                        for i in indices])


@pytest.mark.parametrize('index', **_cases(good=False))
def test_bad_input_is_one_line(index, results):
    tmp, result = results[index]
    message = CASES[index][2].replace('TMP', tmp)
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0, result.stdout + result.stderr
    assert 'Traceback' not in result.stderr, result.stderr
    absl_flag_error = message.startswith('FATAL Flags parsing error')
    assert len(lines) == (2 if absl_flag_error else 1), result.stderr
    assert lines[0].startswith(message), result.stderr
    assert not os.path.exists(os.path.join(tmp, 'run', 'config.json'))


@pytest.mark.parametrize('index', **_cases(good=True))
def test_input_kept_as_it_is_is_good(index, results):
    _, result = results[index]
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Traceback' not in result.stderr, result.stderr
    assert GOOD in result.stdout, result.stdout


# Runs a program as `python -m` would, then says whether TensorFlow was imported.
_IMPORTS_TENSORFLOW = ('import runpy, sys\n'
                       'sys.argv = sys.argv[1:]\n'
                       'try:\n'
                       '    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)\n'
                       'finally:\n'
                       '    print("tensorflow" in sys.modules)\n')


@pytest.mark.parametrize('program, args', [
    ('launch.impala_atari', ['--config.discount=1.5']),
    ('launch.apex_dpg_control', ['--config.precision=fp16']),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--protocol=apex_atari_noop']),
    ('launch.evaluate', ['--run_dir=TMP/impala_run', '--checkpoint=TMP/impala_run/ckpt-9']),
    ('paper_tables.compare', ['TMP/impala_run', '--paper', 'apex']),
    ('paper_tables.compare', ['TMP/impala_run', '--out=TMP/a_file/reports/report.md']),
    ('benchmarks.impala_throughput', ['--frames=0']),
    ('benchmarks.precision', ['--frames=-100']),
    ('benchmarks.results', ['--table', '--results_dir=TMP/nowhere']),
])
def test_bad_input_fails_before_tensorflow_is_imported(tmp_path, program, args):
    _fixtures(str(tmp_path))
    command = _command(program, args, str(tmp_path))
    result = subprocess.run([sys.executable, '-c', _IMPORTS_TENSORFLOW, *command[2:]], cwd=ROOT,
                            env=ENV, capture_output=True, text=True, timeout=240)
    assert result.stderr.startswith('error: '), result.stderr
    assert result.stdout.strip() == 'False', result.stdout + result.stderr


@typed_config.config
class _Added(typed_config.Config):
    """A new agent's fields, each declaring what it allows with the shared rules, and the
    shared relation among them."""
    num_critics: int = typed_config.setting(0, 'a new agent', config_checks.PROCESSES)
    crash_probability: float = typed_config.setting(0.5, 'a new agent',
                                                    config_checks.PROBABILITY)
    warmup_length: int = typed_config.setting(3, 'a new agent', config_checks.LENGTH)
    burst_period: float = typed_config.setting(1.0, 'a new agent', config_checks.PERIOD)
    batch_size: int = typed_config.setting(8, 'a new agent', config_checks.SIZE)
    replay_capacity: int = typed_config.setting(4, 'a new agent', config_checks.CAPACITY)
    RELATIONS = (config_checks.BATCH_WITHIN_REPLAY,)


def test_a_new_agents_fields_are_checked_by_the_rules_they_declare():
    """A new agent's section declares its fields' rules and relations from the shared ones
    (agents/core/config_checks.py), and is checked by them as every experiment is."""
    added = _Added()
    with pytest.raises(ConfigError, match=r'^--config.num_critics must be >= 1, got 0'):
        config_checks.declared(added)
    added = added.replace(num_critics=2)
    with pytest.raises(ConfigError, match=r'^--config.batch_size=8 is more than '
                                          r'--config.replay_capacity=4 holds'):
        config_checks.declared(added)
    added = added.replace(replay_capacity=8)
    config_checks.declared(added)
    with pytest.raises(ConfigError, match=r'^--config.crash_probability must be in \[0, 1\]'):
        config_checks.declared(added.replace(crash_probability=1.5))
    with pytest.raises(ConfigError, match=r'^--config.burst_period must be a finite number '
                                          r'>= 1, got inf'):     # no range takes an infinity
        config_checks.declared(added.replace(burst_period=math.inf))


def test_a_budget_past_the_annealing_horizon_is_refused_unless_a_population_keeps_its_rate():
    """The learning rate is 0 from `anneal_frames` on; a population that does not anneal
    (agents/core/population.py) may train past it."""
    past = impala_config.ImpalaAtari().replace(total_frames=300_000_000)
    with pytest.raises(ConfigError, match=r'^--config.total_frames=300000000 runs past '
                                          r'--config.anneal_frames=200000000'):
        config_checks.declared(past)
    config_checks.declared(past.replace(pbt_population=4))
    with pytest.raises(ConfigError, match=r'runs past'):
        config_checks.declared(past.replace(pbt_population=4, pbt_anneal_learning_rate=True))
