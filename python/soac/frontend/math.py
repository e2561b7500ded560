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
    "abs", "atan", "cos", "erf", "exp", "expm1", "floor", "log", "log1p",
    "maximum", "minimum", "pow", "rsqrt", "sin", "sqrt", "tanh",
]


def _unary(name: str, op: Any):
    @_located
    def function(x: Any) -> Array:
        return _elementwise.float_unary(name, op, x)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``math.{op.__name__}`` of a float scalar or array."
    return function


exp = _unary("exp", _math.exp)
expm1 = _unary("expm1", _math.expm1)
log = _unary("log", _math.log)
log1p = _unary("log1p", _math.log1p)
sin = _unary("sin", _math.sin)
cos = _unary("cos", _math.cos)
tanh = _unary("tanh", _math.tanh)
atan = _unary("atan", _math.atan)
sqrt = _unary("sqrt", _math.sqrt)
rsqrt = _unary("rsqrt", _math.rsqrt)
erf = _unary("erf", _math.erf)
floor = _unary("floor", _math.floor)


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
