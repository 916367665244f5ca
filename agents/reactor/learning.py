"""The Reactor learner (sec. 3.4): distributional Retrace for the critic (sec. 3.2), beta-LOO
for the policy (sec. 3.1), sequence priorities (sec. 3.3), Adam without momentum and a target
network copied every T_update updates.

A batch holds B sequences of n = 33 steps x_0 .. x_32 (frames 1-33 of sec. 3.4) and the state
both LSTMs held before x_0. "A moving network is unrolled over frames 1-32 while the target
network is unrolled over frames 2-33": the online network gives pi(.|x_t) and q(x_t, .) for
t = 0 .. 31, the steps learnt from; the target network gives everything the targets read at
x_1 .. x_32 (the distributions q(x_{t+n}, .), the policy pi(.|x_{t+n}) of the alphas and traces,
and the bootstrap at x_32). Both start from the stored state at x_0 (the target network runs
x_0 too, only to reach x_1 with its own state; docs/fidelity.md, "Reactor").

Steps with mask 0 (the final observation of a time-limited episode, agents/core/steps.py) are
bootstrapped from but not learnt from, and cut the traces (c = 0 there).
"""
import sonnet as snt
import tensorflow as tf
import tensorflow_probability as tfp

from agents.core import datasets
from agents.core import learning
from agents.core import steps
from agents.networks import reactor as reactor_network
from agents.ops import leave_one_out
from agents.ops import retrace
from agents.ops import sequence_priorities
from agents.reactor import config as reactor_config


def support(v_min: float, v_max: float, num_atoms: int) -> tf.Tensor:
    """z_i = v_min + i (v_max - v_min) / (N - 1) (eq. 5)."""
    return tf.linspace(float(v_min), float(v_max), num_atoms)


def loss_scalars(config: reactor_config.ReactorAtari) -> dict:
    """The arguments of `reactor_loss` after `weights`, as a Reactor config sets them: the
    network's support, the environment's reward clip and the learning section's rest."""
    network, learning_ = config.network, config.learning
    return dict(atoms=support(network.v_min, network.v_max, network.num_atoms),
                reward_clip=config.environment.reward_clip, discount=learning_.discount,
                retrace_lambda=learning_.retrace_lambda,
                beta_loo_truncation=learning_.beta_loo_truncation,
                entropy_cost=learning_.entropy_cost)


def _state(stored) -> reactor_network.ReactorState:
    """The stored core state as the network's own types (Reverb returns look-alike tuples)."""
    return reactor_network.ReactorState(policy=snt.LSTMState(*stored[0]),
                                        q=snt.LSTMState(*stored[1]))


