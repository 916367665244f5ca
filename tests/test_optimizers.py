"""RMSPropTF1 against the TF1 formulas in numpy and against TF1's own RMSPropOptimizer;
RMSPropPyTorch against torch.optim.RMSprop's documented algorithm in numpy."""
import numpy as np
import pytest
import tensorflow as tf

from agents.core import optimizers
from agents.ops import choices

STEPS = 4
DENSE_SHAPE, SPARSE_SHAPE = (3, 4), (6, 2)
# Row indices of each step's IndexedSlices update: repeats are summed, row 5 is never touched.
SPARSE_INDICES = [[0, 2, 2], [1, 4, 0], [3, 3, 3], [2, 1, 0]]
HPARAMS = [
    dict(learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=0.01, centered=False),
    dict(learning_rate=0.05, decay=0.99, momentum=0.9, epsilon=1e-5, centered=False),
    dict(learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=0.01, centered=True),
    dict(learning_rate=0.05, decay=0.95, momentum=0.5, epsilon=0.1, centered=True),
]


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    return dict(
        dense_init=rng.normal(size=DENSE_SHAPE).astype(np.float32),
        sparse_init=rng.normal(size=SPARSE_SHAPE).astype(np.float32),
        dense_grads=[rng.normal(0, 0.3, DENSE_SHAPE).astype(np.float32) for _ in range(STEPS)],
        sparse_values=[rng.normal(0, 0.3, (len(i), SPARSE_SHAPE[1])).astype(np.float32)
                       for i in SPARSE_INDICES])


def _numpy_rmsprop(init, grads, masks, learning_rate, decay, momentum, epsilon, centered):
    """The TF1 formulas: ms from ones, epsilon inside the sqrt, masked rows left alone."""
    param = init.astype(np.float64)
    ms, mom, mg = np.ones_like(param), np.zeros_like(param), np.zeros_like(param)
    for grad, mask in zip(grads, masks):
        new_ms = decay * ms + (1 - decay) * grad ** 2
        new_mg = decay * mg + (1 - decay) * grad if centered else mg
        new_mom = momentum * mom + learning_rate * grad / np.sqrt(new_ms - new_mg ** 2 + epsilon)
        updated = [(new_ms, ms), (new_mg, mg), (new_mom, mom), (param - new_mom, param)]
        ms, mg, mom, param = (np.where(mask, new, old) for new, old in updated)
    return param, ms


def _numpy_torch_rmsprop(init, grads, masks, learning_rate, decay, momentum, epsilon, centered):
    """torch.optim.RMSprop as its documentation writes it (alpha = decay): square_avg from
    zeros, avg = sqrt(square_avg [- grad_avg^2]) + eps, buf = momentum * buf + g / avg,
    param -= lr * buf; rows a mask leaves out untouched."""
    param = init.astype(np.float64)
    square_avg, grad_avg, buf = (np.zeros_like(param) for _ in range(3))
    for grad, mask in zip(grads, masks):
        new_square_avg = decay * square_avg + (1 - decay) * grad ** 2
        new_grad_avg = decay * grad_avg + (1 - decay) * grad if centered else grad_avg
        avg = np.sqrt(new_square_avg - new_grad_avg ** 2) + epsilon
        new_buf = momentum * buf + grad / avg
        updated = [(new_square_avg, square_avg), (new_grad_avg, grad_avg), (new_buf, buf),
                   (param - learning_rate * new_buf, param)]
        square_avg, grad_avg, buf, param = (np.where(mask, new, old) for new, old in updated)
    return param, square_avg


def _sparse_dense(values, indices):
    grad = np.zeros(SPARSE_SHAPE)
    np.add.at(grad, indices, values)
    mask = np.zeros(SPARSE_SHAPE, bool)
    mask[indices] = True
    return grad, mask


def _tf1_rmsprop(problem, hparams):
    """Runs tf.compat.v1.train.RMSPropOptimizer in a TF1 graph; returns params and `rms` slots."""
    with tf.Graph().as_default():
        dense = tf.compat.v1.Variable(problem['dense_init'], use_resource=True)
        sparse = tf.compat.v1.Variable(problem['sparse_init'], use_resource=True)
        dense_grad = tf.compat.v1.placeholder(tf.float32, DENSE_SHAPE)
        values = tf.compat.v1.placeholder(tf.float32, [None, SPARSE_SHAPE[1]])
        indices = tf.compat.v1.placeholder(tf.int32, [None])
        sparse_grad = tf.IndexedSlices(values, indices, tf.constant(SPARSE_SHAPE))
        opt = tf.compat.v1.train.RMSPropOptimizer(**hparams)
        train_op = opt.apply_gradients([(dense_grad, dense), (sparse_grad, sparse)])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for step in range(STEPS):
                sess.run(train_op, {dense_grad: problem['dense_grads'][step],
                                    values: problem['sparse_values'][step],
                                    indices: SPARSE_INDICES[step]})
            return sess.run([dense, sparse, opt.get_slot(dense, 'rms'),
                             opt.get_slot(sparse, 'rms')])


