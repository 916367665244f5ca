"""What the frames-once tests share: a real actor stepping one game into the real adder, the
step stream it gave the adder kept, and how that stream's episodes end and restart."""
from agents.core import actor as actor_lib
from agents.core import variables
from reverb_tables import tables


class Recording:
    """The real adder, keeping the step stream it was given."""

    def __init__(self, adder):
        self.adder = adder
        self.steps = []

    def add(self, step):
        self.steps.append(step)
        self.adder.add(step)


def episode_kinds(stream):
    """How the stream's episodes end and how the following ones start."""
    kinds = set()
    for previous, step in zip(stream, stream[1:]):
        if previous['mask'] == 0:
            kinds.add('time limit')
        if previous['discount'] == 0 or previous['mask'] == 0:
            older = step['observation'][..., :-1]
            kinds.add('reset with zeros' if not older.any() else 'stack carried over')
        if previous['discount'] == 0 and previous['mask'] == 1:
            kinds.add('termination')
    return kinds


def act(builder, client, update_period, num_steps):
    """A Recording of `num_steps` of one actor of `builder` (one environment, seed 1) on the
    server of `client`, the network's parameters pushed to its variables table first."""
    network = builder.network()
    policy = builder.policy(network, actor_id=0, seed=0)
    variables.VariablePusher(client, network.trainable_variables, tables.VARIABLES).push(0)
    recording = Recording(builder.adder(client, learner_id=0))
    actor = actor_lib.Actor(
        envs=[builder.environments.environment(seed=1)], policy=policy, adders=[recording],
        parameters=variables.VariableClient(client, policy.variables, tables.VARIABLES),
        action_spec=builder.step_spec()['action'], update_period=update_period, client=client,
        actor_id=0, frames_per_step=builder.config.action_repeat)
    actor.run(num_steps=num_steps)
    return recording
