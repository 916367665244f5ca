"""Ape-X learner updates: DQN (sec. 3.1, appendix C) and DPG (sec. 3.2, appendix D).

Both losses are the importance-weighted 1/2 (G_t - q(S_t, A_t))^2, averaged over the batch,
with weights (N P(i))^-beta / max_j from the probabilities Reverb sampled with; DPG's actor
follows dq/da clipped element-wise (appendix D). Each update returns its batch's keys and new
priorities |G_t - q(S_t, A_t)| next to its metrics.
"""
import sonnet as snt
import tensorflow as tf

from agents.apex import config as apex_config
from agents.core import learning
from agents.core import optimizers
from agents.core import transitions
from agents.ops import replay
from agents.ops import value_learning


def _weights(info, beta):
    return tf.cast(replay.importance_weights(info.probability, beta), tf.float32)


class _ApexLearning(learning.TargetNetworkLearning):
    """What both Ape-X learnings share: a target copy every `target_update_period` updates,
    and the prioritized replay's importance-sampling exponent beta (sec. 4.1)."""

    def __init__(self, network: snt.Module, target_network: snt.Module,
                 target_update_period: int, importance_sampling_exponent: float,
                 jit_compile: bool, name: str):
        super().__init__(network, target_network, target_update_period=target_update_period,
                         jit_compile=jit_compile, name=name)
        self._beta = importance_sampling_exponent


class ApexDQNLearning(_ApexLearning):
    """Dueling network, its target copy, centered RMSProp and counters; `update` is compiled."""

    def __init__(self, network: snt.Module, target_network: snt.Module,
                 settings: apex_config.ApexDQNLearning, importance_sampling_exponent: float,
                 jit_compile: bool):
        s = settings
        super().__init__(network, target_network, s.target_update_period,
                         importance_sampling_exponent, jit_compile, 'apex_dqn_learning')
        self.optimizer = optimizers.RMSPropTF1(
            learning_rate=s.learning_rate, decay=s.rmsprop_decay, momentum=s.rmsprop_momentum,
            epsilon=s.rmsprop_epsilon, centered=True)
        self._max_grad_norm = s.max_grad_norm

    def _update(self, sample):
        """One step on a batch of N-step transitions (a batched reverb.ReplaySample)."""
        data = transitions.stacked_transitions(sample.data)
        q_target_tn = self.target_network(data['next_observation'])
        weights = _weights(sample.info, self._beta)
        with tf.GradientTape() as tape:
            q_tm1 = self.network(data['observation'])
            q_tn = self.network(data['next_observation'])
            targets = value_learning.double_q_n_step_targets(
                q_target_tn, q_tn, data['reward'], data['discount'])
            q_a = tf.gather(q_tm1, data['action'], axis=1, batch_dims=1)
            td_errors = targets - q_a
            loss = tf.reduce_mean(weights * 0.5 * tf.square(td_errors))
        trainable = self.network.trainable_variables
        gradients = tape.gradient(loss, trainable)
        clipped, grad_norm = tf.clip_by_global_norm(gradients, self._max_grad_norm)
        nonfinite = self.apply_if_finite(
            (loss, gradients), lambda: self.optimizer.apply(clipped, trainable))
        return {'loss': loss, 'grad_norm': grad_norm, 'mean_q': tf.reduce_mean(q_a),
                'nonfinite': nonfinite,
                'mean_abs_td_error': tf.reduce_mean(tf.abs(td_errors)),
                'keys': sample.info.key,
                'priorities': replay.priorities_from_td_errors(td_errors)}


class ApexDPGLearning(_ApexLearning):
    """Actor and critic, their target copies, two Adam optimizers; `update` is compiled."""

    def __init__(self, network: snt.Module, target_network: snt.Module,
                 settings: apex_config.ApexDPGLearning, importance_sampling_exponent: float,
                 jit_compile: bool):
        s = settings
        super().__init__(network, target_network, s.target_update_period,
                         importance_sampling_exponent, jit_compile, 'apex_dpg_learning')
        self.critic_optimizer = snt.optimizers.Adam(s.learning_rate)
        self.policy_optimizer = snt.optimizers.Adam(s.learning_rate)
        self._actor_gradient_clip = s.actor_gradient_clip
        self._critic_max_grad_norm = s.critic_max_grad_norm

    def _update(self, sample):
        """Both networks' gradients from the networks as they are before this step (D4PG's
        order): the critic's loss (sec. 3.2) and the actor's, appendix D's element-wise clip
        of dq/da at a = pi(S_t) (`value_learning.dpg_loss`); then both are applied."""
        data = transitions.stacked_transitions(sample.data)
        observation, next_observation = data['observation'], data['next_observation']
        target = self.target_network
        q_target_tn = target.critic(next_observation, target.policy(next_observation))
        targets = value_learning.dpg_critic_targets(q_target_tn, data['reward'],
                                                    data['discount'])
        weights = _weights(sample.info, self._beta)
        critic, policy = self.network.critic, self.network.policy
        with tf.GradientTape() as tape:
            q = critic(observation, data['action'])
            td_errors = targets - q
            critic_loss = tf.reduce_mean(weights * 0.5 * tf.square(td_errors))
        critic_gradients = tape.gradient(critic_loss, critic.trainable_variables)
        # The policy loss is not importance-weighted (an assumption: docs/fidelity.md).
        with tf.GradientTape() as tape:
            actions = policy(observation)
            with tape.stop_recording():
                dqda = _action_gradient(critic, observation, actions)
            policy_loss = tf.reduce_mean(
                value_learning.dpg_loss(actions, dqda, self._actor_gradient_clip))
        policy_gradients = tape.gradient(policy_loss, policy.trainable_variables)
        # Appendix D, "otherwise as per DQN": the critic's gradient norm is clipped to 40.
        clipped, grad_norm = tf.clip_by_global_norm(critic_gradients,
                                                 self._critic_max_grad_norm)

        def apply():
            self.critic_optimizer.apply(clipped, critic.trainable_variables)
            self.policy_optimizer.apply(policy_gradients, policy.trainable_variables)
        nonfinite = self.apply_if_finite(
            (critic_loss, critic_gradients, policy_loss, policy_gradients), apply)
        return {'loss': critic_loss, 'critic_loss': critic_loss, 'policy_loss': policy_loss,
                'grad_norm': grad_norm, 'nonfinite': nonfinite,
                'mean_q': tf.reduce_mean(q),
                'mean_abs_td_error': tf.reduce_mean(tf.abs(td_errors)),
                'keys': sample.info.key,
                'priorities': replay.priorities_from_td_errors(td_errors)}


def _action_gradient(critic: snt.Module, observation: tf.Tensor,
                     actions: tf.Tensor) -> tf.Tensor:
    """[B, A] dq(S_t, a)/da at a = `actions` (sec. 3.2's grad_a q(S_t, a; psi))."""
    with tf.GradientTape() as tape:
        tape.watch(actions)
        q = critic(observation, actions)
    return tape.gradient(q, actions)
