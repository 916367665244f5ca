"""Steps whose small fields travel in one Reverb column.

Reverb keeps, for every item in every table, a record per column (its chunk slices and chunk
references), so an item of many small columns costs far more than their bytes: Reactor's 14
small step fields (core state included) took 4 times the memory of the frames
(benchmarks/README.md, "Replay memory per stored step"). `StepPacking` writes them as one
uint8 vector per step, their bytes in a fixed order, and gives the learner back the fields of
the step schema (agents/core/steps.py), bit for bit.
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
        self._kept = tuple(kept)
        self._packed = {name: spec for name, spec in step_spec.items() if name not in kept}
        self._leaves = [(path[0] == steps.CORE_STATE, spec.dtype.as_numpy_dtype,
                         tuple(spec.shape))
                        for path, spec in tree.flatten_with_path(self._packed)]
        sizes = [np.dtype(dtype).itemsize * int(np.prod(shape)) for _, dtype, shape in self._leaves]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.fields = tuple(step_spec)
        self.step_spec = {**{name: step_spec[name] for name in kept},
                          PACKED: tf.TensorSpec([int(self._offsets[-1])], tf.uint8)}

    def pack(self, step: Mapping[str, Any]) -> dict:
        """The step as written: the kept fields and PACKED."""
        leaves = tree.flatten({name: step[name] for name in self._packed})
        return {**{name: step[name] for name in self._kept},
                PACKED: np.concatenate([np.asarray(x, dtype).reshape(-1).view(np.uint8)
                                        for x, (_, dtype, _) in zip(leaves, self._leaves)])}

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
        return {**{name: trajectory[name] for name in self._kept},
                **tree.unflatten_as(self._packed, leaves)}
