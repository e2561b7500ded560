"""Reductions and scans: ``soac.reduce`` along axis 0 folds whole rows; along
a later axis it runs inside a ``soac.map`` over the leading ones, and
several axes are reduced one after the other. ``cumsum`` and ``cumprod`` are
``soac.scan``\\ s; ``diff`` reads neighbours.

Every reduction takes ``axis`` (None for all axes, an int, or a tuple of
ints) and ``keepdims``, as numpy's; ``out``, ``initial`` and ``where`` are
not supported. A reduction of no elements gives its neutral element
(``max`` of nothing is -inf) where numpy raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import combinators, elementwise
from ..array import Array, lift
from ..locations import TraceError, located
from ..math import abs, exp, log, maximum, minimum, sqrt
from .creation import build, full
from .manipulation import broadcast_to, concatenate, expand_dims, moveaxis, ravel, reshape, transpose
from .shapes import along, normalize_axes, normalize_axis, size_max, size_product

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum", "diff", "logsumexp", "max",
    "mean", "min", "prod", "ptp", "std", "sum", "var",
]

Rows = Callable[[Array], Array]


@located
def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:  # noqa: A001  (numpy's name)
    """The sum of all elements, or along ``axis`` (bools count as int64).

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: (soac.numpy.sum(m), soac.numpy.sum(m, axis=1)))(np.arange(6.0).reshape(2, 3))
    (np.float64(15.0), array([ 3., 12.]))
    """
    return _reduction(_cast(a, dtype), axis, keepdims, sum_rows, "sum")


@located
def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    """The product of all elements, or along ``axis`` (its gradient is exact
    where elements are zero).

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.prod(m, axis=0))(np.arange(1.0, 7.0).reshape(2, 3))
    array([ 4., 10., 18.])
    """
    return _reduction(_cast(a, dtype), axis, keepdims, _prod_rows, "prod")


@located
def max(a: Any, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001  (numpy's name)
    """The largest element, or the largest along ``axis`` (NaN wins; -inf
    for none). The gradient goes to the first largest element.

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.max(m, axis=1, keepdims=True))(np.array([[1.0, 3.0], [2.0, 0.0]]))
    array([[3.],
           [2.]])
    """
    a = lift(a)
    if a.dtype == np.bool_:
        return any(a, axis, keepdims=keepdims)
    return _reduction(a, axis, keepdims, _max_rows, "max")


@located
def min(a: Any, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001  (numpy's name)
    """The smallest element, or the smallest along ``axis`` (NaN wins; inf
    for none). The gradient goes to the first smallest element."""
    a = lift(a)
    if a.dtype == np.bool_:
        return all(a, axis, keepdims=keepdims)
    return _reduction(a, axis, keepdims, _min_rows, "min")


amax, amin = max, min


@located
def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """The range of the values, ``max - min``, of all elements or along ``axis``."""
    return max(a, axis, keepdims) - min(a, axis, keepdims)


@located
def all(a: Any, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001  (numpy's name)
    """Whether every element (or every one along ``axis``) is true (non-zero)."""
    return _reduction(_truth(a), axis, keepdims, lambda rows: _fold(rows, lambda x, y: x & y, True), "all")


@located
def any(a: Any, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001  (numpy's name)
    """Whether some element (or some element along ``axis``) is true (non-zero)."""
    return _reduction(_truth(a), axis, keepdims, lambda rows: _fold(rows, lambda x, y: x | y, False), "any")


@located
def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """The number of non-zero (true) elements, of all or along ``axis``, as int64."""
    return sum(_truth(a).astype(np.int64), axis, keepdims=keepdims)


@located
def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    """The mean of all elements, or along ``axis`` (integers give float64).

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.mean(m, axis=(0, 1)))(np.arange(6.0).reshape(1, 2, 3))
    array([1.5, 2.5, 3.5])
    """
    a = _floating(a, dtype)
    axes = normalize_axes(axis, a.ndim, "mean")
    return sum(a, axes, keepdims=keepdims) / _count(a, axes)


@located
def var(a: Any, axis: Any = None, dtype: Any = None, ddof: Any = 0, keepdims: bool = False) -> Array:
    """The variance, ``sum((a - mean)**2) / (n - ddof)``, of all elements or
    along ``axis`` (integers give float64).

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.var(m, axis=1, ddof=1))(np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]]))
    array([2.33333333, 3.        ])
    """

    def variance(v: Array) -> Array:
        centered = v - sum_rows(v) / v.dim(0)
        return sum_rows(centered * centered) / (v.dim(0) - ddof)

    return _reduction(_floating(a, dtype), axis, keepdims, variance, "var")


@located
def std(a: Any, axis: Any = None, dtype: Any = None, ddof: Any = 0, keepdims: bool = False) -> Array:
    """The standard deviation, ``sqrt(var(a, axis, ddof=ddof))``."""
    return sqrt(var(a, axis, dtype, ddof, keepdims))


@located
def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False) -> Array:
    """``log(sum(b * exp(a)))`` over all elements or along ``axis`` (``b``
    defaults to 1 and broadcasts against ``a``), computed stably around the
    maximum (a maximum of ±inf is not subtracted, as in JAX). JAX's
    ``return_sign`` is not supported.

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.logsumexp(m, axis=1))(np.log(np.array([[1.0, 3.0], [2.0, 2.0]])))
    array([1.38629436, 1.38629436])
    """
    a = _floating(a, None)
    if b is not None:
        axes = normalize_axes(axis, a.ndim, "logsumexp")
        largest = _finite_or_zero(max(a, axes, keepdims=True))
        total = log(sum(b * exp(a - largest), axes, keepdims=True)) + largest
        return total if keepdims else _drop_axes(total, axes)

    def along_vector(v: Array) -> Array:
        largest = _finite_or_zero(_max_rows(v))
        return log(sum_rows(exp(v - largest))) + largest

    return _reduction(a, axis, keepdims, along_vector, "logsumexp")


def _finite_or_zero(x: Array) -> Array:
    return elementwise.where(abs(x) < np.inf, x, 0.0)


@located
def argmax(a: Any, axis: int | None = None, keepdims: bool = False) -> Array:
    """The position (int64) of the largest element of the flattened array,
    or along ``axis``: the first one on ties, the first NaN if any.

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: (soac.numpy.argmax(m), soac.numpy.argmax(m, axis=0)))(np.array([[1.0, 3.0], [3.0, 0.0]]))
    (np.int64(1), array([1, 0]))
    """
    return _arg_extremum(a, axis, keepdims, largest=True)


@located
def argmin(a: Any, axis: int | None = None, keepdims: bool = False) -> Array:
    """The position (int64) of the smallest element of the flattened array,
    or along ``axis``: the first one on ties, the first NaN if any."""
    return _arg_extremum(a, axis, keepdims, largest=False)


@located
def cumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Array:
    """The running sums of the flattened array, or along ``axis`` (a
    ``soac.scan``; bools count as int64).

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.cumsum(m, axis=1))(np.arange(6.0).reshape(2, 3))
    array([[ 0.,  1.,  3.],
           [ 3.,  7., 12.]])
    """
    a = _cast(a, dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return along(normalize_axis(axis, a.ndim), lambda rows: combinators.scan(lambda x, y: x + y, rows, _row_filled(rows, 0)), a)


@located
def cumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Array:
    """The running products of the flattened array, or along ``axis`` (a
    ``soac.scan`` of scalars: the axis is moved last first)."""
    a = _cast(a, dtype)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    last = a.ndim - 1

    def scan(rows: Array) -> Array:
        return combinators.scan(lambda x, y: x * y, rows, 1)

    if axis == last:
        return along(last, scan, a)
    return moveaxis(along(last, scan, moveaxis(a, axis, -1)), -1, axis)


@located
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Array:
    """The ``n``-th differences along ``axis``: ``a[i + 1] - a[i]``, ``n``
    times (bools: ``!=``); ``prepend`` / ``append`` values (scalars broadcast)
    are joined to ``a`` first.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.diff(x, n=2))(np.array([1.0, 2.0, 4.0, 7.0]))
    array([1., 1.])
    """
    a = lift(a)
    if a.ndim == 0:
        raise TraceError("diff needs an array of rank 1 or more")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise TraceError(f"diff: the order n must be a non-negative Python int, got {n!r}")
    axis = normalize_axis(axis, a.ndim)
    if prepend is not None or append is not None:
        parts = []
        for extra in (prepend, a, append):
            if extra is None:
                continue
            extra = lift(extra)
            if extra.ndim == 0:
                shape = list(a.shape)
                shape[axis] = 1
                extra = broadcast_to(extra, shape)
            parts.append(extra)
        a = concatenate(parts, axis=axis)

    def differences(x: Array) -> Array:
        sizes = list(x.shape)
        sizes[axis] = size_max(sizes[axis] - 1, 0)

        def element(*at: Array) -> Array:
            later = list(at)
            later[axis] = at[axis] + 1
            after, before = x[tuple(later)], x[at]
            return after != before if x.dtype == np.bool_ else after - before

        return build(sizes, element)

    for _ in range(int(n)):
        a = differences(a)
    return a


def sum_rows(x: Array) -> Array:
    """The sum of the rows of ``x`` (one ``soac.reduce``; the products build on it)."""
    return combinators.reduce(lambda a, b: a + b, x, _row_filled(x, 0))


def _reduction(x: Array, axis: Any, keepdims: bool, rows: Rows, what: str) -> Array:
    """``rows`` (a reduction of the rows of a vector) over the axes of ``axis``.

    The reduced axes are moved last (a transpose, unless they are last
    already) and each position of the other axes reduces one flat vector, in
    one ``soac.map`` over the merged other axes: the reverse rules of min,
    max and products want scalar operators, and one flat loop compiles
    fastest. Sums over axes that are not last fold whole rows instead, axis
    by axis from the last (no transpose; the reverse rule of a sum takes rows
    of any rank)."""
    x = lift(x)
    axes = normalize_axes(axis, x.ndim, what)
    trailing = sorted(axes) == list(range(x.ndim - len(axes), x.ndim))
    if x.ndim == 0:
        result = rows(ravel(x))  # one element
    elif not axes:
        result = x
    elif rows is sum_rows and not trailing:
        result = x
        for a in sorted(axes, reverse=True):
            result = along(a, rows, result)
    else:
        kept = [k for k in range(x.ndim) if k not in axes]
        moved = transpose(x, kept + sorted(axes))
        result = along(len(kept), lambda sub: rows(ravel(sub)), moved)
    return expand_dims(result, tuple(sorted(axes))) if keepdims and axes else result


def _drop_axes(x: Array, axes: tuple[int, ...]) -> Array:
    """``x`` without the axes of size 1 that a reduction with keepdims left."""
    for a in sorted(axes, reverse=True):
        x = along(a, lambda rows: rows[0], x)
    return x


def _cast(a: Any, dtype: Any) -> Array:
    """``a`` in ``dtype``; bools as int64 (numpy sums and multiplies bools as integers)."""
    a = lift(a)
    if dtype is not None:
        return a.astype(np.dtype(dtype)) if a.dtype != np.dtype(dtype) else a
    return a.astype(np.int64) if a.dtype == np.bool_ else a


def _floating(a: Any, dtype: Any) -> Array:
    """``a`` in ``dtype``, or as floats (integers and bools become float64)."""
    a = lift(a)
    target = np.dtype(dtype) if dtype is not None else a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    return a if a.dtype == target else a.astype(target)


def _truth(a: Any) -> Array:
    a = lift(a)
    return a if a.dtype == np.bool_ else a != 0


def _count(a: Array, axes: tuple[int, ...]) -> Any:
    """The number of elements the reduction over ``axes`` combines."""
    return size_product(a.dim(k) for k in axes)


def _fold(x: Array, op: Callable[[Any, Any], Any], neutral: Any) -> Array:
    return combinators.reduce(op, x, _row_filled(x, neutral))


def _prod_rows(x: Array) -> Array:
    return _fold(x, lambda a, b: a * b, 1)


def _max_rows(x: Array) -> Array:
    # Python numbers, so that they take the dtype of x.
    return _fold(x, maximum, float("-inf") if x.dtype.kind == "f" else int(np.iinfo(x.dtype).min))


def _min_rows(x: Array) -> Array:
    return _fold(x, minimum, float("inf") if x.dtype.kind == "f" else int(np.iinfo(x.dtype).max))


def _row_filled(x: Array, value: Any) -> Array | Any:
    """A neutral element shaped as a row of ``x``: the number itself for scalar rows."""
    if x.ndim == 1:
        return value
    return full([x.dim(a) for a in range(1, x.ndim)], value, x.dtype)


def _arg_extremum(a: Any, axis: int | None, keepdims: bool, largest: bool) -> Array:
    a = lift(a)
    if a.dtype == np.bool_:
        a = a.astype(np.int64)
    what = "argmax" if largest else "argmin"
    if axis is None:
        position = _arg_rows(ravel(a), largest) if a.ndim else lift(0)
        return reshape(position, (1,) * a.ndim) if keepdims and a.ndim else position
    if isinstance(axis, (tuple, list)):
        raise TraceError(f"{what} takes one axis, got {axis}")
    axis = normalize_axis(axis, a.ndim)
    position = along(a.ndim - 1, lambda rows: _arg_rows(rows, largest), moveaxis(a, axis, -1))
    return expand_dims(position, axis) if keepdims else position


def _arg_rows(x: Array, largest: bool) -> Array:
    """The first position of the extremum of the vector ``x``: a reduce of
    (value, position) pairs whose operator prefers the better value, then NaN,
    then the smaller position (so it is associative and commutative)."""
    floating = x.dtype.kind == "f"
    if floating:
        worst: Any = float("-inf") if largest else float("inf")
    else:
        worst = int(np.iinfo(x.dtype).min if largest else np.iinfo(x.dtype).max)
    positions = combinators.iota(x.dim(0))

    def better(v: Array, i: Array, w: Array, j: Array) -> tuple[Array, Array]:
        beats = (w > v) if largest else (w < v)
        ties = w == v
        if floating:
            w_nan, v_nan = w != w, v != v
            beats = beats | (w_nan & ~v_nan)
            ties = ties | (w_nan & v_nan)
        take = beats | (ties & (j < i))
        return elementwise.where(take, w, v), elementwise.where(take, j, i)

    _, position = combinators.reduce(better, (x, positions), (worst, int(np.iinfo(np.int64).max)))
    return position
