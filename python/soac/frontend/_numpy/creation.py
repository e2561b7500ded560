"""Arrays made from sizes and values: ``full``, ``zeros``, ``ones``, their
``_like`` forms, ``empty``, ``eye``, ``identity``, ``arange``, ``linspace``,
``fromfunction``, ``tril`` and ``triu`` (nested maps over iotas) and
``array`` (from a nested list of scalars).

Sizes may be Python ints (static) or traced integer scalars (dynamic), such
as the entries of ``x.shape`` of a traced argument."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from .. import combinators, elementwise, tracing
from ..array import Array, coerce, lift
from ..dtypes import result_type
from ..locations import TraceError, located
from ..math import floor
from .shapes import is_static, size_max, split_leading

__all__ = [
    "arange", "array", "empty", "empty_like", "eye", "fromfunction", "full", "full_like", "identity", "linspace",
    "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
]


def build(sizes: Sequence[Any], fn: Callable[..., Any]) -> Array:
    """The array of ``sizes`` whose element (or trailing sub-array) at
    ``(i, j, ...)`` is ``fn(i, j, ...)``, called once on traced int64
    indices: the building block of the numpy layer's gathers (a body reading
    ``x[i, j]`` differentiates into a sparse accumulation into ``x``).

    It is one ``soac.map`` over ``soac.iota`` of the number of positions,
    which are unraveled into indices, and a ``tensor.expand_shape`` of the
    result: one flat loop lowers and bufferizes much faster than nested maps
    (and its adjoint is one accumulation)."""
    sizes = tuple(sizes)
    if not sizes:
        return lift(fn())
    if len(sizes) == 1:
        return lift(combinators.map(fn, combinators.iota(sizes[0])))

    def element(position: Array) -> Any:
        indices = []
        for size in reversed(sizes[1:]):
            indices.append(_unsigned("remui", position, size))
            position = _unsigned("divui", position, size)
        return fn(position, *reversed(indices))

    total: Any = 1
    for size in sizes:
        total = total * size
    return split_leading(lift(combinators.map(element, combinators.iota(total))), sizes)


def _unsigned(name: str, a: Array, b: Any) -> Array:
    """``a // b`` or ``a % b`` of non-negative int64 values (positions and sizes)."""
    if isinstance(b, (int, np.integer)) and int(b) == 1:
        return a if name == "divui" else lift(0)
    op = getattr(arith, name)
    return elementwise.broadcast(op, *elementwise.operands(a, b, dtype=np.int64))


def _shape_tuple(shape: Any) -> tuple[Any, ...]:
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    for s in shape:
        if not is_static(s) and not (isinstance(s, Array) and s.ndim == 0 and s.dtype.kind == "i"):
            raise TraceError(f"a size must be an integer (Python or a traced scalar), got {s!r}")
    return shape


@located
def full(shape: Any, fill_value: Any, dtype: Any = None) -> Array:
    """An array of ``shape`` (ints, static or traced) filled with
    ``fill_value``: a map over its positions. The dtype is ``dtype``, else the
    fill value's (a Python float gives float64, an int int64, as in JAX); an
    array ``fill_value`` is broadcast (on axes of static size 1 only).

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.full((2, x.shape[0]), 1.5))(np.zeros(3))
    array([[1.5, 1.5, 1.5],
           [1.5, 1.5, 1.5]])
    """
    shape = _shape_tuple(shape)
    (fill,) = elementwise.operands(fill_value, dtype=None if dtype is None else np.dtype(dtype))
    if fill.ndim:
        return elementwise.broadcast(lambda _, v: v, full(shape, 0, fill.dtype), fill)
    if not shape:
        return fill
    return build(shape, lambda *_: fill)


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


@located
def zeros(shape: Any, dtype: Any = np.float64) -> Array:
    """An array of zeros of ``shape`` (ints, static or traced)."""
    return full(shape, 0, dtype)


@located
def ones(shape: Any, dtype: Any = np.float64) -> Array:
    """An array of ones of ``shape`` (ints, static or traced)."""
    return full(shape, 1, dtype)


@located
def empty(shape: Any, dtype: Any = np.float64) -> Array:
    """:func:`zeros` (as JAX's: traced arrays are never uninitialized)."""
    return full(shape, 0, dtype)


@located
def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Array:
    """An array shaped as ``a`` (or ``shape``) of ``a``'s dtype (or ``dtype``) filled with ``fill_value``."""
    a = lift(a)
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    """Zeros shaped as ``a`` (or ``shape``), of ``a``'s dtype (or ``dtype``)."""
    return full_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    """Ones shaped as ``a`` (or ``shape``), of ``a``'s dtype (or ``dtype``)."""
    return full_like(a, 1, dtype, shape)


def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    """:func:`zeros_like` (traced arrays are never uninitialized)."""
    return full_like(a, 0, dtype, shape)


@located
def fromfunction(function: Callable[..., Any], shape: Any, dtype: Any = np.float64) -> Array:
    """The array whose element at ``(i, j, ...)`` is ``function(i, j, ...)``.

    Unlike numpy, which calls ``function`` once on arrays of all the indices,
    it is called once on traced scalar indices (of ``dtype``, float64 by
    default as in numpy) inside nested maps, as JAX's (which vmaps it); so
    it must compute one element from scalars, and may read arrays at them.

    >>> import numpy as np, soac
    >>> soac.jit(lambda n: soac.numpy.fromfunction(lambda i, j: i * 10 + j, (2, n), dtype=int))(3)
    array([[ 0,  1,  2],
           [10, 11, 12]])
    """
    shape = _shape_tuple(shape)
    dtype = np.dtype(dtype)
    return build(shape, lambda *indices: function(*[i if i.dtype == dtype else i.astype(dtype) for i in indices]))


