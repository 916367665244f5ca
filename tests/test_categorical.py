"""The categorical projection against the piecewise h_{z_i} of Reactor sec. 3.2, case by case."""
import numpy as np
import pytest
import tensorflow as tf

from agents.ops import categorical

UNIFORM = np.linspace(-3.0, 3.0, 7)
NON_UNIFORM = np.array([-2.0, -1.5, 0.0, 0.25, 1.0, 4.0])


def _h(support, i, x):
    """h_{z_i}(x) exactly as printed in sec. 3.2, the end cases first."""
    z, last = support, len(support) - 1
    if i == 0 and x <= z[0]:
        return 1.0                                         # x <= v_min and z_i = v_min
    if i == last and x >= z[last]:
        return 1.0                                         # x >= v_max and z_i = v_max
    if i > 0 and z[i - 1] <= x <= z[i]:
        return (x - z[i - 1]) / (z[i] - z[i - 1])
    if i < last and z[i] <= x <= z[i + 1]:
        return (z[i + 1] - x) / (z[i + 1] - z[i])
    return 0.0                                             # x <= z_{i-1} or x >= z_{i+1}


def _reference(support, atoms, probabilities):
    """sum_j p_j h_{z_i}(x_j) with explicit loops over the leading index, i and j."""
    atoms = np.asarray(atoms, np.float64)
    probabilities = np.asarray(probabilities, np.float64)
    flat_atoms = atoms.reshape(-1, atoms.shape[-1])
    flat_probs = probabilities.reshape(-1, atoms.shape[-1])
    out = np.zeros((flat_atoms.shape[0], len(support)))
    for row in range(flat_atoms.shape[0]):
        for i in range(len(support)):
            for j in range(flat_atoms.shape[1]):
                out[row, i] += flat_probs[row, j] * _h(support, i, flat_atoms[row, j])
    return out.reshape(atoms.shape[:-1] + (len(support),))


def _random_case(seed, support, shape=(3, 4), num_atoms=9):
    rng = np.random.default_rng(seed)
    spread = support[-1] - support[0]
    atoms = rng.uniform(support[0] - 0.3 * spread, support[-1] + 0.3 * spread,
                        shape + (num_atoms,))
    probabilities = rng.dirichlet(np.ones(num_atoms), shape)
    return atoms, probabilities


def _modes():
    fn = categorical.project
    return {'eager': fn, 'function': tf.function(fn), 'jit': tf.function(fn, jit_compile=True)}


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
@pytest.mark.parametrize('support', [UNIFORM, NON_UNIFORM], ids=['uniform', 'non_uniform'])
def test_matches_brute_force(mode, support):
    atoms, probabilities = _random_case(0, support)
    assert np.any(atoms < support[0]) and np.any(atoms > support[-1])
    got = _modes()[mode](support, atoms, probabilities)
    np.testing.assert_allclose(got.numpy(), _reference(support, atoms, probabilities),
                               rtol=1e-10, atol=1e-12)
    got32 = _modes()[mode](support.astype(np.float32), atoms.astype(np.float32),
                           probabilities.astype(np.float32))
    assert got32.dtype == tf.float32
    np.testing.assert_allclose(got32.numpy(), _reference(support, atoms, probabilities),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('support', [UNIFORM, NON_UNIFORM], ids=['uniform', 'non_uniform'])
def test_atoms_on_support_points_keep_all_their_mass(support):
    rng = np.random.default_rng(1)
    index = rng.integers(0, len(support), (5, 4))
    probabilities = rng.dirichlet(np.ones(4), 5)
    got = categorical.project(support, support[index], probabilities).numpy()
    expected = np.zeros((5, len(support)))
    for row in range(5):
        for j in range(4):
            expected[row, index[row, j]] += probabilities[row, j]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize('mode', ['eager', 'function', 'jit'])
def test_uniform_projection_matches_brute_force(mode):
    """`project_uniform`, the learner's O(M) path, against the reference: atoms inside,
    outside and exactly on support points, signed weights, float64 and float32."""
    fn = {'eager': categorical.project_uniform,
          'function': tf.function(categorical.project_uniform),
          'jit': tf.function(categorical.project_uniform, jit_compile=True)}[mode]
    atoms, _ = _random_case(5, UNIFORM)
    rng = np.random.default_rng(5)
    atoms[..., :3] = UNIFORM[rng.integers(0, len(UNIFORM), atoms.shape[:-1] + (3,))]
    weights = rng.normal(size=atoms.shape)
    expected = _reference(UNIFORM, atoms, weights)
    np.testing.assert_allclose(fn(UNIFORM, atoms, weights).numpy(), expected, rtol=1e-10,
                               atol=1e-12)
    got32 = fn(UNIFORM.astype(np.float32), atoms.astype(np.float32),
               weights.astype(np.float32)).numpy()
    np.testing.assert_allclose(got32, expected, rtol=1e-5, atol=1e-5)


def test_uniform_projection_needs_two_points():
    with pytest.raises(ValueError, match='>= 2 points'):
        categorical.project_uniform(np.array([0.5]), [[0.1]], [[1.0]])


def test_atoms_outside_are_clipped_to_the_ends():
    support = UNIFORM
    atoms = np.array([[-100.0, -3.0 - 1e-9, 3.0 + 1e-9, 55.0, 2.5]])
    probabilities = np.array([[0.1, 0.2, 0.3, 0.15, 0.25]])
    got = categorical.project(support, atoms, probabilities).numpy()[0]
    expected = np.zeros(len(support))
    expected[0] = 0.1 + 0.2
    expected[-1] = 0.3 + 0.15 + 0.125
    expected[-2] = 0.125                                     # 2.5 is half-way between 2 and 3
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_interpolation_and_mean_inside_the_support():
    """Inside [v_min, v_max] the kernel splits mass linearly, so it preserves the mean."""
    atoms, probabilities = _random_case(2, NON_UNIFORM)
    atoms = np.clip(atoms, NON_UNIFORM[0], NON_UNIFORM[-1])
    got = categorical.project(NON_UNIFORM, atoms, probabilities).numpy()
    np.testing.assert_allclose(got @ NON_UNIFORM, np.sum(atoms * probabilities, axis=-1),
                               rtol=1e-10, atol=1e-10)
    got = categorical.project(UNIFORM, [[0.4]], [[1.0]]).numpy()[0]
    np.testing.assert_allclose(got, [0, 0, 0, 0.6, 0.4, 0, 0], atol=1e-12)


@pytest.mark.parametrize('support', [UNIFORM, NON_UNIFORM, np.array([0.7])],
                         ids=['uniform', 'non_uniform', 'single_point'])
def test_output_sums_to_one(support):
    atoms, probabilities = _random_case(3, support if len(support) > 1 else UNIFORM)
    got = categorical.project(support, atoms, probabilities).numpy()
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(got >= 0)
    if len(support) == 1:
        np.testing.assert_allclose(got, 1.0, rtol=1e-12)


def test_linear_in_signed_weights():
    """Distributional Retrace projects signed mixtures: the projection must stay linear."""
    atoms, probabilities = _random_case(4, UNIFORM)
    weights = np.random.default_rng(4).normal(size=probabilities.shape)
    got = categorical.project(UNIFORM, atoms, weights).numpy()
    np.testing.assert_allclose(got, _reference(UNIFORM, atoms, weights), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=-1), weights.sum(axis=-1), rtol=1e-10, atol=1e-12)


def test_bad_support_rank_raises():
    with pytest.raises(ValueError, match='support'):
        categorical.project(UNIFORM[None], [[0.0]], [[1.0]])
