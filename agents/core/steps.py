"""The one step schema: what an actor writes for each environment step, what a table's items
hold, and what a learner reads back.

Step t of one environment holds
  observation   o_t
  action        a_t, chosen at o_t
  reward        r_{t+1}, the raw game reward that followed a_t (clipping belongs to the loss)
  discount      the environment's discount after a_t: 0 at a termination, 1 otherwise
  mask          1 for a real step; 0 for the extra step holding the final observation of an
                episode cut by a time limit (the learner bootstraps from it, learns nothing there)
  <extras>      what the policy computed at o_t (IMPALA: behaviour logits; Ape-X: q values)
and, for recurrent policies, what their learners need to rerun the core:
  first         True where o_t starts an episode: recurrent cores reset their state before it
  prev_action   a_{t-1}, and 0 at an episode's first step (IMPALA figure 3's LSTM input)
  prev_reward   r_t, the raw reward received with o_t, and 0 at an episode's first step
  core_state    the core state the policy held before acting at o_t. A sequence stores it at
                its first step alone (`SequenceAdder`), the state the learner unrolls from.
Feed-forward steps leave these four out: every column costs the actor a Reverb append per
step (about 8% of end-to-end IMPALA throughput on 2 cores for the first three; see
benchmarks/README.md). Policies see all of them either way (`PolicyInputs`).
"""
from typing import Any, Mapping, NamedTuple

import numpy as np
import tensorflow as tf
import tree

CORE_STATE = 'core_state'
# [] uint8: how many of a step's older stacked frames are the earlier steps' newest frames
# (the others are a reset's zeros), where an adder stores each frame once
# (adders.SequenceAdder's `stack`).
STACK_DEPTH = 'stack_depth'


def step_spec(*, observation: tf.TensorSpec, action: tf.TensorSpec,
              extras: Mapping[str, tf.TensorSpec] | None = None,
              core_state: Any = None) -> dict[str, Any]:
    """The spec of one step; `core_state`, the (nested) spec of a recurrent core's state,
    makes it a recurrent step."""
    spec = {
        'observation': observation,
        'action': action,
        'reward': tf.TensorSpec([], tf.float32),
        'discount': tf.TensorSpec([], tf.float32),
        'mask': tf.TensorSpec([], tf.float32),
        **(extras or {}),
    }
    if core_state is not None:
        spec.update(first=tf.TensorSpec([], tf.bool), prev_action=action,
                    prev_reward=tf.TensorSpec([], tf.float32))
        spec[CORE_STATE] = core_state
    return spec


def tensor_specs(environment_spec) -> Any:
    """TensorFlow specs (unnamed) of a nest of dm_env specs: an environment piece's
    observation as a step spec holds it."""
    return tree.map_structure(lambda s: tf.TensorSpec(s.shape, s.dtype), environment_spec)


def state_spec(state) -> Any:
    """The per-environment spec of a batched state nest (e.g. an LSTM's `initial_state(1)`)."""
    return tree.map_structure(lambda s: tf.TensorSpec(s.shape[1:], s.dtype), state)


class PolicyInputs(NamedTuple):
    """What a policy sees at step t, batched over K environments."""
    observation: np.ndarray     # [K, ...] o_t
    prev_action: np.ndarray     # [K, ...] a_{t-1}, 0 at an episode's first step
    prev_reward: np.ndarray     # [K] r_t, 0 at an episode's first step
    first: np.ndarray           # [K] bool, True where o_t starts an episode


class StepInputs:
    """Keeps, for K environments, the inputs of the policy's next step (actor and evaluation)."""

    def __init__(self, timesteps, action_spec: tf.TensorSpec):
        count = len(timesteps)
        self.observation = [ts.observation for ts in timesteps]
        self.prev_action = np.zeros((count, *action_spec.shape), action_spec.dtype.as_numpy_dtype)
        self.prev_reward = np.zeros(count, np.float32)
        self.first = np.ones(count, bool)

    def batch(self) -> PolicyInputs:
        """The K inputs stacked; a nested observation (DMLab's frame and instruction) is
        stacked field by field."""
        observation = (np.stack(self.observation) if isinstance(self.observation[0], np.ndarray)
                       else tree.map_structure(lambda *x: np.stack(x), *self.observation))
        return PolicyInputs(observation, self.prev_action.copy(), self.prev_reward.copy(),
                            self.first.copy())

    def advance(self, k: int, action, timestep) -> None:
        """Environment k took `action` and answered `timestep` (a FIRST after a reset)."""
        self.observation[k] = timestep.observation
        if timestep.first():
            self.prev_action[k] = 0
            self.prev_reward[k] = 0.0
            self.first[k] = True
        else:
            self.prev_action[k] = action
            self.prev_reward[k] = timestep.reward
            self.first[k] = False


