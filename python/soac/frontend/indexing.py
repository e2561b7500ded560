"""Indexing traced arrays (``x[i]``, ``x[i, j]``): ``tensor.extract`` for an
element, ``tensor.extract_slice`` for a row (or sub-tensor) of a rank>1
tensor. Negative integers count from the end, as in numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import tracing
from .array import Array, index
from .locations import TraceError, located


@located
def getitem(array: Array, key: Any) -> Array:
    """``array[key]`` for integer (Python or traced) indices."""
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (slice, type(None), type(Ellipsis))) for k in key):
        raise TraceError("traced arrays are indexed by integers only (no slices, None or ...)")
    if len(key) > array.ndim:
        raise TraceError(f"{len(key)} indices for {array!r}")
    positions = [_position(array, axis, k) for axis, k in enumerate(key)]
    if len(key) == array.ndim:
        return Array(tensor.extract(array.value, positions))
    # Leading indices pick a sub-tensor: the row-slice form the derivative rules read sparsely.
    source = ir.RankedTensorType(array.value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    rest = list(source.shape[len(key):])
    sizes = [tracing.dim(array.value, axis) for axis in range(len(key), array.ndim) if ir.ShapedType.is_dynamic_size(source.shape[axis])]
    result = ir.RankedTensorType.get(rest, source.element_type)
    op = tensor.ExtractSliceOp(
        result, array.value, positions, sizes, [],
        [dynamic] * len(key) + [0] * len(rest), [1] * len(key) + rest, [1] * array.ndim,
    )
    return Array(op.result)


def _position(array: Array, axis: int, key: Any) -> ir.Value:
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and key < 0:
        return arith.subi(tracing.dim(array.value, axis), arith.constant(ir.IndexType.get(), -int(key)))
    return index(key)
