"""Steps whose small fields travel in one Reverb column.

Reverb keeps, for every item in every table, a record per column (its chunk slices and chunk
references), so an item of many small columns costs far more than their bytes: Reactor's 14
small step fields (core state included) took 4 times the memory of the frames
(benchmarks/README.md, "Replay memory per stored step"). An actor pays per column too: each
column of each appended step comes back to Python as a reference object, whose type lookup
took most of `TrajectoryWriter.append`'s time in an IMPALA actor (benchmarks/README.md, "Every
CPU-second of a local run"). `StepPacking` writes the fields as one uint8 vector per step,
their bytes in a fixed order, and gives the learner back the fields of the step schema
(agents/core/steps.py), bit for bit: in numpy (`unpack`) or in a TensorFlow graph
(`unpack_tensors`).
"""
from typing import Any, Mapping, Sequence

import numpy as np
import tensorflow as tf
import tree

from agents.core import steps

PACKED = 'packed'


class StepPacking:
    """Packs every field of `step_spec` but `kept` into the uint8 vector PACKED."""

    def __init__(self, step_spec: Mapping[str, Any], kept: Sequence[str] = ('observation',)):
        self._kept = tuple(name for name in kept if name in step_spec)
        self._packed = {name: spec for name, spec in step_spec.items() if name not in kept}
        self._leaves = [(path[0] == steps.CORE_STATE, spec.dtype.as_numpy_dtype,
                         tuple(spec.shape))
                        for path, spec in tree.flatten_with_path(self._packed)]
        sizes = [np.dtype(dtype).itemsize * int(np.prod(shape)) for _, dtype, shape in self._leaves]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        # One record of the leaves, unaligned: numpy fills it from a tuple in one call.
        self._record = np.dtype([(f'f{i}', dtype, shape)
                                 for i, (_, dtype, shape) in enumerate(self._leaves)])
        self.fields = tuple(step_spec)
        self.step_spec = {**{name: step_spec[name] for name in self._kept},
                          PACKED: tf.TensorSpec([int(self._offsets[-1])], tf.uint8)}

    def pack(self, step: Mapping[str, Any]) -> dict:
        """The step as written: the kept fields and PACKED."""
        record = np.array([tuple(tree.flatten({name: step[name] for name in self._packed}))],
                          self._record)
        return {**{name: step[name] for name in self._kept}, PACKED: record.view(np.uint8)}

    def signature(self, signature: Mapping[str, Any]) -> dict:
        """A table signature of items of these steps (`steps.trajectory_signature`, or
        `steps.frame_signature`'s, whose STACK_DEPTH the packing may hold) as the packed
        steps make them: the packed fields' columns replaced by PACKED's."""
        length = tree.flatten(signature[next(iter(self._packed))])[0].shape[0]
        return {**{name: spec for name, spec in signature.items() if name not in self._packed},
                PACKED: tf.TensorSpec([length, int(self._offsets[-1])], tf.uint8, PACKED)}

    def unpack(self, trajectory: Mapping[str, Any]) -> dict:
        """An item of consecutive packed steps ([..., T, bytes]) as `steps.trajectory_signature`
        lays it out: every field [..., T, ...], the core state of the first step alone."""
        packed = np.asarray(trajectory[PACKED])
        leaves = []
        for (first, dtype, shape), start, stop in zip(self._leaves, self._offsets,
                                                      self._offsets[1:]):
            raw = np.ascontiguousarray(packed[..., :1, start:stop] if first
                                       else packed[..., start:stop])
            leaves.append(raw.view(dtype).reshape(*packed.shape[:-2 if first else -1], *shape))
        return {**{name: value for name, value in trajectory.items() if name != PACKED},
                **tree.unflatten_as(self._packed, leaves)}

    def unpack_tensors(self, trajectory: Mapping[str, Any]) -> dict:
        """`unpack` in a TensorFlow graph (a dataset's map): the same fields from the same
        bytes, with static shapes where PACKED's are known."""
        packed = trajectory[PACKED]
        outer = (packed.shape[:-1].as_list() if packed.shape[:-1].is_fully_defined()
                 else tf.unstack(tf.shape(packed)[:-1]))
        leaves = []
        for (first, dtype, shape), start, stop in zip(self._leaves, self._offsets,
                                                      self._offsets[1:]):
            raw = packed[..., :1, start:stop] if first else packed[..., start:stop]
            size = np.dtype(dtype).itemsize
            if dtype == np.bool_:
                value = tf.cast(raw, tf.bool)
            elif size == 1:
                value = tf.bitcast(raw, tf.as_dtype(dtype))
            else:
                value = tf.bitcast(tf.reshape(raw, [*outer[:-1], 1 if first else outer[-1],
                                                    (stop - start) // size, size]),
                                   tf.as_dtype(dtype))
            leaves.append(tf.reshape(value, [*(outer[:-1] if first else outer), *shape]))
        return {**{name: value for name, value in trajectory.items() if name != PACKED},
                **tree.unflatten_as(self._packed, leaves)}
