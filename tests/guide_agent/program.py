"""Step 7 of docs/architecture.md's "Where a new agent plugs in", for an agent outside the
repository: the guide's one-step actor-critic on one Atari game, as a launch program.

  python -m tests.guide_agent.program --game=breakout --preset=tiny --run_dir=/tmp/guide

Importing this module registers the experiment (`experiments.register`), so that every role
the launcher starts from it (`python -m tests.guide_agent.program --role=...`) knows it.
"""
from launch import experiments
from launch import program

EXPERIMENT = 'guide_actor_critic_atari'
experiments.register(EXPERIMENT, experiments.Entry(
    'tests.guide_agent.config', 'GuideAtari', 'tests.guide_agent.builder:OneStepActorCriticBuilder',
    'environments.atari:AtariGames', 'tests.guide_agent.builder:feed_forward_network',
    target_field='game', run_dir_prefix='guide_actor_critic'))

if __name__ == '__main__':
    program.run(module=__spec__.name, experiment=EXPERIMENT, target='game',
                target_help='Atari game, any paper spelling (default: pong).',
                example='--config.learning_rate=3e-4')