def written_step(inputs: PolicyInputs, k: int, action, timestep, extras: Mapping[str, Any],
                 core_state=None) -> dict:
    """Step t of environment k: its observation, the action taken and the environment's
    answer (reward and discount after it), the policy's extras; with the core state the
    policy held before it, a recurrent step."""
    observation = (inputs.observation[k] if isinstance(inputs.observation, np.ndarray)
                   else tree.map_structure(lambda x: x[k], inputs.observation))
    step = {'observation': observation, 'action': action,
            'reward': np.float32(timestep.reward), 'discount': np.float32(timestep.discount),
            'mask': np.float32(1.0)}
    step.update({name: value[k] for name, value in extras.items()})
    if core_state is not None:
        step.update(first=inputs.first[k], prev_action=inputs.prev_action[k],
                    prev_reward=inputs.prev_reward[k])
        step[CORE_STATE] = core_state
    return step


def bootstrap_step(final_observation, last: Mapping[str, Any], core_state=None) -> dict:
    """The mask-0 step after `last`, holding the final observation of a time-limited episode.

    Its inputs continue the episode (previous action and reward, the core state after `last`),
    so a recurrent learner computes V(final observation) as the actor's core would have.
    """
    step = tree.map_structure(np.zeros_like, dict(last))
    step['observation'] = final_observation
    if core_state is not None:
        step.update(first=np.bool_(False), prev_action=last['action'],
                    prev_reward=last['reward'])
        step[CORE_STATE] = core_state
    return step


def trajectory_signature(step_spec: Mapping[str, Any], length: int) -> dict[str, Any]:
    """Signature of items holding `length` consecutive steps of `step_spec`; a recurrent
    core's state (CORE_STATE) is held once, for the first step. A nested field (DMLab's
    observation: frame and instruction) gets one column per leaf."""
    signature = {name: tree.map_structure_with_path(
                     lambda path, s, n=name: tf.TensorSpec(
                         [length, *s.shape], s.dtype, '/'.join(map(str, (n, *path)))), spec)
                 for name, spec in step_spec.items() if name != CORE_STATE}
    if CORE_STATE in step_spec:
        signature[CORE_STATE] = step_spec[CORE_STATE]
    return signature


def frame_signature(signature: Mapping[str, Any], stack: int) -> dict[str, Any]:
    """`trajectory_signature`'s items as a SequenceAdder with `stack` > 1 writes them: the
    observation column of single frames, `stack` - 1 more of them (those before the first
    step), and a STACK_DEPTH per step (`stack` 1: as it is)."""
    if stack == 1:
        return dict(signature)
    observation = signature['observation']
    length, *shape, channels = observation.shape
    frames = None if length is None else length + stack - 1    # None: items of any length
    return {**signature,
            'observation': tf.TensorSpec([frames, *shape, channels // stack],
                                         observation.dtype, observation.name),
            STACK_DEPTH: tf.TensorSpec([length], tf.uint8, STACK_DEPTH)}


def stacked_observations(data: Mapping[str, Any], stack: int) -> dict[str, Any]:
    """Batch-major items of `frame_signature` -> the same with `observation` [B, T, ..., stack
    * width] as the environment gave it: at step t, frame t and the `stack` - 1 before it,
    oldest first, those beyond STACK_DEPTH zeros (a reset's zero-filled stack)."""
    if stack == 1:
        return dict(data)
    frames = data['observation']
    length = frames.shape[1] - stack + 1
    depth = tf.cast(data[STACK_DEPTH], tf.int32)
    channels = []
    for j in range(stack):        # channel block j holds the frame stack - 1 - j steps back
        kept = tf.cast(stack - 1 - j <= depth, frames.dtype)
        channels.append(frames[:, j:j + length] * kept[(...,) + (None,) * (frames.shape.rank - 2)])
    rest = {name: value for name, value in data.items() if name != STACK_DEPTH}
    return {**rest, 'observation': tf.concat(channels, axis=-1)}
