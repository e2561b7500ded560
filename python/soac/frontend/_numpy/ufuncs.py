"""Elementwise functions of ``soac.numpy``, with numpy broadcasting: the
arithmetic of :mod:`soac.frontend.elementwise` under numpy's names, and the
functions of ``soac.math``."""

from __future__ import annotations

from typing import Any

from .. import elementwise
from ..array import Array
from ..math import abs, cos, erf, exp, expm1, floor, log, log1p, maximum, minimum, rsqrt, sin, sqrt, tanh

__all__ = [
    "abs", "add", "cos", "divide", "floor_divide", "mod", "remainder", "true_divide", "erf", "exp", "expm1", "floor", "log", "log1p", "maximum", "minimum",
    "multiply", "negative", "power", "rsqrt", "sin", "sqrt", "subtract", "tanh", "where",
]


def add(x: Any, y: Any) -> Array:
    return elementwise.binary("add", x, y)


def subtract(x: Any, y: Any) -> Array:
    return elementwise.binary("sub", x, y)


def multiply(x: Any, y: Any) -> Array:
    return elementwise.binary("mul", x, y)


def divide(x: Any, y: Any) -> Array:
    return elementwise.binary("div", x, y)


def true_divide(x: Any, y: Any) -> Array:
    return elementwise.binary("div", x, y)


def floor_divide(x: Any, y: Any) -> Array:
    """``x // y``: rounded towards -inf (numpy's); an integer divided by 0 gives 0 instead of trapping."""
    return elementwise.floor_divide(x, y)


def remainder(x: Any, y: Any) -> Array:
    """``x % y`` with the sign of ``y`` (numpy's); an integer modulo 0 gives 0 instead of trapping."""
    return elementwise.remainder(x, y)


mod = remainder


def negative(x: Any) -> Array:
    return elementwise.negative(x)


def power(x: Any, y: Any) -> Array:
    return elementwise.power(x, y)


def where(condition: Any, x: Any, y: Any) -> Array:
    """``x`` where ``condition`` holds, else ``y`` (``arith.select``, elementwise)."""
    return elementwise.where(condition, x, y)
