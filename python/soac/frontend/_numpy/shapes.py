"""Sizes and axes of traced arrays: ``size``, and the axis checks the other
families share."""

from __future__ import annotations

from typing import Any

from mlir import ir
from mlir.dialects import arith

from .. import tracing
from ..array import Array, lift
from ..locations import TraceError, located

__all__ = ["size"]


@located
def size(x: Any, axis: int | None = None) -> Array | int:
    """The size of ``x`` along ``axis`` (all elements when None): a Python int
    when static, else a traced int64."""
    x = lift(x)
    axes = range(x.ndim) if axis is None else [normalize_axis(axis, x.ndim)]
    total: Array | int = 1
    for a in axes:
        total = total * (x.shape[a] if x.shape[a] is not None else Array(arith.index_cast(ir.IntegerType.get_signless(64), tracing.dim(x.value, a))))
    return total


def normalize_axis(axis: int, ndim: int) -> int:
    """``axis`` of an array of rank ``ndim`` counted from 0 (numpy's negative axes count from the end)."""
    if not -ndim <= axis < ndim:
        raise TraceError(f"axis {axis} is out of range for an array of rank {ndim}")
    return axis % ndim
