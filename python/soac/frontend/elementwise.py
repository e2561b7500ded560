"""Elementwise operations with numpy broadcasting, built from ``soac.map``.

Operands are aligned on their trailing axes; the rows of the highest-rank
operands are mapped, lower-rank operands are free values of the map body, and
an axis of static size 1 meets a larger one by reading its only row.
Operands of different dtypes are promoted as in JAX (:mod:`.dtypes`: Python
numbers are weakly typed and take the dtype of the arrays they meet).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, math

from .. import builders
from . import tracing
from .array import Array, lift
from .dtypes import result_type
from .indexing import getitem
from .locations import TraceError, located

Scalar = Callable[..., ir.Value]

_FLOAT: dict[str, Scalar] = {
    "add": arith.addf, "sub": arith.subf, "mul": arith.mulf, "div": arith.divf,
    "max": arith.maximumf, "min": arith.minimumf, "pow": math.powf,
}
_INTEGER: dict[str, Scalar] = {
    "add": arith.addi, "sub": arith.subi, "mul": arith.muli,
    "max": arith.maxsi, "min": arith.minsi, "and": arith.andi, "or": arith.ori,
}
# numpy's arithmetic of bools is logical: + and maximum are or, * and minimum are and.
_BOOL: dict[str, Scalar] = {"and": arith.andi, "or": arith.ori, "add": arith.ori, "mul": arith.andi, "max": arith.ori, "min": arith.andi}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and": "&", "or": "|", "pow": "**", "max": "maximum", "min": "minimum"}

# numpy semantics: ordered comparisons are false on NaN, != is true.
_FLOAT_PREDICATES = {"lt": "OLT", "le": "OLE", "gt": "OGT", "ge": "OGE", "eq": "OEQ", "ne": "UNE"}
_INTEGER_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}


def broadcast(fn: Scalar, *arrays: Array) -> Array:
    """``fn`` (on scalar IR values) applied elementwise with numpy broadcasting."""
    rank = max(a.ndim for a in arrays)
    if rank == 0:
        return Array(fn(*[a.value for a in arrays]))
    sizes = {a.static_shape[0] for a in arrays if a.ndim == rank}
    if len({s for s in sizes if s is not None} - {1}) > 1:
        shapes = " and ".join(_shape(a) for a in arrays)
        raise TraceError(f"shapes {shapes} do not broadcast")
    if sizes != {1}:
        arrays = tuple(getitem(a, 0) if a.ndim == rank and a.static_shape[0] == 1 else a for a in arrays)
    mapped = [i for i, a in enumerate(arrays) if a.ndim == rank]

    def row(*rows: ir.Value) -> ir.Value:
        parts = list(arrays)
        for i, r in zip(mapped, rows):
            parts[i] = Array(r)
        return broadcast(fn, *parts).value

    return Array(builders.map([arrays[i].value for i in mapped], row))


def operands(*values: Any, dtype: np.dtype | None = None) -> list[Array]:
    """``values`` as Arrays of one dtype: ``dtype``, or the JAX promotion of theirs."""
    dtype = np.dtype(dtype) if dtype is not None else result_type(*values)
    like = tracing.element_type(dtype)
    arrays = [lift(v, like=like) for v in values]
    return [a if a.dtype == dtype else astype(a, dtype) for a in arrays]


@located
def binary(name: str, a: Any, b: Any) -> Array:
    """``a <name> b`` elementwise, after promotion; ``/`` of integers or bools
    divides their float64 values (numpy's true division)."""
    dtype = result_type(a, b)
    if name == "div" and dtype.kind != "f":
        dtype = np.dtype(np.float64)
    a, b = operands(a, b, dtype=dtype)
    table = {"f": _FLOAT, "i": _INTEGER, "b": _BOOL}[a.dtype.kind]
    if name not in table:
        raise TraceError(f"{_SYMBOLS[name]} is not defined on {a.dtype}")
    return broadcast(table[name], a, b)


@located
def floor_divide(a: Any, b: Any) -> Array:
    """``a // b`` as numpy's: rounded towards -inf; an integer divided by 0 is 0
    (numpy's value, which it also warns about), never a trap."""
    a, b = operands(a, b)
    if a.dtype.kind == "f":
        return broadcast(lambda x, y: math.floor(arith.divf(x, y)), a, b)
    if a.dtype.kind == "b":
        a, b = operands(a, b, dtype=np.int64)
    return broadcast(lambda x, y: _integer_division(x, y)[0], a, b)


@located
def remainder(a: Any, b: Any) -> Array:
    """``a % b`` as numpy's: the sign of the divisor; an integer modulo 0 is 0."""
    a, b = operands(a, b)
    if a.dtype.kind == "f":

        def float_remainder(x: ir.Value, y: ir.Value) -> ir.Value:
            r = arith.remf(x, y)  # the sign of x: move it to y's when they differ
            zero = arith.constant(x.type, 0.0)
            differ = arith.xori(arith.cmpf(arith.CmpFPredicate.OLT, r, zero), arith.cmpf(arith.CmpFPredicate.OLT, y, zero))
            fix = arith.andi(arith.cmpf(arith.CmpFPredicate.ONE, r, zero), differ)
            return arith.select(fix, arith.addf(r, y), r)

        return broadcast(float_remainder, a, b)
    if a.dtype.kind == "b":
        a, b = operands(a, b, dtype=np.int64)
    return broadcast(lambda x, y: _integer_division(x, y)[1], a, b)


def _integer_division(x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """numpy's floor quotient and remainder of integers. A divisor of 0 gives 0
    for both, and -1 is a negation: both would trap in the hardware division
    (SIGFPE for 0, and for the lowest integer over -1)."""
    zero, one = arith.constant(x.type, 0), arith.constant(x.type, 1)
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, y, zero)
    is_minus_one = arith.cmpi(arith.CmpIPredicate.eq, y, arith.constant(x.type, -1))
    safe = arith.select(arith.ori(is_zero, is_minus_one), one, y)
    quotient, rest = arith.divsi(x, safe), arith.remsi(x, safe)
    # Truncation rounds towards 0: step down when the remainder and the divisor differ in sign.
    floor = arith.andi(
        arith.cmpi(arith.CmpIPredicate.ne, rest, zero),
        arith.xori(arith.cmpi(arith.CmpIPredicate.slt, rest, zero), arith.cmpi(arith.CmpIPredicate.slt, safe, zero)),
    )
    quotient = arith.select(floor, arith.subi(quotient, one), quotient)
    rest = arith.select(floor, arith.addi(rest, safe), rest)
    quotient = arith.select(is_minus_one, arith.subi(zero, x), quotient)
    rest = arith.select(is_minus_one, zero, rest)
    return arith.select(is_zero, zero, quotient), arith.select(is_zero, zero, rest)


@located
def compare(name: str, a: Any, b: Any) -> Array:
    a, b = operands(a, b)
    if a.dtype.kind == "f":
        predicate = getattr(arith.CmpFPredicate, _FLOAT_PREDICATES[name])
        return broadcast(lambda x, y: arith.cmpf(predicate, x, y), a, b)
    predicate = getattr(arith.CmpIPredicate, _INTEGER_PREDICATES[name])
    return broadcast(lambda x, y: arith.cmpi(predicate, x, y), a, b)


@located
def power(a: Any, b: Any) -> Array:
    """``a ** b``: a small non-negative integer exponent multiplies (exact, and
    differentiable at 0); otherwise ``math.powf`` on floats."""
    if isinstance(a, Array) and isinstance(b, (int, np.integer)) and not isinstance(b, bool) and 0 <= b <= 8:
        a = lift(a)
        multiply = _FLOAT["mul"] if a.dtype.kind == "f" else _INTEGER["mul"]

        def repeated(x: ir.Value) -> ir.Value:
            result = arith.constant(x.type, 1.0 if a.dtype.kind == "f" else 1) if b == 0 else x
            for _ in range(int(b) - 1):
                result = multiply(result, x)
            return result

        return broadcast(repeated, a)
    a, b = operands(a, b)
    if a.dtype.kind != "f":
        raise TraceError(f"** on {a.dtype} needs a literal exponent in 0..8; convert with .astype(float)")
    return broadcast(math.powf, a, b)


@located
def negative(a: Any) -> Array:
    a = lift(a)
    if a.dtype.kind == "f":
        return broadcast(arith.negf, a)
    return broadcast(lambda x: arith.subi(arith.constant(x.type, 0), x), a)


@located
def logical_not(a: Any) -> Array:
    a = lift(a)
    if a.dtype.kind == "f":
        raise TraceError("~ is not defined on floats")
    return broadcast(lambda x: arith.xori(x, arith.constant(x.type, -1)), a)


def float_unary(name: str, op: Scalar, x: Any) -> Array:
    """A math function of floats, elementwise; integers and bools become float64 first (as in JAX)."""
    x = lift(x, like=ir.F64Type.get())
    if x.dtype.kind != "f":
        x = astype(x, np.float64)
    return broadcast(op, x)


@located
def where(condition: Any, a: Any, b: Any) -> Array:
    condition = lift(condition)
    if condition.dtype != np.bool_:
        raise TraceError(f"the condition of where must be bool, got {condition.dtype}")
    a, b = operands(a, b)
    return broadcast(arith.select, condition, a, b)


@located
def astype(x: Any, dtype: np.dtype) -> Array:
    x = lift(x)
    target = tracing.element_type(dtype)
    if target is None:
        raise TraceError(f"cannot convert to {dtype}")
    return broadcast(lambda v: convert(v, target), x)


def convert(value: ir.Value, target: ir.Type) -> ir.Value:
    """A scalar converted as numpy's astype does (floats to integers truncate)."""
    source = value.type
    if source == target:
        return value
    source_float, target_float = isinstance(source, ir.FloatType), isinstance(target, ir.FloatType)
    if source_float and target_float:
        wider = ir.FloatType(target).width > ir.FloatType(source).width
        return arith.extf(target, value) if wider else arith.truncf(target, value)
    if target_float:
        is_bool = ir.IntegerType(source).width == 1
        return arith.uitofp(target, value) if is_bool else arith.sitofp(target, value)
    if ir.IntegerType(target).width == 1:
        zero = arith.constant(source, 0.0 if source_float else 0)
        return arith.cmpf(arith.CmpFPredicate.UNE, value, zero) if source_float else arith.cmpi(arith.CmpIPredicate.ne, value, zero)
    if source_float:
        return arith.fptosi(target, value)
    source_width, target_width = ir.IntegerType(source).width, ir.IntegerType(target).width
    if target_width < source_width:
        return arith.trunci(target, value)
    return arith.extui(target, value) if source_width == 1 else arith.extsi(target, value)


def _shape(a: Array) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in a.static_shape) + ("," if a.ndim == 1 else "") + ")"