@located
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    """``start, start + step, ...`` up to ``stop`` (excluded); ``arange(n)``
    is ``0 .. n-1``. The bounds and the step may be traced scalars (so may
    the length); the dtype is ``dtype``, else that of the bounds (ints give
    int64, as in JAX with 64-bit types). A traced step of 0 gives an empty
    array where numpy raises.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: (soac.numpy.arange(x.shape[0]), soac.numpy.arange(1.0, 2.0, 0.25)))(np.zeros(3))
    (array([0, 1, 2]), array([1.  , 1.25, 1.5 , 1.75]))
    """
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    for value in (start, stop, step):
        if isinstance(value, Array) and value.ndim:
            raise TraceError(f"arange takes scalar bounds, got {value!r}")
    if is_static(step) and int(step) == 0 or isinstance(step, float) and step == 0.0:
        raise TraceError("arange: the step is 0")
    dtype = np.dtype(dtype) if dtype is not None else result_type(start, stop, step)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in (start, stop, step)):
        count: Any = max(math.ceil((stop - start) / step), 0)
        if all(is_static(v) for v in (start, stop, step)):
            count = max(-((int(start) - int(stop)) // int(step)), 0)  # exact for large ints
    else:
        kind = result_type(start, stop, step)
        if kind.kind in "ib":
            start_, stop_, step_ = elementwise.operands(start, stop, step, dtype=np.int64)
            safe = elementwise.where(step_ == 0, 1, step_)
            count = elementwise.where(step_ == 0, 0, -elementwise.floor_divide(start_ - stop_, safe))
        else:
            start_, stop_, step_ = elementwise.operands(start, stop, step, dtype=np.float64)
            count = (-floor((start_ - stop_) / step_)).astype(np.int64)
        count = size_max(count, 0)
    start_, step_ = elementwise.operands(start, step, dtype=dtype)
    indices = combinators.iota(count)
    return elementwise.astype(indices, dtype) * step_ + start_


@located
def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when
    ``endpoint``); ``start`` and ``stop`` may be traced, and arrays (the
    values then run along ``axis``), ``num`` a traced int. With ``retstep``
    also returns the spacing. Differentiates in ``start`` and ``stop``.

    >>> import numpy as np, soac
    >>> soac.jit(lambda a: soac.numpy.linspace(a, 2.0 * a, 5))(np.float64(1.0))
    array([1.  , 1.25, 1.5 , 1.75, 2.  ])
    """
    dtype = np.dtype(dtype) if dtype is not None else result_type(start, stop, 1.0)
    compute = dtype if dtype.kind == "f" else np.dtype(np.float64)
    start, stop = elementwise.operands(start, stop, dtype=compute)
    if is_static(num) and int(num) < 0:
        raise TraceError(f"linspace: the number of samples must be non-negative, got {num}")
    divisions = num - 1 if endpoint else num
    delta = stop - start
    step = delta / size_max(divisions, 1)
    last = num - 1

    def sample(i: Array) -> Array:
        value = start + i.astype(compute) * step
        if endpoint:
            value = elementwise.where(i == last, stop, value)
        return value

    values = build([num], sample)
    if dtype != compute:
        values = values.astype(dtype)
    if values.ndim > 1 and axis != 0:
        from_axis = list(range(1, values.ndim))
        target = axis % values.ndim
        order = from_axis[:target] + [0] + from_axis[target:]
        values = build([values.dim(a) for a in order], lambda *ix: values[tuple(ix[order.index(d)] for d in range(values.ndim))])
    if retstep:
        spacing = delta / divisions if not (is_static(divisions) and divisions == 0) else delta * float("nan")
        return values, spacing
    return values


@located
def eye(N: Any, M: Any = None, k: Any = 0, dtype: Any = np.float64) -> Array:
    """The ``N`` x ``M`` matrix (``M`` defaults to ``N``) with ones on the
    ``k``-th diagonal; sizes and ``k`` may be traced.

    >>> import numpy as np, soac
    >>> soac.jit(lambda n: soac.numpy.eye(n, 3, k=1, dtype=int))(2)
    array([[0, 1, 0],
           [0, 0, 1]])
    """
    M = N if M is None else M
    dtype = np.dtype(dtype)
    return build([N, M], lambda i, j: elementwise.astype(j - i == k, dtype))


def identity(n: Any, dtype: Any = np.float64) -> Array:
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype)


def _triangle(m: Any, k: Any, lower: bool, what: str) -> Array:
    m = lift(m)
    if m.ndim < 2:
        raise TraceError(f"{what} needs an array of rank 2 or more, got {m!r}")
    mask = build([m.dim(m.ndim - 2), m.dim(m.ndim - 1)], lambda i, j: (j - i <= k) if lower else (j - i >= k))
    (zero,) = elementwise.operands(0, dtype=m.dtype)  # m's dtype: bools stay bools, as in JAX
    return elementwise.where(mask, m, zero)


@located
def tril(m: Any, k: Any = 0) -> Array:
    """``m`` with the elements above the ``k``-th diagonal zeroed (of the last two axes).

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.tril)(np.arange(1.0, 7.0).reshape(2, 3))
    array([[1., 0., 0.],
           [4., 5., 0.]])
    """
    return _triangle(m, k, True, "tril")


@located
def triu(m: Any, k: Any = 0) -> Array:
    """``m`` with the elements below the ``k``-th diagonal zeroed (of the last two axes)."""
    return _triangle(m, k, False, "triu")