def reactor_loss(online, target, data, weights, *, atoms: tf.Tensor, reward_clip: float,
                 discount: float, retrace_lambda: float, beta_loo_truncation: float,
                 entropy_cost: float):
    """The loss, per-sequence priorities [B] and metrics of one batch (`loss_scalars(config)`
    gives the keyword arguments).

    Args:
      online: ReactorOutput of x_0 .. x_{T-1}, [T, B, ...] (T = n - 1).
      target: ReactorOutput of the target network on x_1 .. x_T, [T, B, ...].
      data: time-major steps [T + 1, B].
      weights: [B] importance weights of the sequences (sec. 3.3, beta = 1).
      atoms: [N] the support z_i (eq. 5, `support`).
      reward_clip: rewards clipped to [-reward_clip, reward_clip]; 0: unclipped.
      discount: gamma.
      retrace_lambda: Retrace's lambda.
      beta_loo_truncation: beta-LOO's truncation of 1 / mu.
      entropy_cost: the weight of the policy's entropy bonus.
    """
    z = atoms
    mask = data['mask'][:-1]
    actions = data['action'][:-1]
    rewards = data['reward'][:-1]
    if reward_clip:
        rewards = tf.clip_by_value(rewards, -reward_clip, reward_clip)
    discounts = discount * data['discount'][:-1]
    behaviour = tf.where(mask > 0, data['behaviour_prob'][:-1], 1.0)
    # The ops read x_{t+n}, n >= 1: entry 0 of the [T] arrays is never used.
    distributions = tf.concat([target.q_distribution[:1], target.q_distribution[:-1]], axis=0)
    policies = tf.concat([target.policy[:1], target.policy[:-1]], axis=0)
    target_distributions = retrace.distributional_retrace(
        distributions, policies, behaviour, actions, rewards, discounts,
        target.q_distribution[-1], target.policy[-1], z,
        lambda_=retrace_lambda * mask, uniform_support=True)              # [T, B, N]

    log_q = tf.nn.log_softmax(online.q_logits, axis=-1)
    log_q_taken = tf.gather(log_q, actions, axis=2, batch_dims=2)               # [T, B, N]
    per_step = weights[None] * mask
    # Sec. 3.2: the KL between the projected target and q(x_t, a_t): its cross-entropy part.
    critic_loss = -tf.reduce_sum(per_step[..., None] * target_distributions * log_q_taken)

    q_values = reactor_network.expected_q(tf.stop_gradient(online.q_distribution), z)
    returns = tf.reduce_sum(target_distributions * z, axis=-1)   # R(a^): Retrace's (sec. 3.2)
    policy_loss = leave_one_out.beta_loo_loss(
        online.policy, q_values, returns, actions, behaviour,
        truncation=beta_loo_truncation, weights=per_step)
    entropy = tfp.distributions.Categorical(probs=online.policy).entropy()
    entropy_loss = -tf.reduce_sum(per_step * entropy)
    loss = critic_loss + policy_loss + entropy_cost * entropy_loss

    q_taken = tf.exp(log_q_taken)
    priorities = sequence_priorities.distributional_retrace_priorities(
        tf.where(mask[..., None] > 0, target_distributions, q_taken), q_taken)
    steps_learnt = tf.maximum(tf.reduce_sum(mask), 1.0)
    metrics = dict(loss=loss, critic_loss=critic_loss, policy_loss=policy_loss,
                   entropy=tf.reduce_sum(mask * entropy) / steps_learnt,
                   mean_q=tf.reduce_sum(mask * tf.gather(q_values, actions, batch_dims=2))
                   / steps_learnt,
                   mean_priority=tf.reduce_mean(priorities),
                   mean_weight=tf.reduce_mean(weights))
    return loss, priorities, metrics


class ReactorLearning(learning.TargetNetworkLearning):
    """Network, target network, Adam and counters; `update(batch)` is the compiled step.

    `frames` is set outside the update, from the replay's inserts (agents/core/
    replay_feedback.py): Reactor counts observations the actors generated (sec. 3.4).
    """

    def __init__(self, network: snt.Module, target_network: snt.Module,
                 settings: reactor_config.ReactorLearning, scalars: dict, jit_compile: bool):
        super().__init__(network, target_network,
                         target_update_period=settings.target_update_period,
                         jit_compile=jit_compile, name='reactor_learning')
        # Sec. 3.4.1: Adam with "zero momentum" (beta1 = 0).
        self.optimizer = snt.optimizers.Adam(settings.learning_rate, beta1=settings.adam_beta1,
                                             beta2=settings.adam_beta2,
                                             epsilon=settings.adam_epsilon)
        self._loss_scalars = scalars

    def _update(self, batch):
        """One step on `batch`: [B, n, ...] sequences as the actors wrote them, their stored
        `core_state`, `weights` [B] and `keys` [B] (passed through for the priorities)."""
        data = datasets.time_major({name: value for name, value in batch.items()
                                   if name not in ('weights', 'keys')})
        state = _state(data[steps.CORE_STATE])
        target, _ = self.target_network.unroll(data['observation'], data['first'], state)
        target = tf.nest.map_structure(lambda x: tf.stop_gradient(x[1:]), target)
        with tf.GradientTape() as tape:
            online, _ = self.network.unroll(data['observation'][:-1], data['first'][:-1],
                                            state)
            loss, priorities, metrics = reactor_loss(online, target, data, batch['weights'],
                                                     **self._loss_scalars)
        trainable = self.network.trainable_variables
        gradients = tape.gradient(loss, trainable)
        nonfinite = self.apply_if_finite(
            (loss, gradients), lambda: self.optimizer.apply(gradients, trainable))
        metrics.update(grad_norm=tf.linalg.global_norm(gradients), nonfinite=nonfinite,
                       keys=batch['keys'], priorities=priorities)
        return metrics
