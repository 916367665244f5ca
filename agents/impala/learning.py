"""The IMPALA learner update: V-trace actor-critic (sec. 4.2) exactly as table G.1 sets it.

Loss = policy gradient + baseline_cost * baseline + entropy_cost * entropy, each SUMMED over
batch and time; TF1-style RMSProp; learning rate annealed linearly to zero over the run's
frames; gradients clipped by global norm.
"""
import ml_collections
import sonnet as snt
import tensorflow as tf

from agents.core import datasets
from agents.core import optimizers
from agents.core import steps
from agents.impala import acting
from agents.ops import policy_gradient
from agents.ops import vtrace

# log rho at mask-0 steps: exp() of it is exactly 0 in float32, so rho = c = 0 there.
_NEVER = -1e9


def impala_loss(logits, values, *, actions, behaviour_logits, rewards, discounts, mask,
                config: ml_collections.ConfigDict):
    """Loss and metrics for one batch of unrolls, all time-major with T+1 steps.

    Step t holds o_t, a_t, mu(.|o_t) and the reward and discount that followed a_t. The first
    T steps are learnt from; step T only provides the bootstrap value V(o_T). Steps with
    mask 0 (the final observation of a time-limited episode) get rho = 0, so v_s = V(x_s) there
    and they add nothing to any loss term, while the step before bootstraps from their value.
    """
    learner_logits = logits[:-1]
    bootstrap_value = values[-1]
    values = values[:-1]
    actions = actions[:-1]
    mask = mask[:-1]
    clip = config.reward_clip
    rewards = tf.clip_by_value(rewards[:-1], -clip, clip) if clip else rewards[:-1]
    discounts = config.discount * discounts[:-1]

    target_log_probs = vtrace.log_probs_from_logits_and_actions(learner_logits, actions)
    behaviour_log_probs = vtrace.log_probs_from_logits_and_actions(behaviour_logits[:-1],
                                                                   actions)
    log_rhos = tf.where(mask > 0, target_log_probs - behaviour_log_probs, _NEVER)
    returns = vtrace.vtrace(
        log_rhos, discounts, rewards, values, bootstrap_value,
        clip_rho_threshold=config.clip_rho_threshold,
        clip_c_threshold=config.clip_c_threshold,
        clip_pg_rho_threshold=config.clip_pg_rho_threshold,
        lambda_=config.vtrace_lambda)

    pg_loss = policy_gradient.policy_gradient_loss(learner_logits, actions,
                                                   returns.pg_advantages)
    baseline_loss = policy_gradient.baseline_loss(returns.vs - values)
    entropy_loss = policy_gradient.entropy_loss(learner_logits, mask=mask)
    loss = pg_loss + config.baseline_cost * baseline_loss + config.entropy_cost * entropy_loss
    metrics = {'loss': loss, 'policy_gradient_loss': pg_loss, 'baseline_loss': baseline_loss,
               'entropy_loss': entropy_loss, 'mean_value': tf.reduce_mean(values),
               'mean_rho': tf.reduce_mean(tf.exp(log_rhos))}
    return loss, metrics


class ImpalaLearning(tf.Module):
    """Network, optimizer and counters of one IMPALA learner; `update` is the compiled step."""

    def __init__(self, network: snt.Module, config: ml_collections.ConfigDict,
                 jit_compile: bool):
        super().__init__(name='impala_learning')
        self.network = network
        self.learning_rate = tf.Variable(config.learning_rate, trainable=False,
                                         dtype=tf.float32, name='learning_rate')
        self.optimizer = optimizers.RMSPropTF1(
            learning_rate=self.learning_rate, decay=config.rmsprop_decay,
            momentum=config.rmsprop_momentum, epsilon=config.rmsprop_epsilon)
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name='step')
        self.frames = tf.Variable(0, dtype=tf.int64, trainable=False, name='frames')
        self._config = config
        self.update = tf.function(self._update, jit_compile=jit_compile)

    def _update(self, batch):
        """One step on `batch`: a dict of [B, T+1, ...] unrolls as the actors wrote them, and
        `origin` [B] where batches mix the online queue (0) and replay (1) (core/datasets.py)."""
        config = self._config
        data = time_major(batch)
        # Table G.1: anneal linearly to 0 from the beginning to the end of training.
        progress = tf.cast(self.frames, tf.float32) / float(config.total_frames)
        self.learning_rate.assign(config.learning_rate * tf.maximum(0.0, 1.0 - progress))
        with tf.GradientTape() as tape:
            logits, values = network_outputs(self.network, data)
            loss, metrics = impala_loss(
                logits, values, actions=data['action'],
                behaviour_logits=data['behaviour_logits'], rewards=data['reward'],
                discounts=data['discount'], mask=data['mask'], config=config)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)
        gradients, grad_norm = tf.clip_by_global_norm(gradients, config.max_grad_norm)
        self.optimizer.apply(gradients, variables)
        self.step.assign_add(1)
        # Frames are those the actors generated: replayed unrolls were counted when new.
        mask = data['mask'][:-1]
        if datasets.ORIGIN in batch:
            mask *= tf.cast(tf.equal(batch[datasets.ORIGIN], 0), tf.float32)
        real_steps = tf.reduce_sum(mask)
        self.frames.assign_add(tf.cast(real_steps, tf.int64) * config.action_repeat)
        metrics.update(grad_norm=grad_norm, learning_rate=self.learning_rate.read_value())
        return metrics


def network_outputs(network: snt.Module, data):
    """(logits [T+1, B, A], values [T+1, B]) of time-major unrolls.

    The feed-forward net runs on all steps at once (time folded into batch, sec. 3.1); the
    LSTM core unrolls from the state stored with the unroll's first step, reset at `first`
    steps inside it, as the actor's core ran (steps.py).
    """
    if not acting.is_recurrent(network):
        outputs = snt.BatchApply(network, num_dims=2)(data['observation'])
    else:
        outputs, _ = network.unroll(data['observation'], data['prev_action'],
                                    data['prev_reward'], None, data['first'],
                                    data[steps.CORE_STATE])
    return outputs.logits, outputs.value


def time_major(batch):
    """[B, T, ...] -> [T, B, ...] for every step field; the core state ([B, ...]: one per
    unroll) and the batch's `origin` stay as they are."""
    data = {name: value for name, value in batch.items()
            if name not in (steps.CORE_STATE, datasets.ORIGIN)}
    data = tf.nest.map_structure(_time_major, data)
    if steps.CORE_STATE in batch:
        data[steps.CORE_STATE] = batch[steps.CORE_STATE]
    return data


def _time_major(x):
    perm = [1, 0] + list(range(2, x.shape.rank))
    return tf.transpose(x, perm)
