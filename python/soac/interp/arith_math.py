"""arith and math ops: elementwise on numpy scalars and arrays, in the op's dtype.

Integer arithmetic wraps around as in MLIR (numpy's overflow warnings are
silenced by the caller); signed and unsigned variants reinterpret the bits.
"""

from __future__ import annotations

import math as pymath
from typing import Any

import numpy as np
from mlir import ir

from .core import element_dtype, fail, handles

# --- helpers ---------------------------------------------------------------


def _unsigned(value: Any) -> Any:
    """The same bits read as an unsigned integer."""
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return value
    return array.astype(np.dtype(f"u{array.dtype.itemsize}"))[()]


def _as(value: Any, op: ir.OpView) -> Any:
    """``value`` converted to the element dtype of ``op``'s result."""
    return np.asarray(value).astype(element_dtype(op.results[0].type))[()]


def _check_divisor(op: ir.OpView, divisor: Any) -> None:
    if np.any(np.asarray(divisor) == 0):
        raise fail(op, "integer division by zero")


def _divide_truncating(a: Any, b: Any) -> Any:
    quotient = a // b
    remainder = a - quotient * b
    # floor division rounds toward -inf: move inexact negative quotients up
    return quotient + ((remainder != 0) & ((a < 0) != (b < 0)))


def _binary(function):
    def handler(interp, op, operands):
        return [_as(function(*operands), op)]

    return handler


def _unary(function):
    def handler(interp, op, operands):
        return [_as(function(operands[0]), op)]

    return handler


def _wide(function):
    """Evaluates ``function`` in float64 (for functions numpy lacks)."""
    vectorized = np.vectorize(function, otypes=[np.float64])
    return lambda x: vectorized(np.asarray(x, dtype=np.float64))


# --- arith -----------------------------------------------------------------


@handles("arith.constant")
def _constant(interp, op, operands):
    attribute = op.attributes["value"]
    type_ = op.results[0].type
    if isinstance(type_, ir.RankedTensorType):
        dense = ir.DenseElementsAttr(attribute)
        dtype = element_dtype(type_)
        if dense.is_splat:
            return [np.full(type_.shape, _attribute_value(dense.get_splat_value()), dtype=dtype)]
        return [np.array(dense, dtype=dtype).reshape(type_.shape)]
    return [element_dtype(type_).type(_attribute_value(attribute))]


def _attribute_value(attribute: ir.Attribute) -> Any:
    if isinstance(attribute, ir.FloatAttr):
        return attribute.value
    if isinstance(attribute, ir.IntegerAttr):
        return attribute.value
    if isinstance(attribute, ir.BoolAttr):
        return attribute.value
    raise TypeError(f"unsupported constant {attribute}")


_BINARY = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
    "arith.maximumf": np.maximum,  # NaN-propagating
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,  # NaN-ignoring
    "arith.minnumf": np.fmin,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.maxui": lambda a, b: np.where(_unsigned(a) >= _unsigned(b), a, b),
    "arith.minui": lambda a, b: np.where(_unsigned(a) <= _unsigned(b), a, b),
    "arith.shli": np.left_shift,
    "arith.shrsi": np.right_shift,
    "arith.shrui": lambda a, b: _unsigned(a) >> _unsigned(b),
    "math.powf": np.power,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
}
for _name, _function in _BINARY.items():
    handles(_name)(_binary(_function))


@handles("arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui")
def _integer_division(interp, op, operands):
    a, b = operands
    _check_divisor(op, b)
    name = op.operation.name
    if name == "arith.divsi":
        result = _divide_truncating(a, b)
    elif name == "arith.remsi":
        result = a - _divide_truncating(a, b) * b
    elif name == "arith.divui":
        result = _unsigned(a) // _unsigned(b)
    elif name == "arith.remui":
        result = _unsigned(a) % _unsigned(b)
    elif name == "arith.floordivsi":
        result = a // b
    elif name == "arith.ceildivui":
        result = -((-_unsigned(a).astype(object)) // _unsigned(b).astype(object))
    else:  # ceildivsi
        result = -((-a) // b)
    return [_as(result, op)]


handles("arith.negf")(_unary(np.negative))


# arith.cmpf predicates, by their enum value.
_CMPF = [
    lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),  # false
    lambda a, b: a == b,  # oeq
    lambda a, b: a > b,  # ogt
    lambda a, b: a >= b,  # oge
    lambda a, b: a < b,  # olt
    lambda a, b: a <= b,  # ole
    lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),  # one
    lambda a, b: ~np.isnan(a) & ~np.isnan(b),  # ord
    lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),  # ueq
    lambda a, b: ~(a <= b),  # ugt
    lambda a, b: ~(a < b),  # uge
    lambda a, b: ~(a >= b),  # ult
    lambda a, b: ~(a > b),  # ule
    lambda a, b: a != b,  # une
    lambda a, b: np.isnan(a) | np.isnan(b),  # uno
    lambda a, b: np.ones(np.broadcast(a, b).shape, bool),  # true
]

