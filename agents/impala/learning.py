"""The IMPALA learner update: V-trace actor-critic (sec. 4.2) exactly as table G.1 sets it, and
the unroll learning that LASER builds on (agents/laser).

Loss = policy gradient + baseline_cost * baseline + entropy_cost * entropy, each SUMMED over
batch and time; TF1-style RMSProp; learning rate annealed linearly to zero over the paper's
training frames (`anneal_frames`); gradients clipped by global norm.
"""
from typing import Callable, Mapping

import sonnet as snt
import tensorflow as tf

from agents.core import datasets
from agents.core import learning
from agents.core import optimizers
from agents.core import population
from agents.core import softmax_policy
from agents.core import steps
from agents.impala import config as impala_config
from agents.ops import off_policy
from agents.ops import policy_gradient
from agents.ops import rewards as rewards_lib
from agents.ops import vtrace

# loss(logits [T+1, B, A], values [T+1, B], data (time-major, with `origin` [B]),
# entropy_cost (the current one: PBT adapts it)) -> (loss, {metric: value}).
Loss = Callable[[tf.Tensor, tf.Tensor, dict, tf.Tensor], tuple[tf.Tensor, dict]]


def actor_critic_loss(logits, values, data, *, entropy_cost, baseline_cost: float,
                      discount: float, reward_clip: float, clip_rho_threshold: float,
                      clip_c_threshold: float, clip_pg_rho_threshold: float,
                      vtrace_lambda: float, correction: str = off_policy.VTRACE,
                      reward_clipping: str = rewards_lib.SYMMETRIC,
                      trust_region_threshold: float | None = None,
                      entropy_online_only: bool = False):
    """The V-trace actor-critic loss (IMPALA sec. 4.2) and its metrics, on time-major unrolls
    of T+1 steps: policy gradient + baseline_cost * baseline + entropy_cost * entropy, each
    SUMMED over batch and time (IMPALA table G.1). `loss_scalars(config)` gives the rest of the
    arguments as an IMPALA config sets them.

    `correction` picks the targets and advantages of IMPALA sec. 5.2.2 (V-trace, or another
    of agents/ops/off_policy.py), `reward_clipping` table G.1's symmetric clip (to
    `reward_clip`; 0: unclipped) or figure D.1's optimistic asymmetric one.

    Step t holds o_t, a_t, mu(.|o_t) and the reward and discount that followed a_t. The first
    T steps are learnt from; step T only provides the bootstrap value V(o_T). A step with
    mask 0 (the final observation of a time-limited episode) is treated as a rejected state of
    LASER eq. 7: rho = c = 0 there, so v_s = V(x_s), it adds nothing to any loss term, and the
    step before bootstraps from its value.

    With `trust_region_threshold` b, states whose behaviour relevance beta_KL (LASER sec. 4.3)
    is not below b are rejected the same way (trust-region V-trace, eq. 7). With
    `entropy_online_only`, the entropy term sees only the online unrolls (LASER sec. 5.1).
    """
    learner_logits = logits[:-1]
    behaviour_logits = data['behaviour_logits'][:-1]
    bootstrap_value = values[-1]
    values = values[:-1]
    actions = data['action'][:-1]
    mask = data['mask'][:-1]
    rewards = _clipped_rewards(data['reward'][:-1], reward_clipping, reward_clip)
    discounts = discount * data['discount'][:-1]

    relevant = mask
    metrics = {}
    if trust_region_threshold is not None:
        relevance = vtrace.behaviour_relevance(learner_logits, behaviour_logits,
                                               clip_rho_threshold)
        relevant = mask * vtrace.trust_region_mask(relevance, trust_region_threshold)
        replayed = mask * (1.0 - datasets.online(data))[None]
        metrics.update(
            behaviour_kl_online=_mean(relevance, mask * datasets.online(data)[None]),
            behaviour_kl_replay=_mean(relevance, replayed),
            rejected_fraction_replay=_mean(1.0 - relevant, replayed))   # 0 with no replay
    log_rhos = (vtrace.log_probs_from_logits_and_actions(learner_logits, actions)
                - vtrace.log_probs_from_logits_and_actions(behaviour_logits, actions))
    returns = _corrected_targets(
        correction, log_rhos, discounts, rewards, values, bootstrap_value, relevant,
        clip_rho_threshold=clip_rho_threshold, clip_c_threshold=clip_c_threshold,
        clip_pg_rho_threshold=clip_pg_rho_threshold, lambda_=vtrace_lambda)
    pg_loss_fn = (off_policy.epsilon_policy_gradient_loss if correction == off_policy.EPSILON
                  else policy_gradient.policy_gradient_loss)
    pg_loss = pg_loss_fn(learner_logits, actions, returns.pg_advantages)
    baseline_loss = policy_gradient.baseline_loss(returns.vs - values)
    entropy_mask = relevant * datasets.online(data)[None] if entropy_online_only else relevant
    entropy_loss = policy_gradient.entropy_loss(learner_logits, mask=entropy_mask)
    loss = pg_loss + baseline_cost * baseline_loss + entropy_cost * entropy_loss
    metrics.update(loss=loss, policy_gradient_loss=pg_loss, baseline_loss=baseline_loss,
                   entropy_loss=entropy_loss, mean_value=tf.reduce_mean(values),
                   mean_rho=_mean(tf.exp(log_rhos), relevant))
    return loss, metrics


