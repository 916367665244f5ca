"""Step 3 of docs/architecture.md's "Where a new agent plugs in": the loss and the learning
state of the guide's one-step actor-critic (Sutton and Barto, 2018, sec. 13.5).

Loss = policy gradient + baseline_cost * baseline + entropy_cost * entropy, each summed over
the batch (agents/ops/policy_gradient.py), with delta = r + gamma d V(o_{t+1}) - V(o_t) as the
advantage and the critic's error.
"""
import sonnet as snt
import tensorflow as tf

from agents.core import datasets
from agents.core import learning
from agents.core import optimizers
from agents.core import typed_config
from agents.ops import policy_gradient
from agents.ops import rewards as rewards_lib
from tests.guide_agent import ops


def one_step_loss(logits, values, data, *, discount: float, reward_clip: float,
                  baseline_cost: float, entropy_cost: float):
    """(loss, metrics) on time-major items of 2 steps: logits [2, B, A], values [2, B], data's
    fields [2, B, ...]. Step 0 is learnt from (o_t, a_t, r_{t+1}, discount); step 1 gives
    V(o_{t+1}). A step 0 of mask 0 (the final observation of a time-limited episode) adds
    nothing."""
    mask = data['mask'][0]
    rewards = rewards_lib.symmetric_clip(data['reward'][0], reward_clip)
    td_errors = mask * ops.one_step_td_errors(rewards, discount * data['discount'][0],
                                              values[0], values[1])
    pg_loss = policy_gradient.policy_gradient_loss(logits[0], data['action'][0], td_errors)
    baseline_loss = policy_gradient.baseline_loss(td_errors)
    entropy_loss = policy_gradient.entropy_loss(logits[0], mask=mask)
    loss = pg_loss + baseline_cost * baseline_loss + entropy_cost * entropy_loss
    return loss, dict(loss=loss, policy_gradient_loss=pg_loss, baseline_loss=baseline_loss,
                      entropy_loss=entropy_loss, mean_value=tf.reduce_mean(values[0]))


class OneStepLearning(learning.LearningState):
    """TF1-style RMSProp on `one_step_loss`, gradients clipped by global norm; frames counted
    as a queue-fed learner counts them (docs/architecture.md, "Frames")."""

    def __init__(self, network: snt.Module, config: typed_config.Config,
                 jit_compile: bool):
        super().__init__(network, jit_compile=jit_compile, name='one_step_learning')
        self.optimizer = optimizers.RMSPropTF1(
            learning_rate=config.learning_rate, decay=config.rmsprop_decay,
            epsilon=config.rmsprop_epsilon)
        self._loss_scalars = dict(discount=config.discount, reward_clip=config.reward_clip,
                                  baseline_cost=config.baseline_cost,
                                  entropy_cost=config.entropy_cost)
        self._max_grad_norm = config.max_grad_norm
        self._action_repeat = config.action_repeat

    def _update(self, batch):
        """One step on `batch`: a dict of [B, 2, ...] items as the actors wrote them."""
        data = datasets.time_major(batch)
        with tf.GradientTape() as tape:
            outputs = snt.BatchApply(self.network, num_dims=2)(data['observation'])
            loss, metrics = one_step_loss(outputs.logits, outputs.value, data,
                                          **self._loss_scalars)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)

        def apply():
            clipped, _ = tf.clip_by_global_norm(gradients, self._max_grad_norm)
            self.optimizer.apply(clipped, variables)
        metrics['nonfinite'] = self.apply_if_finite((loss, gradients), apply)
        learning.count_online_frames(self.frames, data, self._action_repeat)
        return metrics
