"""Products of vectors and matrices (``dot``, ``matvec``, ``matmul``): maps
and reductions, with no transposes and no gathers."""

from __future__ import annotations

from typing import Any

from .. import combinators, elementwise
from ..array import Array
from ..locations import TraceError, located
from .reductions import sum_rows

__all__ = ["dot", "matmul", "matvec"]


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
    return combinators.map(lambda row: sum_rows(row * x), A)


@located
def matmul(a: Any, b: Any) -> Array:
    """``a @ b`` for vectors and matrices: a row of the result is the sum of
    the rows of ``b`` scaled by a row of ``a`` (no transposes, no gathers)."""
    a, b = elementwise.operands(a, b)
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        raise TraceError(f"matmul takes vectors and matrices, got {a!r} and {b!r}")
    if a.static_shape[-1] is not None and b.static_shape[0] is not None and a.static_shape[-1] != b.static_shape[0]:
        raise TraceError(f"matmul: {a.static_shape[-1]} columns against {b.static_shape[0]} rows")
    if a.ndim == 2 and b.ndim == 1:
        return matvec(a, b)
    if a.ndim == 2:
        return combinators.map(lambda row: matmul(row, b), a)
    if b.ndim == 1:
        return sum_rows(a * b)
    return sum_rows(combinators.map(lambda ak, bk: ak * bk, a, b))
