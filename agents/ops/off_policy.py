"""The off-policy corrections IMPALA compares with V-trace (sec. 5.2.2, table 2, appendix E).

Sec. 5.2.2 lists four ways for the learner to treat the lag between the behaviour policy mu
and the learner's policy pi:

1. No-correction: "No off-policy correction" (`no_correction`): the unroll is learnt from as if
   pi had generated it, the targets of A3C's n-step actor-critic.
2. epsilon-correction: no correction either, but "add a small value (epsilon = 1e-6) during
   gradient calculation to prevent log pi(a) from becoming very small" (`epsilon_log_probs`).
3. 1-step importance sampling: "No off-policy correction when optimising V(x). For the policy
   gradient, multiply the advantage at each time step by the corresponding importance weight"
   (`one_step_importance_sampling`), clipped at rho-bar = 1 as sec. 5.2.2 says.
4. V-trace (sec. 4; agents/ops/vtrace.py).

All tensors are time-major as in agents/ops/vtrace.py: `[T, B]` per step, `[B]` bootstrap
values. `relevant` ([T, B], float or bool) marks the steps learnt from; a step outside it (the
mask-0 bootstrap step after a time limit, or a state LASER's trust region rejects) gets
v_s = V(x_s), advantage 0, and the step before it bootstraps from its value, as in
`vtrace.trust_region_vtrace`.
"""
import tensorflow as tf

from agents.ops import vtrace
# The corrections' names, table 2's rows in its order (declared without TensorFlow).
from agents.ops.choices import CORRECTIONS, EPSILON, LABELS, NONE, ONE_STEP_IS, VTRACE  # noqa: F401

# Sec. 5.2.2: "epsilon = 1e-6".
LOG_PI_EPSILON = 1e-6


def no_correction(discounts, rewards, values, bootstrap_value, relevant, *, lambda_=1.0):
    """No-correction (sec. 5.2.2, 1.): V-trace's targets with pi = mu (every rho_t = c_t = 1).

    v_s = V(x_s) + sum_t (prod_{i<t} gamma_i lambda) delta_t V: with lambda = 1 the n-step
    return r_s + gamma_s r_{s+1} + ... + (prod gamma) V(x_T) of eq. 2 (on-policy), cut at
    episode ends (discount 0) and at steps outside `relevant`. The policy-gradient advantage is
    r_s + gamma_s v_{s+1} - V(x_s) (sec. 4.2 with rho_s = 1). Returns `vtrace.VTraceReturns`.
    """
    zeros = tf.zeros_like(tf.convert_to_tensor(values))
    return vtrace.trust_region_vtrace(
        zeros, discounts, rewards, values, bootstrap_value, relevant,
        clip_rho_threshold=None, clip_c_threshold=None, clip_pg_rho_threshold=None,
        lambda_=lambda_)


def one_step_importance_sampling(log_rhos, discounts, rewards, values, bootstrap_value,
                                 relevant, *, clip_pg_rho_threshold=1.0, lambda_=1.0):
    """1-step importance sampling (sec. 5.2.2, 3.): "No off-policy correction when optimising
    V(x)": the value targets of `no_correction`; "for the policy gradient, multiply the
    advantage at each time step by the corresponding importance weight", min(rho-bar,
    pi(a_t|x_t) / mu(a_t|x_t)) with rho-bar = `clip_pg_rho_threshold` (sec. 5.2.2: 1; None: no
    clipping). V-trace without its traces: the weight of step t never reaches the targets of
    other steps. `log_rhos` [T, B] are log pi(a_t|x_t) - log mu(a_t|x_t)."""
    uncorrected = no_correction(discounts, rewards, values, bootstrap_value, relevant,
                                lambda_=lambda_)
    log_rhos = tf.convert_to_tensor(log_rhos)
    relevant = tf.convert_to_tensor(relevant)
    if relevant.dtype != tf.bool:
        relevant = tf.not_equal(relevant, tf.zeros_like(relevant))
    # Outside `relevant` the weight is exactly 0 (not 0 * a possibly infinite rho).
    rhos = tf.exp(tf.where(relevant, log_rhos, tf.constant(log_rhos.dtype.min, log_rhos.dtype)))
    if clip_pg_rho_threshold is not None:
        rhos = tf.minimum(tf.cast(clip_pg_rho_threshold, rhos.dtype), rhos)
    return vtrace.VTraceReturns(vs=uncorrected.vs, pg_advantages=tf.stop_gradient(
        rhos * uncorrected.pg_advantages))


def epsilon_log_probs(logits, actions, epsilon=LOG_PI_EPSILON):
    """log(pi(a_t|x_t) + epsilon) of the epsilon-correction (sec. 5.2.2, 2.; Babaeizadeh et
    al., 2016) for `logits` [T, B, A] and integer `actions` [T, B] -> [T, B]: never below
    log(epsilon), and its gradient is that of log pi(a_t|x_t) scaled by pi / (pi + epsilon), so
    a step whose action the policy has all but ruled out (pi << epsilon) adds almost nothing."""
    logits = tf.convert_to_tensor(logits)
    probs = tf.gather(tf.nn.softmax(logits), actions, batch_dims=actions.shape.rank)
    return tf.math.log(probs + tf.cast(epsilon, probs.dtype))


def epsilon_policy_gradient_loss(logits, actions, advantages, epsilon=LOG_PI_EPSILON):
    """-sum_s log(pi(a_s|x_s) + epsilon) A_s: `policy_gradient.policy_gradient_loss` with the
    epsilon-correction's log (sec. 5.2.2, 2.), SUMMED over time and batch; `advantages` are
    constants (no gradient flows into them)."""
    return -tf.reduce_sum(epsilon_log_probs(logits, actions, epsilon)
                          * tf.stop_gradient(advantages))
