"""The LASER learner update: V-trace with replay mixed into online batches, the trust region of
sec. 4 and entropy on online data only (sec. 5.1), on IMPALA's unroll learning
(agents/impala/learning.py); with the LSTM core, full state correction (app. A.2)."""
import sonnet as snt
import tensorflow as tf

from agents.core import datasets
from agents.core import steps
from agents.impala import config as impala_config
from agents.impala import learning as impala_learning
from agents.laser import config as laser_config


def laser_loss(logits, values, data, *, trust_region_threshold: float, **vtrace_scalars):
    """Trust-region V-trace actor-critic loss (eqs. 5-7; a threshold of infinity is plain
    V-trace, fig. 3's naive sharing), entropy on the online unrolls only (sec. 5.1: "computing
    the entropy cost only on the online data provided slightly better results").
    `loss_scalars(config)` gives the arguments after `data`."""
    return impala_learning.actor_critic_loss(
        logits, values, data, trust_region_threshold=trust_region_threshold,
        entropy_online_only=True, **vtrace_scalars)


def loss_scalars(config: laser_config.LaserConfig) -> dict:
    """The arguments of `laser_loss` as a LASER config sets them: IMPALA's V-trace scalars
    (sec. 5.1) and the trust region's threshold b (sec. 4.3). Off (`trust_region=False`), b =
    infinity keeps every state (exactly V-trace), and the relevance is still logged."""
    learning = config.learning
    threshold = learning.trust_region_threshold if learning.trust_region else float('inf')
    return dict(impala_learning.vtrace_scalars(config.vtrace, learning,
                                               config.environment.reward_clip),
                trust_region_threshold=threshold)


def full_state_correction(config: laser_config.LaserConfig) -> bool:
    """Whether the agent replays whole episodes and carries their core states (app. A.2's
    "full state correction"): with the LSTM core and a replay."""
    return (config.network.core == 'lstm'
            and impala_config.replay_batch_size(config.learning) > 0)


class _CarriedState:
    """The core state each replayed row reached at the end of its last unroll, and `restarts`,
    the count of the rows' restarts that their dataset reads (`datasets.episode_rows`):
    variables outside the learning state's checkpoint, since they belong to the rows' episodes,
    which a restarted learner draws afresh and a PBT-copied one restarts
    (`LaserLearning.after_copy`), each from an episode's first step."""

    def __init__(self, initial_state, restarts: tf.Variable):
        self.variables = tf.nest.map_structure(
            lambda x: tf.Variable(x, trainable=False, name='carried_core_state'), initial_state)
        self.restarts = restarts

    def assign(self, state):
        tf.nest.map_structure(lambda v, x: v.assign(tf.stop_gradient(x)), self.variables, state)


class LaserLearning(impala_learning.UnrollLearning):
    """One LASER agent's learner (one member of a sweep). With `full_state_correction`, each
    batch's replayed rows continue the rows of the batch before (agents/core/datasets.py,
    `episode_rows`): the learner unrolls each from the core state it reached at the end of the
    row's last unroll with the parameters of that update, from the episode's first step on
    (app. A.2; sec. 5.1: "replay each episode from the beginning, using the most recent network
    parameters to recompute the LSTM states along the way"). `restarts` is the count of the
    rows' restarts their dataset reads, which `after_copy` advances."""

    def __init__(self, network: snt.Module, scalars: dict, *, carried_rows: int,
                 restarts: tf.Variable, jit_compile: bool, **unroll_arguments):
        def loss(logits, values, data, entropy_cost):
            return laser_loss(logits, values, data, **dict(scalars, entropy_cost=entropy_cost))
        super().__init__(network, loss, jit_compile=jit_compile, name='laser_learning',
                         **unroll_arguments)
        self.carried = None
        if carried_rows:
            self.carried = _CarriedState(network.initial_state(carried_rows), restarts)

    def after_copy(self) -> None:
        """Restarts the replayed rows, whose carried states PBT's copy made another network's:
        each row's next unroll is a newly drawn episode's first (`datasets.episode_rows`), where
        the core starts afresh, and the rows' unrolls batched before learn nothing (`_update`).
        Sec. 5.1: "replay each episode from the beginning, using the most recent network
        parameters to recompute the LSTM states along the way"."""
        if self.carried is not None:
            self.carried.restarts.assign_add(1)

    def _update(self, batch):
        """`UnrollLearning`'s update; with full state correction, on the rows' current unrolls
        alone: a row drawn before the last restart is masked out (mask 0, no loss term), and
        the metric `replay_rows_masked` counts them."""
        if self.carried is None:
            return super()._update(batch)
        batch, masked = _current_rows(batch, self.carried.restarts)
        return {**super()._update(batch), 'replay_rows_masked': masked}

    def outputs(self, data):
        if self.carried is None:
            return super().outputs(data)
        online = tf.nest.flatten(data[steps.CORE_STATE])[0].shape[0]
        state = tf.nest.map_structure(lambda stored, carried: tf.concat([stored, carried], 0),
                                      data[steps.CORE_STATE], self.carried.variables)
        # Steps 0..T-1, then step T (the next unroll's step 0) from the state before it.
        learnt, state = _unroll(self.network, data, slice(None, -1), state)
        bootstrap, _ = _unroll(self.network, data, slice(-1, None), state)
        self.carried.assign(tf.nest.map_structure(lambda x: x[online:], state))
        return (tf.concat([learnt.logits, bootstrap.logits], 0),
                tf.concat([learnt.value, bootstrap.value], 0))


def _current_rows(batch, restarts: tf.Variable):
    """(`batch` with its replayed rows drawn before `restarts`'s value, those batched before
    the last restart, given mask 0 at every step; how many they are)."""
    batch = dict(batch)
    drawn_at = batch[datasets.DRAWN_AT]
    online = batch['mask'].shape[0] - drawn_at.shape[0]
    current = tf.concat([tf.ones([online], tf.bool), tf.equal(drawn_at, restarts)], 0)
    batch['mask'] = tf.where(current[:, None], batch['mask'], tf.zeros_like(batch['mask']))
    return batch, tf.reduce_sum(1.0 - tf.cast(current, tf.float32))


def _unroll(network, data, steps_, state):
    inputs = [tf.nest.map_structure(lambda x: x[steps_], data[name])
              for name in ('observation', 'prev_action', 'prev_reward')]
    return network.unroll(*inputs, None, data['first'][steps_], state)


def laser_learning(network: snt.Module, config: laser_config.LaserConfig,
                   jit_compile: bool, restarts: tf.Variable) -> LaserLearning:
    """One LASER agent's learner (one member of a sweep), its arguments unpacked from
    `config`: the loss's scalars, the replayed rows whose states it carries (none without
    `full_state_correction`) and IMPALA's unroll learning's; `restarts` as `LaserLearning`'s."""
    carried = impala_config.replay_batch_size(config.learning) if full_state_correction(
        config) else 0
    return LaserLearning(network, loss_scalars(config), carried_rows=carried,
                         restarts=restarts, jit_compile=jit_compile,
                         **impala_learning.unroll_learning_arguments(config))
