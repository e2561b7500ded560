"""Sizes and axes of traced arrays: ``size``, and the axis checks the other
families share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import combinators, elementwise
from ..array import Array, lift
from ..locations import TraceError, located
from ..math import maximum, minimum

__all__ = ["size"]


@located
def size(x: Any, axis: int | None = None) -> Array | int:
    """The size of ``x`` along ``axis`` (all elements when None): a Python int
    when static, else a traced int64."""
    x = lift(x)
    if axis is None:
        return x.size
    return x.dim(normalize_axis(axis, x.ndim))


def normalize_axis(axis: int, ndim: int) -> int:
    """``axis`` of an array of rank ``ndim`` counted from 0 (numpy's negative axes count from the end)."""
    if not -ndim <= axis < ndim:
        raise TraceError(f"axis {axis} is out of range for an array of rank {ndim}")
    return axis % ndim


def normalize_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...]:
    """``axis`` (None for every axis, an int, or a tuple of ints) as distinct
    axes counted from 0, in the order given."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TraceError(f"{what}: an axis must be a Python int, got {a!r}")
    normalized = tuple(normalize_axis(int(a), ndim) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise TraceError(f"{what}: repeated axis in {axis}")
    return normalized


def shape_string(x: Array) -> str:
    """The static shape of ``x`` as numpy prints it, ``?`` for a dynamic size: ``(3, ?)``, ``(4,)``."""
    sizes = ["?" if d is None else str(d) for d in x.static_shape]
    return "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")"


# Sizes are Python ints (static) or traced int64 scalars (dynamic); the
# helpers below fold when every operand is static.
Size = Any


def is_static(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def size_max(a: Size, b: Size) -> Size:
    return max(int(a), int(b)) if is_static(a) and is_static(b) else maximum(a, b)


def size_min(a: Size, b: Size) -> Size:
    return min(int(a), int(b)) if is_static(a) and is_static(b) else minimum(a, b)


def size_product(sizes: Any) -> Size:
    total: Size = 1
    for s in sizes:
        total = total * s
    return total


def size_floordiv(a: Size, b: Size) -> Size:
    """``a // b`` rounded towards -inf; a traced division by 0 gives 0."""
    if is_static(a) and is_static(b):
        return int(a) // int(b) if int(b) else 0
    return elementwise.floor_divide(a, b)


def size_equal(a: Size, b: Size) -> Any:
    """``a == b``: a Python bool when both are static, else a traced bool."""
    return int(a) == int(b) if is_static(a) and is_static(b) else elementwise.compare("eq", a, b)


def logical_and(p: Any, q: Any) -> Any:
    """``p and q`` on Python or traced bools, folding the Python ones."""
    if isinstance(p, (bool, np.bool_)):
        return q if p else False
    if isinstance(q, (bool, np.bool_)):
        return p if q else False
    return elementwise.binary("and", p, q)


def select(condition: Any, a: Any, b: Any) -> Any:
    """``a if condition else b`` for a Python or traced bool (``where`` on scalars)."""
    if isinstance(condition, (bool, np.bool_)):
        return a if condition else b
    return elementwise.where(condition, a, b)


def checked(position: Size, ok: Any, size: Size) -> Size:
    """``position``, or ``size`` where ``ok`` is false: an index of an axis of
    ``size`` that is out of range exactly when ``ok`` fails, so that the read
    it makes stops the program (``soac.IndexOutOfRangeError``) when sizes that
    are only known at run time do not fit."""
    return position if ok is True or isinstance(ok, np.bool_) and ok else select(ok, position, size)


def along(axis: int, fn: Callable[..., Any], *xs: Array) -> Any:
    """``fn`` applied to the sub-arrays of ``xs`` that start at ``axis``: a
    ``soac.map`` over each leading axis (shared by every ``x``)."""
    if axis == 0:
        return fn(*xs)
    return combinators.map(lambda *rows: along(axis - 1, fn, *rows), *xs)