def vtrace_scalars(vtrace_settings: impala_config.VTrace, costs, reward_clip: float) -> dict:
    """The arguments of `actor_critic_loss` that every V-trace agent's config holds (IMPALA
    table G.1; LASER sec. 5.1 keeps them): the truncations, `costs` (the agent's learning
    section: its entropy and baseline costs and discount) and the environment's reward clip."""
    v = vtrace_settings
    return dict(entropy_cost=costs.entropy_cost, baseline_cost=costs.baseline_cost,
                discount=costs.discount, reward_clip=reward_clip,
                clip_rho_threshold=v.clip_rho_threshold, clip_c_threshold=v.clip_c_threshold,
                clip_pg_rho_threshold=v.clip_pg_rho_threshold, vtrace_lambda=v.vtrace_lambda)


def loss_scalars(config: impala_config.ImpalaConfig) -> dict:
    """The arguments of `actor_critic_loss` as an IMPALA config sets them: table G.1's, sec.
    5.2.2's correction and the reward clipping of table G.1 or figure D.1."""
    return dict(vtrace_scalars(config.vtrace, config.learning, config.environment.reward_clip),
                correction=config.learning.off_policy_correction,
                reward_clipping=config.learning.reward_clipping)


def _clipped_rewards(rewards, clipping: str, reward_clip: float):
    """Rewards as the loss sees them: clipped to [-reward_clip, reward_clip] (IMPALA table G.1;
    0: unclipped), or figure D.1's optimistic asymmetric clipping (DMLab-30, table D.3)."""
    if clipping == rewards_lib.OPTIMISTIC_ASYMMETRIC:
        return rewards_lib.optimistic_asymmetric_clip(rewards)
    if clipping != rewards_lib.SYMMETRIC:
        raise ValueError(f'unknown reward_clipping {clipping!r}; known: {rewards_lib.CLIPPINGS}')
    return rewards_lib.symmetric_clip(rewards, reward_clip)


def _corrected_targets(correction, log_rhos, discounts, rewards, values, bootstrap_value,
                       relevant, *, clip_rho_threshold, clip_c_threshold, clip_pg_rho_threshold,
                       lambda_) -> vtrace.VTraceReturns:
    """Value targets and policy-gradient advantages of one of IMPALA sec. 5.2.2's corrections:
    V-trace (sec. 4, trust-region V-trace where `relevant` rejects states), 1-step importance
    sampling, or none (No-correction and epsilon-correction share the uncorrected targets)."""
    if correction == off_policy.VTRACE:
        return vtrace.trust_region_vtrace(
            log_rhos, discounts, rewards, values, bootstrap_value, relevant,
            clip_rho_threshold=clip_rho_threshold, clip_c_threshold=clip_c_threshold,
            clip_pg_rho_threshold=clip_pg_rho_threshold, lambda_=lambda_)
    if correction == off_policy.ONE_STEP_IS:
        return off_policy.one_step_importance_sampling(
            log_rhos, discounts, rewards, values, bootstrap_value, relevant,
            clip_pg_rho_threshold=clip_pg_rho_threshold, lambda_=lambda_)
    if correction in (off_policy.NONE, off_policy.EPSILON):
        return off_policy.no_correction(discounts, rewards, values, bootstrap_value, relevant,
                                        lambda_=lambda_)
    raise ValueError(f'unknown off_policy_correction {correction!r}; known: '
                     f'{off_policy.CORRECTIONS}')


def _mean(x, weights):
    return tf.reduce_sum(x * weights) / tf.maximum(tf.reduce_sum(weights), 1.0)