# arith.cmpi predicates, by their enum value.
_CMPI = [
    lambda a, b: a == b,  # eq
    lambda a, b: a != b,  # ne
    lambda a, b: a < b,  # slt
    lambda a, b: a <= b,  # sle
    lambda a, b: a > b,  # sgt
    lambda a, b: a >= b,  # sge
    lambda a, b: _unsigned(a) < _unsigned(b),  # ult
    lambda a, b: _unsigned(a) <= _unsigned(b),  # ule
    lambda a, b: _unsigned(a) > _unsigned(b),  # ugt
    lambda a, b: _unsigned(a) >= _unsigned(b),  # uge
]


@handles("arith.cmpf", "arith.cmpi")
def _compare(interp, op, operands):
    table = _CMPF if op.operation.name == "arith.cmpf" else _CMPI
    predicate = ir.IntegerAttr(op.attributes["predicate"]).value
    return [np.asarray(table[predicate](*operands), dtype=np.bool_)[()]]


@handles("arith.select")
def _select(interp, op, operands):
    condition, if_true, if_false = operands
    return [_as(np.where(condition, if_true, if_false), op)]


@handles("arith.sitofp", "arith.extf", "arith.truncf", "arith.extsi", "arith.trunci", "arith.index_cast")
def _convert(interp, op, operands):
    return [_as(operands[0], op)]


@handles("arith.uitofp", "arith.extui", "arith.index_castui")
def _convert_unsigned(interp, op, operands):
    return [_as(_unsigned(operands[0]), op)]


@handles("arith.fptosi", "arith.fptoui")
def _float_to_int(interp, op, operands):
    return [_as(np.trunc(operands[0]), op)]


# --- math ------------------------------------------------------------------

_UNARY = {
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": np.expm1,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": np.log1p,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.atan": np.arctan,
    "math.sinh": np.sinh,
    "math.cosh": np.cosh,
    "math.tanh": np.tanh,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.cbrt": np.cbrt,
    "math.absf": np.abs,
    "math.absi": np.abs,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.trunc": np.trunc,
    "math.roundeven": np.rint,
    "math.round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),  # half away from zero
    "math.erf": _wide(pymath.erf),
    "math.erfc": _wide(pymath.erfc),
}
for _name, _function in _UNARY.items():
    handles(_name)(_unary(_function))


@handles("math.isnan", "math.isinf", "math.isfinite")
def _classify(interp, op, operands):
    test = {"math.isnan": np.isnan, "math.isinf": np.isinf, "math.isfinite": np.isfinite}[op.operation.name]
    return [np.asarray(test(operands[0]))[()]]


@handles("math.fma")
def _fma(interp, op, operands):
    a, b, c = operands
    return [_as(a * b + c, op)]


@handles("math.ipowi")
def _integer_power(interp, op, operands):
    base, exponent = (np.asarray(v) for v in operands)
    positive = np.power(base, np.maximum(exponent, 0))
    # a negative power of an integer rounds toward zero: 0 unless |base| == 1
    negative = np.where(base == 1, 1, np.where(base == -1, np.where(exponent % 2 == 0, 1, -1), 0))
    return [_as(np.where(exponent >= 0, positive, negative), op)]


@handles("math.fpowi")
def _float_power_integer(interp, op, operands):
    base, exponent = operands
    return [_as(np.power(base, np.asarray(exponent).astype(np.asarray(base).dtype)), op)]
