"""``soac.math``: math functions on traced scalars and arrays (elementwise,
with numpy broadcasting), emitting the ``math`` and ``arith`` dialects.

>>> import numpy as np, soac
>>> soac.jit(lambda x: soac.math.exp(soac.math.log(x)) + soac.math.maximum(x, 2.0))(np.array([1.0, 3.0]))
array([3., 6.])
"""

from __future__ import annotations

from typing import Any

from mlir.dialects import math as _math

from . import elementwise as _elementwise
from .array import Array
from .array import lift as _lift
from .locations import located as _located

__all__ = [
    "abs", "atan", "ceil", "cos", "cosh", "erf", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2",
    "maximum", "minimum", "pow", "roundeven", "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
]


def _unary(name: str, op: Any):
    @_located
    def function(x: Any) -> Array:
        return _elementwise.float_unary(name, op, x)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``math.{op.__name__}`` of a float scalar or array."
    return function


# The functions soac-autodiff differentiates (passes/AutoDiff/Partials.cpp).
exp = _unary("exp", _math.exp)
exp2 = _unary("exp2", _math.exp2)
expm1 = _unary("expm1", _math.expm1)
log = _unary("log", _math.log)
log2 = _unary("log2", _math.log2)
log10 = _unary("log10", _math.log10)
log1p = _unary("log1p", _math.log1p)
sin = _unary("sin", _math.sin)
cos = _unary("cos", _math.cos)
tan = _unary("tan", _math.tan)
sinh = _unary("sinh", _math.sinh)
cosh = _unary("cosh", _math.cosh)
tanh = _unary("tanh", _math.tanh)
atan = _unary("atan", _math.atan)
sqrt = _unary("sqrt", _math.sqrt)
rsqrt = _unary("rsqrt", _math.rsqrt)
erf = _unary("erf", _math.erf)
# Rounding (a derivative of 0).
floor = _unary("floor", _math.floor)
ceil = _unary("ceil", _math.ceil)
trunc = _unary("trunc", _math.trunc)
roundeven = _unary("roundeven", _math.roundeven)  # halves to even, as numpy's round


@_located
def abs(x: Any) -> Array:  # noqa: A001  (numpy's name)
    """Elementwise absolute value (``math.absf`` / ``math.absi``)."""
    x = _lift(x)
    return _elementwise.broadcast(_math.absf if x.dtype.kind == "f" else _math.absi, x)


def pow(x: Any, y: Any) -> Array:  # noqa: A001  (numpy's name)
    """``x ** y``, elementwise."""
    return _elementwise.power(x, y)


def maximum(x: Any, y: Any) -> Array:
    """Elementwise maximum (NaN wins, as in numpy)."""
    return _elementwise.binary("max", x, y)


def minimum(x: Any, y: Any) -> Array:
    """Elementwise minimum (NaN wins, as in numpy)."""
    return _elementwise.binary("min", x, y)