def _run_ours(problem, hparams, jit, optimizer=optimizers.RMSPropTF1):
    dense = tf.Variable(problem['dense_init'])
    sparse = tf.Variable(problem['sparse_init'])
    opt = optimizer(**hparams)

    def step(dense_grad, values, indices):
        sparse_grad = tf.IndexedSlices(values, indices, tf.constant(SPARSE_SHAPE))
        opt.apply([dense_grad, sparse_grad], [dense, sparse])

    if jit:
        step = tf.function(step, jit_compile=True)
    for i in range(STEPS):
        step(problem['dense_grads'][i], problem['sparse_values'][i],
             tf.constant(SPARSE_INDICES[i], tf.int32))
    return [v.numpy() for v in (dense, sparse, opt.ms[0], opt.ms[1])]


@pytest.mark.parametrize('form', ['tf1', 'pytorch'])
@pytest.mark.parametrize('jit', [False, True])
@pytest.mark.parametrize('hparams', HPARAMS)
def test_matches_numpy_formulas(hparams, jit, form):
    problem = _problem()
    reference = {'tf1': _numpy_rmsprop, 'pytorch': _numpy_torch_rmsprop}[form]
    dense, sparse, dense_ms, sparse_ms = _run_ours(problem, hparams, jit,
                                                   optimizers.RMSPROP_FORMS[form])
    all_rows = [np.ones(DENSE_SHAPE, bool)] * STEPS
    expected_dense, expected_dense_ms = reference(
        problem['dense_init'], problem['dense_grads'], all_rows, **hparams)
    grads, masks = zip(*(_sparse_dense(v, i)
                         for v, i in zip(problem['sparse_values'], SPARSE_INDICES)))
    expected_sparse, expected_sparse_ms = reference(
        problem['sparse_init'], grads, masks, **hparams)
    np.testing.assert_allclose(dense, expected_dense, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dense_ms, expected_dense_ms, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sparse, expected_sparse, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sparse_ms, expected_sparse_ms, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sparse[5], problem['sparse_init'][5])


@pytest.mark.parametrize('hparams', HPARAMS)
def test_matches_tf1_rmsprop_optimizer(hparams):
    problem = _problem(seed=1)
    for ours, theirs in zip(_run_ours(problem, hparams, jit=True),
                            _tf1_rmsprop(problem, hparams)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_learning_rate_variable_is_read_each_step():
    param = tf.Variable([1.0, -2.0])
    learning_rate = tf.Variable(0.1)
    opt = optimizers.RMSPropTF1(learning_rate)
    step = tf.function(lambda g: opt.apply([g], [param]), jit_compile=True)
    step(tf.constant([1.0, 1.0]))
    moved = param.numpy()
    assert not np.allclose(moved, [1.0, -2.0])
    learning_rate.assign(0.0)                   # annealed to zero: momentum 0, so no move
    step(tf.constant([1.0, 1.0]))
    np.testing.assert_array_equal(param.numpy(), moved)


def test_none_update_is_skipped():
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    opt = optimizers.RMSPropTF1(0.1)
    opt.apply([None, tf.constant([1.0])], [a, b])
    assert a.numpy()[0] == 1.0 and b.numpy()[0] != 2.0
    with pytest.raises(ValueError, match='updates for'):
        opt.apply([tf.constant([1.0])], [a, b])


def test_checkpoint_saves_and_restores_state(tmp_path):
    hparams = HPARAMS[3]
    grads = [tf.constant([0.5, -0.2]), tf.constant([0.1, 0.3]), tf.constant([-0.4, 0.2])]

    param = tf.Variable([1.0, 2.0])
    opt = optimizers.RMSPropTF1(**hparams)
    for g in grads[:2]:
        opt.apply([g], [param])
    path = tf.train.Checkpoint(param=param, opt=opt).save(str(tmp_path / 'ckpt'))
    opt.apply([grads[2]], [param])

    restored_param = tf.Variable([0.0, 0.0])
    restored_opt = optimizers.RMSPropTF1(**hparams)
    tf.train.Checkpoint(param=restored_param, opt=restored_opt).restore(path)
    restored_opt.apply([grads[2]], [restored_param])    # slots are restored as they are created
    np.testing.assert_allclose(restored_param.numpy(), param.numpy(), rtol=1e-6)
    for ours, theirs in zip(restored_opt.variables, opt.variables):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_the_two_forms_differ_where_the_mean_square_is_small():
    """At the first step on small gradients, TF1's ms of ones damps the step to about
    lr * g, while PyTorch's ms from zeros gives about lr * g / (0.1 |g| + eps): the forms
    differ by an order of magnitude where IMPALA's gradients are small."""
    grad = tf.constant([1e-3, -1e-3])
    steps = {}
    for form, optimizer in optimizers.RMSPROP_FORMS.items():
        param = tf.Variable([0.0, 0.0])
        optimizer(learning_rate=0.1, decay=0.99, epsilon=0.01).apply([grad], [param])
        steps[form] = -param.numpy()
    np.testing.assert_allclose(steps['tf1'], 0.1 * grad.numpy() / np.sqrt(0.99 + 1e-8 + 0.01),
                               rtol=1e-5)
    np.testing.assert_allclose(steps['pytorch'], 0.1 * grad.numpy() / (0.1 * 1e-3 + 0.01),
                               rtol=1e-5)


def test_every_form_a_config_may_name_has_its_optimizer():
    assert tuple(optimizers.RMSPROP_FORMS) == choices.RMSPROP_FORMS
