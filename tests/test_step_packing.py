"""agents/core/packing.py: the small step fields travel in one uint8 column and come back bit
for bit, in numpy and in a TensorFlow graph, batched or as one episode of unknown length; the
table signature it makes has one column for them."""
import numpy as np
import tensorflow as tf

from agents.core import packing
from agents.core import steps

SPEC = {
    'observation': tf.TensorSpec([3, 3, 1], tf.uint8),
    'action': tf.TensorSpec([], tf.int32),
    'reward': tf.TensorSpec([], tf.float32),
    'first': tf.TensorSpec([], tf.bool),
    'behaviour_logits': tf.TensorSpec([4], tf.float32),
    'position': tf.TensorSpec([], tf.int64),
    steps.STACK_DEPTH: tf.TensorSpec([], tf.uint8),
    steps.CORE_STATE: (tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32)),
}
FIELDS = ('action', 'reward', 'first', 'behaviour_logits', 'position', steps.STACK_DEPTH)


def _step(rng):
    return {'observation': rng.integers(0, 256, (3, 3, 1), np.uint8),
            'action': np.int32(rng.integers(-20, 20)),
            'reward': np.float32(rng.normal() * 1e3),
            'first': np.bool_(rng.integers(2)),
            'behaviour_logits': rng.normal(size=4).astype(np.float32),
            'position': np.int64(rng.integers(2**40)),
            steps.STACK_DEPTH: np.uint8(rng.integers(4)),
            steps.CORE_STATE: (rng.normal(size=2).astype(np.float32),
                               rng.normal(size=2).astype(np.float32))}


def _items(packer, rng, batch, length):
    written = [[_step(rng) for _ in range(length)] for _ in range(batch)]
    packed = [[packer.pack(step) for step in item] for item in written]
    data = {name: np.stack([np.stack([step[name] for step in item]) for item in packed])
            for name in ('observation', packing.PACKED)}
    return written, data


def test_numpy_and_graph_unpacking_give_back_every_field_bit_for_bit():
    rng = np.random.default_rng(0)
    packer = packing.StepPacking(SPEC, kept=('observation', steps.CORE_STATE))
    written, data = _items(packer, rng, batch=3, length=5)
    by_numpy = packer.unpack(data)
    by_graph = tf.function(packer.unpack_tensors)(
        {name: tf.constant(value) for name, value in data.items()})
    for name in ('observation', *FIELDS):
        expected = np.stack([np.stack([step[name] for step in item]) for item in written])
        for unpacked in (by_numpy[name], by_graph[name].numpy()):
            assert unpacked.dtype == expected.dtype and unpacked.shape == expected.shape, name
            np.testing.assert_array_equal(unpacked.view(np.uint8), expected.view(np.uint8))
        assert by_graph[name].shape == expected.shape     # static shapes for the learner
    assert steps.CORE_STATE not in by_numpy and steps.CORE_STATE not in by_graph


def test_an_episode_of_unknown_length_unpacks_in_a_graph():
    rng = np.random.default_rng(1)
    packer = packing.StepPacking(SPEC, kept=('observation', steps.CORE_STATE))
    written, data = _items(packer, rng, batch=1, length=7)
    episode = {name: value[0] for name, value in data.items()}
    unpack = tf.function(packer.unpack_tensors, input_signature=[{
        'observation': tf.TensorSpec([None, 3, 3, 1], tf.uint8),
        packing.PACKED: tf.TensorSpec([None, data[packing.PACKED].shape[-1]], tf.uint8)}])
    fields = unpack(episode)
    for name in FIELDS:
        np.testing.assert_array_equal(fields[name].numpy(),
                                      np.stack([step[name] for step in written[0]]))


def test_the_core_state_packed_with_the_rest_is_the_first_steps():
    rng = np.random.default_rng(2)
    packer = packing.StepPacking(SPEC)
    written, data = _items(packer, rng, batch=2, length=4)
    for fields in (packer.unpack(data),
                   packer.unpack_tensors({n: tf.constant(v) for n, v in data.items()})):
        for k in range(2):
            np.testing.assert_array_equal(np.asarray(fields[steps.CORE_STATE][1][k]),
                                          written[k][0][steps.CORE_STATE][1])


def test_the_signature_has_one_column_for_the_packed_fields():
    packer = packing.StepPacking(SPEC, kept=('observation', steps.CORE_STATE))
    for length in (21, None):
        signature = packer.signature(steps.trajectory_signature(SPEC, length))
        assert set(signature) == {'observation', steps.CORE_STATE, packing.PACKED}
        width = 4 + 4 + 1 + 16 + 8 + 1
        assert signature[packing.PACKED].shape.as_list() == [length, width]
        assert signature[packing.PACKED].dtype == tf.uint8
        assert signature['observation'].shape.as_list() == [length, 3, 3, 1]
