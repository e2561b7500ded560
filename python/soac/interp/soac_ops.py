"""The soac ops, written as the sequential loops that define them.

reduce and scan fold left to right; any order is allowed by their semantics
(the operator is associative), so results of compiled code may differ from these
by floating-point rounding only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from ..errors import InterpretError
from .core import element_dtype, fail, handles, location

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _outer_size(op: ir.OpView, tensors: Sequence[np.ndarray], what: str) -> int:
    sizes = {t.shape[0] for t in tensors}
    if len(sizes) > 1:
        raise fail(op, f"{what} have different outer sizes {sorted(sizes)}")
    return sizes.pop()


def _stack(op: ir.OpView, rows: list[Any], result_type: ir.RankedTensorType) -> np.ndarray:
    """A tensor of ``result_type`` from its rows, checking that they are regular."""
    dtype = element_dtype(result_type)
    if not rows:
        # no rows to take inner sizes from: dynamic inner dims are empty
        return np.zeros([0] + [max(d, 0) for d in result_type.shape[1:]], dtype=dtype)
    shapes = {np.shape(row) for row in rows}
    if len(shapes) > 1:
        raise fail(op, f"rows of result have different shapes {sorted(shapes)}; arrays must be regular")
    return np.array(rows, dtype=dtype).reshape([len(rows), *np.shape(rows[0])])


def _in_range(index: Any, size: int) -> bool:
    return 0 <= int(index) < size


@handles("soac.iota")
def _iota(interp, op, operands):
    result_type = op.results[0].type
    size = int(operands[0]) if operands else result_type.shape[0]
    return [np.arange(size, dtype=element_dtype(result_type))]


@handles("soac.check_index")
def _check_index(interp, op, operands):
    index, size = (int(v) for v in operands)
    if not 0 <= index < size:
        what = ir.StringAttr(op.attributes["what"]).value
        raise fail(op, f"{what}: index {index} is out of range for size {size}")
    return [np.int64(index)]


@handles("soac.check")
def _check(interp, op, operands):
    condition, *values = operands
    if not condition:
        # The message names the op it checks for, as compiled code's does.
        message = ir.StringAttr(op.attributes["message"]).value
        raise InterpretError(f"{location(op)}: " + message.replace("%lld", "%d") % tuple(int(v) for v in values))
    return []


@handles("soac.map")
def _map(interp, op, operands):
    n = _outer_size(op, operands, "inputs")
    columns: list[list[Any]] = [[] for _ in op.results]
    for i in range(n):
        for column, value in zip(columns, interp.run_region(op.regions[0], [x[i] for x in operands])):
            column.append(value)
    return [_stack(op, column, result.type) for column, result in zip(columns, op.results)]


def _split_reduce_operands(op: ir.OpView, operands: list[Any]) -> tuple[list[Any], list[Any]]:
    k = len(op.results)
    return operands[:k], operands[k:]


def _check_operator(interp, op: ir.OpView, neutral: list[Any], rows: list[list[Any]]) -> None:
    """Compiled code folds in any order, from the neutral element in every
    chunk: an operator that is not associative, or an init that is not
    neutral, gives results the sequential fold here would hide. Tested on the
    first rows (up to float rounding)."""

    def apply(left, right):
        return interp.run_region(op.regions[0], [*left, *right])

    # Rounding differs between the two orders: a few ulps of the largest
    # operand (float32 sums that cancel differ by more than 1e-6 relative).
    finite = [np.abs(np.asarray(v, dtype=np.float64)) for row in rows for v in row]
    scale = max((float(np.max(v[np.isfinite(v)], initial=0.0)) for v in finite), default=0.0)

    def same(a, b):
        def close(x, y):
            x, y = np.asarray(x), np.asarray(y)
            eps = np.finfo(x.dtype).eps if np.issubdtype(x.dtype, np.floating) else 0.0
            return np.allclose(x, y, rtol=max(1e-6, 64 * eps), atol=max(1e-9, 64 * eps * scale), equal_nan=True)

        return all(close(x, y) for x, y in zip(a, b))

    if rows and not same(apply(neutral, rows[0]), rows[0]):
        raise fail(op, "the init values are not neutral for the operator (op(init, x) != x for the first row)")
    if len(rows) >= 3 and not same(apply(apply(rows[0], rows[1]), rows[2]), apply(rows[0], apply(rows[1], rows[2]))):
        raise fail(op, "the operator is not associative (checked on the first three rows)")


@handles("soac.reduce")
def _reduce(interp, op, operands):
    inputs, accumulated = _split_reduce_operands(op, operands)
    n = _outer_size(op, inputs, "inputs")
    _check_operator(interp, op, accumulated, [[x[i] for x in inputs] for i in range(min(n, 3))])
    for i in range(n):
        accumulated = interp.run_region(op.regions[0], [*accumulated, *(x[i] for x in inputs)])
    return accumulated


@handles("soac.scan")
def _scan(interp, op, operands):
    inputs, accumulated = _split_reduce_operands(op, operands)
    n = _outer_size(op, inputs, "inputs")
    _check_operator(interp, op, accumulated, [[x[i] for x in inputs] for i in range(min(n, 3))])
    columns: list[list[Any]] = [[] for _ in op.results]
    for i in range(n):
        accumulated = interp.run_region(op.regions[0], [*accumulated, *(x[i] for x in inputs)])
        for column, value in zip(columns, accumulated):
            column.append(value)
    return [_stack(op, column, result.type) for column, result in zip(columns, op.results)]


@handles("soac.scatter")
def _scatter(interp, op, operands):
    dest, indices, values = operands
    _outer_size(op, [indices, values], "indices and values")
    result = dest.copy()
    for i, index in enumerate(indices):
        if _in_range(index, len(result)):
            result[int(index)] = values[i]
    return [result]


@handles("soac.reduce_by_index")
def _reduce_by_index(interp, op, operands):
    k = len(op.results)
    dests, indices, values, neutral = operands[:k], operands[k], operands[k + 1 : 2 * k + 1], operands[2 * k + 1 :]
    bins = _outer_size(op, dests, "dests")
    _outer_size(op, [indices, *values], "indices and values")
    _check_operator(interp, op, neutral, [[v[i] for v in values] for i in range(min(len(indices), 3))])
    results = [d.copy() for d in dests]
    for i, index in enumerate(indices):
        if _in_range(index, bins):
            j = int(index)
            combined = interp.run_region(op.regions[0], [*(r[j] for r in results), *(v[i] for v in values)])
            for r, value in zip(results, combined):
                r[j] = value
    return results


@handles("soac.matmul")
def _matmul(interp, op, operands):
    lhs, rhs = operands
    if "transpose_lhs" in op.attributes:
        lhs = lhs.T
    if "transpose_rhs" in op.attributes:
        rhs = rhs.T
    if lhs.shape[1] != rhs.shape[0]:
        raise fail(op, f"contracts {lhs.shape[1]} columns of the left operand with {rhs.shape[0]} rows of the right one")
    return [np.matmul(lhs, rhs).astype(element_dtype(op.results[0].type))]


@handles("soac.vjp", "soac.jvp")
def _derivative(interp, op, operands):
    raise fail(op, "derivatives run once soac-autodiff has expanded them; the interpreter does not differentiate")