class UnrollLearning(learning.LearningState):
    """Network, optimizer and counters of one learner; `update` is the compiled step.

    TF1-style RMSProp (IMPALA table G.1), the learning rate annealed linearly to 0 over
    `anneal_frames` (not under PBT unless `pbt_anneal_learning_rate`), whatever frame the run
    stops at (`total_frames`), gradients clipped by global norm `max_grad_norm` (0: no
    clipping, LASER sec. 5.1). Frames count only online
    unrolls: replayed ones were counted when new. An update whose loss or gradients are not
    finite is not applied (`nonfinite` = 1); its online frames still count, as the actors
    generated them. `hyperparameters` holds the config's ADAPTABLE ones as variables, which
    the update reads each step and checkpoints save, so that PBT (agents/core/pbt.py) changes them
    without retracing and a copied member takes them with the weights.
    """

    def __init__(self, network: snt.Module, loss: Loss, *, optimizer: impala_config.RMSProp,
                 hyperparameters: Mapping[str, float], anneals: bool, action_repeat: int,
                 jit_compile: bool, name: str = 'learning'):
        super().__init__(network, jit_compile=jit_compile, name=name)
        self.hyperparameters = {
            name: tf.Variable(float(hyperparameters[name]), trainable=False, dtype=tf.float32,
                              name=name)
            for name in impala_config.ADAPTABLE}
        self.learning_rate = tf.Variable(optimizer.learning_rate, trainable=False,
                                         dtype=tf.float32, name='learning_rate')
        self.optimizer = optimizers.RMSPROP_FORMS[optimizer.rmsprop_form](
            learning_rate=self.learning_rate, decay=optimizer.rmsprop_decay,
            momentum=optimizer.rmsprop_momentum,
            epsilon=self.hyperparameters['rmsprop_epsilon'])
        self._anneal = anneals
        self._anneal_frames = float(optimizer.anneal_frames)
        self._clips_gradients = bool(optimizer.max_grad_norm)
        self._action_repeat = action_repeat
        self._loss = loss

    def _update(self, batch):
        """One step on `batch`: a dict of [B, T+1, ...] unrolls as the actors wrote them, with
        `origin` [B] (0 online, 1 replay; core/datasets.py)."""
        hyper = self.hyperparameters
        data = datasets.time_major(batch)
        progress = tf.cast(self.frames, tf.float32) / self._anneal_frames
        anneal = tf.maximum(0.0, 1.0 - progress) if self._anneal else 1.0
        self.learning_rate.assign(hyper['learning_rate'] * anneal)
        with tf.GradientTape() as tape:
            loss, metrics = self.loss(*self.outputs(data), data)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)
        grad_norm = tf.linalg.global_norm(gradients)

        def apply():
            clipped = gradients
            if self._clips_gradients:
                clipped, _ = tf.clip_by_global_norm(gradients, hyper['max_grad_norm'],
                                                    use_norm=grad_norm)
            self.optimizer.apply(clipped, variables)
        nonfinite = self.apply_if_finite((loss, gradients), apply)
        learning.count_online_frames(self.frames, data, self._action_repeat)
        metrics.update(grad_norm=grad_norm, learning_rate=self.learning_rate.read_value(),
                       nonfinite=nonfinite)
        return metrics

    def loss(self, logits, values, data):
        """(loss, metrics) of `outputs(data)` at the current hyperparameters."""
        return self._loss(logits, values, data, self.hyperparameters['entropy_cost'])

    def outputs(self, data):
        """(logits [T+1, B, A], values [T+1, B]) the loss learns from."""
        return network_outputs(self.network, data)


def network_outputs(network: snt.Module, data):
    """(logits [T+1, B, A], values [T+1, B]) of time-major unrolls.

    The feed-forward net runs on all steps at once (time folded into batch, IMPALA sec. 3.1);
    the LSTM core unrolls from the state stored with the unroll's first step (the actor's),
    recomputing the states inside it with the current parameters, reset at `first` steps
    (LASER's replayed rows start from the learner's own: agents/laser/learning.py).
    """
    if not softmax_policy.is_recurrent(network):
        outputs = snt.BatchApply(network, num_dims=2)(data['observation'])
    else:
        outputs, _ = network.unroll(data['observation'], data['prev_action'],
                                    data['prev_reward'], None, data['first'],
                                    data[steps.CORE_STATE])
    return outputs.logits, outputs.value


def unroll_learning_arguments(config) -> dict:
    """What `UnrollLearning` takes of an IMPALA or LASER config, section by section: the
    optimizer, the starting values of the ADAPTABLE hyperparameters, whether the rate anneals
    (agents/core/population.py) and the environment's action repeat."""
    return dict(optimizer=config.optimizer,
                hyperparameters={name: config[name] for name in impala_config.ADAPTABLE},
                anneals=population.anneals_learning_rate(config),
                action_repeat=config.environment.action_repeat)


def impala_learning(network: snt.Module, config: impala_config.ImpalaConfig,
                    jit_compile: bool) -> UnrollLearning:
    """One IMPALA learner: `actor_critic_loss` minimised as table G.1 says."""
    scalars = loss_scalars(config)

    def loss(logits, values, data, entropy_cost):
        return actor_critic_loss(logits, values, data, **dict(scalars, entropy_cost=entropy_cost))
    return UnrollLearning(network, loss, jit_compile=jit_compile, name='impala_learning',
                          **unroll_learning_arguments(config))
