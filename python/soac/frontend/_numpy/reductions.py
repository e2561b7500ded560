"""Reductions: ``soac.reduce`` along axis 0 folds whole rows; along a later
axis it runs inside a ``soac.map`` over the leading ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import combinators
from ..array import Array, lift
from ..locations import located
from ..math import exp, log, maximum
from .creation import full
from .shapes import normalize_axis, size

__all__ = ["logsumexp", "max", "mean", "sum"]


def sum(x: Any, axis: int | None = None) -> Array:  # noqa: A001  (numpy's name)
    """The sum of all elements, or along ``axis``.

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: (soac.numpy.sum(m), soac.numpy.sum(m, axis=1)))(np.arange(6.0).reshape(2, 3))
    (np.float64(15.0), array([ 3., 12.]))
    """
    return _reduction(x, axis, sum_rows)


def max(x: Any, axis: int | None = None) -> Array:  # noqa: A001  (numpy's name)
    """The largest element, or the largest along ``axis`` (-inf for none)."""
    return _reduction(x, axis, _max_rows)


@located
def mean(x: Any, axis: int | None = None) -> Array:
    """The mean of all elements, or along ``axis`` (integers give float64)."""
    x = lift(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    count = size(x, axis)
    return sum(x, axis) / (count.astype(x.dtype) if isinstance(count, Array) else count)


def logsumexp(x: Any, axis: int | None = None) -> Array:
    """``log(sum(exp(x)))``, computed stably around the maximum."""

    def along_rows(rows: Array) -> Array:
        largest = _max_rows(rows)
        return largest + log(sum_rows(exp(rows - largest)))

    x = lift(x)
    if axis is None:
        largest = max(x)
        return largest + log(sum(exp(x - largest)))
    return _along(x, normalize_axis(axis, x.ndim), along_rows)


def sum_rows(x: Array) -> Array:
    """The sum of the rows of ``x`` (one ``soac.reduce``; the products build on it)."""
    return combinators.reduce(lambda a, b: a + b, x, _row_filled(x, 0))


def _reduction(x: Any, axis: int | None, rows: Callable[[Array], Array]) -> Array:
    x = lift(x)
    if axis is None:
        return _everything(x, rows)
    return _along(x, normalize_axis(axis, x.ndim), rows)


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


def _max_rows(x: Array) -> Array:
    # Python numbers, so that they take the dtype of x.
    lowest = float("-inf") if x.dtype.kind == "f" else int(np.iinfo(x.dtype).min)
    return combinators.reduce(maximum, x, _row_filled(x, lowest))


def _row_filled(x: Array, value: Any) -> Array | Any:
    """A neutral element shaped as a row of ``x``: the number itself for scalar rows."""
    if x.ndim == 1:
        return value
    return full([size(x, a) for a in range(1, x.ndim)], value, x.dtype)
