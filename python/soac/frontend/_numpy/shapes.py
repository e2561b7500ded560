"""Sizes and axes of traced arrays: ``size``, and the axis checks the other
families share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mlir import ir
from mlir.dialects import tensor

from .. import combinators, elementwise, tracing
from ..array import Array, index, lift
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


def size_less(a: Size, b: Size) -> Any:
    """``a < b``: a Python bool when both are static, else a traced bool."""
    return int(a) < int(b) if is_static(a) and is_static(b) else elementwise.compare("lt", a, b)


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
    """``fn`` applied to the sub-arrays of ``xs`` that start at ``axis``.

    For one array, its leading ``axis`` axes are merged into one
    (``tensor.collapse_shape``), one ``soac.map`` runs over it, and the
    leading axis of the result is split back (``tensor.expand_shape``): one
    flat loop compiles much faster than nested maps. Several arrays are
    mapped together, one axis at a time (so that a map checks that their
    leading sizes agree)."""
    if axis == 0:
        return fn(*xs)
    if len(xs) > 1 or axis == 1:
        return combinators.map(lambda *rows: along(axis - 1, fn, *rows), *xs)
    (x,) = xs
    sizes = tuple(x.dim(k) for k in range(axis))
    results = combinators.map(fn, merge_leading(x, axis))
    if isinstance(results, tuple):
        return tuple(split_leading(r, sizes) for r in results)
    return split_leading(results, sizes)


def merge_leading(x: Array, count: int) -> Array:
    """``x`` with its first ``count`` axes merged into one (a ``tensor.collapse_shape``, no copy)."""
    if count == 1:
        return x
    shape = x.static_shape
    merged = size_product(shape[:count]) if None not in shape[:count] else ir.ShapedType.get_dynamic_size()
    rest = [ir.ShapedType.get_dynamic_size() if s is None else s for s in shape[count:]]
    element = ir.RankedTensorType(x.value.type).element_type
    groups = [list(range(count))] + [[k] for k in range(count, x.ndim)]
    return Array(tensor.CollapseShapeOp(ir.RankedTensorType.get([merged, *rest], element), x.value, _groups(groups)).result)


def split_leading(flat: Array, sizes: tuple[Any, ...]) -> Array:
    """``flat`` with its leading axis split into ``sizes`` (ints or traced
    ints whose product is its size): a ``tensor.expand_shape``, no copy."""
    if len(sizes) == 1:
        return flat
    dynamic = ir.ShapedType.get_dynamic_size()
    rest = list(flat.static_shape[1:])
    element = ir.RankedTensorType(flat.value.type).element_type
    # tensor.expand_shape insists that the split axis is static exactly when
    # all its parts are. They can disagree when they came from different
    # operands: a static leading size with a dynamic part is forgotten, and
    # static parts of a dynamic leading size are passed as values.
    parts_static = all(is_static(s) for s in sizes)
    if flat.static_shape[0] is not None and not parts_static:
        flat = Array(tensor.CastOp(ir.RankedTensorType.get([dynamic, *[dynamic if r is None else r for r in rest]],
                                                           element), flat.value).result)
    as_values = parts_static and flat.static_shape[0] is None
    static = [int(s) if is_static(s) and not as_values else dynamic for s in sizes]
    static += [dynamic if r is None else r for r in rest]
    groups = [list(range(len(sizes)))] + [[len(sizes) + k] for k in range(len(rest))]
    dynamic_sizes = [index(s) for s in sizes if as_values or not is_static(s)]
    dynamic_sizes += [tracing.dim(flat.value, 1 + k) for k, r in enumerate(rest) if r is None]
    result = ir.RankedTensorType.get(static, element)
    return Array(tensor.ExpandShapeOp(result, flat.value, _groups(groups), dynamic_sizes, static).result)


def _groups(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, a) for a in g]) for g in groups])
