"""RMSProp with TF1 `tf.compat.v1.train.RMSPropOptimizer` semantics, as a Sonnet 2 optimizer.

IMPALA (app. D.3, G) and Ape-X (centered RMSProp) were trained with TF1's RMSProp, which differs
from `snt.optimizers.RMSProp` and Keras' RMSprop in ways that matter for the paper's epsilons:

    ms  <- decay * ms + (1 - decay) * g^2                     ms starts at ONES, not zeros
    mg  <- decay * mg + (1 - decay) * g                       centered only; starts at zeros
    mom <- momentum * mom + lr * g / sqrt(ms [- mg^2] + eps)  epsilon INSIDE the square root
    param <- param - mom

A dense update runs TF1's own fused kernels (`ResourceApplyRMSProp`,
`ResourceApplyCenteredRMSProp`, the ones `RMSPropOptimizer` runs, also under XLA): one pass over
each variable, where the same formulas as separate ops took about 2-4x as long on a 3.3M-parameter
network (benchmarks/README.md). A `tf.IndexedSlices` update (e.g. from an embedding lookup)
follows TF1's sparse apply: slices with repeated indices are summed, and only the rows it
indexes have their state and value updated. It is done with dense masks, so `apply` compiles
under `tf.function(jit_compile=True)`.

`RMSPropPyTorch` is `torch.optim.RMSprop` (torchbeast's PolyBeast trains IMPALA with it): ms
from zeros and epsilon outside the square root, `lr * g / (sqrt(ms [- mg^2]) + eps)`. It is not
any paper's; it is here to test what the form changes (results/README.md, issue 23's causes).
"""
import sonnet as snt
import tensorflow as tf


def _row_mask(update, parameter):
    """Dense gradient of `update` and a mask of the rows it touches, broadcastable to it."""
    if not isinstance(update, tf.IndexedSlices):
        return update, None
    num_rows = tf.shape(parameter, out_type=update.indices.dtype)[0]
    dense = tf.math.unsorted_segment_sum(update.values, update.indices, num_rows)
    hits = tf.math.unsorted_segment_sum(
        tf.ones_like(update.indices, dtype=tf.int32), update.indices, num_rows)
    mask = tf.reshape(hits > 0, [-1] + [1] * (parameter.shape.rank - 1))
    return dense, mask


def all_finite(*values) -> tf.Tensor:
    """True when every element of every tensor in `values` (nested structures allowed) is
    finite: an update whose loss or gradients are not is skipped, never applied."""
    flat = [tf.reduce_all(tf.math.is_finite(v)) for v in tf.nest.flatten(values)
            if v is not None]
    return tf.reduce_all(tf.stack(flat))


class RMSPropTF1(snt.Optimizer):
    """`tf.compat.v1.train.RMSPropOptimizer` semantics; state is created on the first `apply`.

    Every hyperparameter may be a Python float or a `tf.Variable` (annealed learning rate,
    PBT-adapted epsilon); variables are read at each `apply`, also inside a `tf.function`.
    """

    INITIAL_MEAN_SQUARE = 1.0

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False,
                 name=None):
        super().__init__(name=name)
        self.learning_rate = learning_rate
        self.decay = decay
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered
        self.ms = []
        self.mom = []
        self.mg = []

    @snt.once
    def _initialize(self, parameters):
        def like(p, fill, slot):
            name = f'{p.name.split(":")[0]}/{slot}'
            return tf.Variable(tf.fill(p.shape, tf.cast(fill, p.dtype)), trainable=False,
                               name=name)

        self.ms.extend(like(p, self.INITIAL_MEAN_SQUARE, 'rms') for p in parameters)
        self.mom.extend(like(p, 0.0, 'momentum') for p in parameters)
        if self.centered:
            self.mg.extend(like(p, 0.0, 'mg') for p in parameters)

    def apply(self, updates, parameters):
        """Applies `updates` (e.g. gradients; None entries are skipped) to `parameters`."""
        updates, parameters = list(updates), list(parameters)
        if not parameters or len(updates) != len(parameters):
            raise ValueError(f'RMSPropTF1.apply: got {len(updates)} updates for '
                             f'{len(parameters)} parameters; need the same non-zero number.')
        self._initialize(parameters)
        mgs = self.mg if self.centered else [None] * len(parameters)
        for update, param, ms, mom, mg in zip(updates, parameters, self.ms, self.mom, mgs):
            if update is None:
                continue
            hyper = [tf.cast(h, param.dtype)
                     for h in (self.learning_rate, self.decay, self.momentum, self.epsilon)]
            if isinstance(update, tf.IndexedSlices):
                self._apply_formulas(update, param, ms, mom, mg, *hyper)
            else:
                self._apply_dense(update, param, ms, mom, mg, *hyper)

    def _apply_dense(self, grad, param, ms, mom, mg, lr, decay, momentum, epsilon):
        """TF1's fused kernel: the formulas above in one pass."""
        if mg is None:
            tf.raw_ops.ResourceApplyRMSProp(
                var=param.handle, ms=ms.handle, mom=mom.handle, lr=lr, rho=decay,
                momentum=momentum, epsilon=epsilon, grad=grad)
        else:
            tf.raw_ops.ResourceApplyCenteredRMSProp(
                var=param.handle, mg=mg.handle, ms=ms.handle, mom=mom.handle, lr=lr, rho=decay,
                momentum=momentum, epsilon=epsilon, grad=grad)

    def _apply_formulas(self, update, param, ms, mom, mg, lr, decay, momentum, epsilon):
        """The formulas above as separate ops; an IndexedSlices `update` touches its rows only."""
        grad, mask = _row_mask(update, param)
        new_ms = decay * ms + (1.0 - decay) * tf.square(grad)
        if mg is None:
            mean_square = new_ms
        else:
            new_mg = decay * mg + (1.0 - decay) * grad
            mean_square = new_ms - tf.square(new_mg)
        new_mom = momentum * mom + lr * grad * self._inverse_root(mean_square, epsilon)
        new_param = param - new_mom
        new_values = [(ms, new_ms), (mom, new_mom), (param, new_param)]
        if mg is not None:
            new_values.append((mg, new_mg))
        for variable, value in new_values:
            # TF1's sparse apply: rows an IndexedSlices does not index stay as they are.
            variable.assign(value if mask is None else tf.where(mask, value, variable))

    @staticmethod
    def _inverse_root(mean_square, epsilon):
        """TF1: 1 / sqrt(ms + eps), epsilon inside the square root."""
        return tf.math.rsqrt(mean_square + epsilon)


class RMSPropPyTorch(RMSPropTF1):
    """`torch.optim.RMSprop` semantics: ms starts at zeros, 1 / (sqrt(ms) + eps). (With momentum,
    torch applies the learning rate to the momentum buffer at each step rather than as it
    accumulates: the same while the rate is constant.)"""

    INITIAL_MEAN_SQUARE = 0.0

    def _apply_dense(self, grad, param, ms, mom, mg, *hyper):
        self._apply_formulas(grad, param, ms, mom, mg, *hyper)

    @staticmethod
    def _inverse_root(mean_square, epsilon):
        return 1.0 / (tf.sqrt(mean_square) + epsilon)


# config.rmsprop_form (agents/ops/choices.RMSPROP_FORMS) -> the optimizer class.
RMSPROP_FORMS = {'tf1': RMSPropTF1, 'pytorch': RMSPropPyTorch}
