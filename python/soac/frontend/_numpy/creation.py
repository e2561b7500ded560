"""Arrays made from nothing but sizes and values: ``full``, ``zeros``,
``ones``, ``zeros_like`` (nested maps over iotas) and ``array`` (from a
nested list of scalars)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from .. import combinators, tracing
from ..array import Array, coerce, lift
from ..locations import TraceError, located
from .shapes import size

__all__ = ["array", "full", "ones", "zeros", "zeros_like"]


@located
def full(shape: Any, value: Any, dtype: Any = np.float64) -> Array:
    """An array of ``shape`` (ints, static or traced) filled with ``value``: nested maps over iotas."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    fill = lift(value, like=tracing.element_type(np.dtype(dtype)))
    if not shape:
        return fill
    return combinators.map(lambda _: full(shape[1:], fill, dtype), combinators.iota(shape[0]))


@located
def array(values: Sequence[Any]) -> Array:
    """An array from a nested list of scalars (traced or numbers; numbers
    take the dtype of the traced ones, float64 when there are none): one
    ``tensor.from_elements``, whose derivative reads the cotangent back element
    by element. Its sizes are then made dynamic, as every traced array's
    (soac-autodiff's accumulators of free values assume it).

    >>> import numpy as np, soac
    >>> soac.jit(lambda a, b: soac.numpy.array([[a, 0.0], [b, a * b]]))(np.float64(2.0), np.float64(3.0))
    array([[2., 0.],
           [3., 6.]])
    """
    leaves, shape = _nested_leaves(values)
    traced = [leaf for leaf in leaves if isinstance(leaf, Array)]
    element = traced[0].value.type if traced else tracing.element_type(np.dtype(np.float64))
    elements = coerce(leaves, [element] * len(leaves), "array")
    static = tensor.from_elements(ir.RankedTensorType.get(shape, element), elements)
    return Array(tensor.cast(ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * len(shape), element), static))


def _nested_leaves(values: Any) -> tuple[list[Any], list[int]]:
    """The scalars of a nested list in row-major order, and its shape."""
    if not isinstance(values, (list, tuple)):
        if isinstance(values, Array) and values.ndim:
            raise TraceError(f"array takes scalars, got {values!r}; nest lists for more axes")
        return [values], []
    if not values:
        raise TraceError("array needs at least one element per axis")
    parts = [_nested_leaves(v) for v in values]
    if any(shape != parts[0][1] for _, shape in parts):
        raise TraceError("array: the nested lists have different lengths")
    return [leaf for leaves, _ in parts for leaf in leaves], [len(values), *parts[0][1]]


def zeros(shape: Any, dtype: Any = np.float64) -> Array:
    return full(shape, 0, dtype)


def ones(shape: Any, dtype: Any = np.float64) -> Array:
    return full(shape, 1, dtype)


def zeros_like(x: Any) -> Array:
    x = lift(x)
    return full([size(x, a) for a in range(x.ndim)], 0, x.dtype)
