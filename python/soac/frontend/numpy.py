"""``soac.numpy``: a small numpy-like layer built only from SOACs.

Reductions are ``soac.reduce`` (along axis 0 they fold whole rows, along a
later axis they run inside a ``soac.map`` over the leading ones); products are
maps and reductions; elementwise functions broadcast as numpy does, on the
trailing axes.

>>> import numpy as np, soac
>>> import soac.numpy as snp  # the same module
>>> A, x = np.arange(6.0).reshape(2, 3), np.array([1.0, 0.5, 2.0])
>>> soac.jit(lambda A, x: snp.logsumexp(A @ x) - snp.mean(A, axis=0))(A, x)
array([13.50002754, 12.50002754, 11.50002754])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import combinators, elementwise, tracing
from .array import Array
from .locations import TraceError, located
from .math import abs, cos, erf, exp, expm1, floor, log, log1p, maximum, minimum, rsqrt, sin, sqrt, tanh  # noqa: F401

__all__ = [
    "abs", "add", "array", "cos", "divide", "dot", "erf", "exp", "expm1", "floor", "full", "log", "log1p",
    "logsumexp", "matmul", "matvec", "max", "maximum", "mean", "minimum", "multiply", "negative",
    "ones", "power", "rsqrt", "sin", "size", "sqrt", "subtract", "sum", "tanh", "where", "zeros", "zeros_like",
]


def add(x: Any, y: Any) -> Array:
    return elementwise.binary("add", x, y)


def subtract(x: Any, y: Any) -> Array:
    return elementwise.binary("sub", x, y)


def multiply(x: Any, y: Any) -> Array:
    return elementwise.binary("mul", x, y)


def divide(x: Any, y: Any) -> Array:
    return elementwise.binary("div", x, y)


def negative(x: Any) -> Array:
    return elementwise.negative(x)


def power(x: Any, y: Any) -> Array:
    return elementwise.power(x, y)


def where(condition: Any, x: Any, y: Any) -> Array:
    """``x`` where ``condition`` holds, else ``y`` (``arith.select``, elementwise)."""
    return elementwise.where(condition, x, y)


@located
def size(x: Any, axis: int | None = None) -> Array | int:
    """The size of ``x`` along ``axis`` (all elements when None): a Python int
    when static, else a traced int64."""
    x = tracing.lift(x)
    axes = range(x.ndim) if axis is None else [_axis(axis, x.ndim)]
    total: Array | int = 1
    for a in axes:
        total = total * (x.shape[a] if x.shape[a] is not None else Array(arith.index_cast(ir.IntegerType.get_signless(64), tracing.dim(x, a))))
    return total


@located
def full(shape: Any, value: Any, dtype: Any = np.float64) -> Array:
    """An array of ``shape`` (ints, static or traced) filled with ``value``: nested maps over iotas."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    fill = tracing.lift(value, like=tracing.element_type(np.dtype(dtype)))
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
    elements = tracing.coerce(leaves, [element] * len(leaves), "array")
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
    x = tracing.lift(x)
    return full([size(x, a) for a in range(x.ndim)], 0, x.dtype)


def sum(x: Any, axis: int | None = None) -> Array:  # noqa: A001  (numpy's name)
    """The sum of all elements, or along ``axis``.

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: (soac.numpy.sum(m), soac.numpy.sum(m, axis=1)))(np.arange(6.0).reshape(2, 3))
    (np.float64(15.0), array([ 3., 12.]))
    """
    return _reduction(x, axis, _sum_rows)


def max(x: Any, axis: int | None = None) -> Array:  # noqa: A001  (numpy's name)
    """The largest element, or the largest along ``axis`` (-inf for none)."""
    return _reduction(x, axis, _max_rows)


@located
def mean(x: Any, axis: int | None = None) -> Array:
    """The mean of all elements, or along ``axis`` (integers give float64)."""
    x = tracing.lift(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    count = size(x, axis)
    return sum(x, axis) / (count.astype(x.dtype) if isinstance(count, Array) else count)


def logsumexp(x: Any, axis: int | None = None) -> Array:
    """``log(sum(exp(x)))``, computed stably around the maximum."""

    def along_rows(rows: Array) -> Array:
        largest = _max_rows(rows)
        return largest + log(_sum_rows(exp(rows - largest)))

    x = tracing.lift(x)
    if axis is None:
        largest = max(x)
        return largest + log(sum(exp(x - largest)))
    return _along(x, _axis(axis, x.ndim), along_rows)


@located
def dot(a: Any, b: Any) -> Array:
    """The inner product of two vectors (a map fused into a reduce); as
    :func:`matmul` for matrices, a product for scalars."""
    a, b = elementwise.operands(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return matmul(a, b)


@located
def matvec(A: Any, x: Any) -> Array:
    """``A @ x``: a map over the rows of ``A`` of dot products with ``x``."""
    A, x = elementwise.operands(A, x)
    if A.ndim != 2 or x.ndim != 1:
        raise TraceError(f"matvec needs a matrix and a vector, got {A!r} and {x!r}")
    return combinators.map(lambda row: _sum_rows(row * x), A)


@located
def matmul(a: Any, b: Any) -> Array:
    """``a @ b`` for vectors and matrices: a row of the result is the sum of
    the rows of ``b`` scaled by a row of ``a`` (no transposes, no gathers)."""
    a, b = elementwise.operands(a, b)
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        raise TraceError(f"matmul takes vectors and matrices, got {a!r} and {b!r}")
    if a.shape[-1] is not None and b.shape[0] is not None and a.shape[-1] != b.shape[0]:
        raise TraceError(f"matmul: {a.shape[-1]} columns against {b.shape[0]} rows")
    if a.ndim == 2 and b.ndim == 1:
        return matvec(a, b)
    if a.ndim == 2:
        return combinators.map(lambda row: matmul(row, b), a)
    if b.ndim == 1:
        return _sum_rows(a * b)
    return _sum_rows(combinators.map(lambda ak, bk: ak * bk, a, b))


def _reduction(x: Any, axis: int | None, rows: Callable[[Array], Array]) -> Array:
    x = tracing.lift(x)
    if axis is None:
        return _everything(x, rows)
    return _along(x, _axis(axis, x.ndim), rows)


def _everything(x: Array, rows: Callable[[Array], Array]) -> Array:
    """``rows`` over every element: inner axes first, inside a map."""
    if x.ndim == 0:
        return x
    if x.ndim > 1:
        x = combinators.map(lambda row: _everything(row, rows), x)
    return rows(x)


def _along(x: Array, axis: int, rows: Callable[[Array], Array]) -> Array:
    if axis == 0:
        return rows(x)
    return combinators.map(lambda row: _along(row, axis - 1, rows), x)


def _sum_rows(x: Array) -> Array:
    return combinators.reduce(lambda a, b: a + b, x, _row_filled(x, 0))


def _max_rows(x: Array) -> Array:
    # Python numbers, so that they take the dtype of x.
    lowest = float("-inf") if x.dtype.kind == "f" else int(np.iinfo(x.dtype).min)
    return combinators.reduce(maximum, x, _row_filled(x, lowest))


def _row_filled(x: Array, value: Any) -> Array | Any:
    """A neutral element shaped as a row of ``x``: the number itself for scalar rows."""
    if x.ndim == 1:
        return value
    return full([size(x, a) for a in range(1, x.ndim)], value, x.dtype)


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise TraceError(f"axis {axis} is out of range for an array of rank {ndim}")
    return axis % ndim
