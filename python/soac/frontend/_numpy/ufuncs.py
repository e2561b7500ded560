"""Elementwise functions of ``soac.numpy``, with numpy broadcasting: the
arithmetic of :mod:`soac.frontend.elementwise` under numpy's names, the
functions of ``soac.math``, and the rest of numpy's elementwise math composed
from them (``arcsin``, ``arctan2``, ``logaddexp``, ``hypot``, ``sign``,
``clip``, ...), so that every one differentiates.

Integer and bool arguments of the float functions become float64, as in JAX.
Where a formula has a branch (``where``), the branch not taken is computed on
a safe value, so that its derivative is no NaN that the selection would
multiply by zero."""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith

from .. import elementwise, tracing
from ..array import Array, lift
from ..locations import TraceError, located
from ..math import (
    abs, atan, ceil, cos, cosh, erf, exp, exp2, expm1, floor, log, log1p, log2, log10, maximum, minimum, roundeven,
    rsqrt, sin, sinh, sqrt, tan, tanh, trunc,
)

__all__ = [
    "abs", "add", "cos", "divide", "floor_divide", "mod", "remainder", "true_divide", "erf", "exp", "expm1", "floor", "log", "log1p", "maximum", "minimum",
    "multiply", "negative", "power", "rsqrt", "sin", "sqrt", "subtract", "tanh", "where",
    # composed from the above
    "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "around", "cbrt", "ceil", "clip",
    "copysign", "cosh", "deg2rad", "degrees", "equal", "exp2", "fabs", "fix", "float_power", "fmax", "fmin", "greater",
    "greater_equal", "heaviside", "hypot", "isclose", "isfinite", "isinf", "isnan", "less", "less_equal", "log10",
    "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor", "nan_to_num",
    "not_equal", "positive", "rad2deg", "radians", "reciprocal", "rint", "round", "sign", "signbit", "sinc", "sinh",
    "square", "tan", "trunc",
]


def add(x: Any, y: Any) -> Array:
    """``x + y`` elementwise, with numpy broadcasting and JAX's promotion."""
    return elementwise.binary("add", x, y)


def subtract(x: Any, y: Any) -> Array:
    """``x - y`` elementwise."""
    return elementwise.binary("sub", x, y)


def multiply(x: Any, y: Any) -> Array:
    """``x * y`` elementwise."""
    return elementwise.binary("mul", x, y)


def divide(x: Any, y: Any) -> Array:
    """``x / y`` elementwise (integers divide as float64)."""
    return elementwise.binary("div", x, y)


def true_divide(x: Any, y: Any) -> Array:
    """``x / y`` elementwise (:func:`divide`)."""
    return elementwise.binary("div", x, y)


def floor_divide(x: Any, y: Any) -> Array:
    """``x // y``: rounded towards -inf (numpy's); an integer divided by 0 gives 0 instead of trapping."""
    return elementwise.floor_divide(x, y)


def remainder(x: Any, y: Any) -> Array:
    """``x % y`` with the sign of ``y`` (numpy's); an integer modulo 0 gives 0 instead of trapping."""
    return elementwise.remainder(x, y)


mod = remainder


def negative(x: Any) -> Array:
    """``-x`` elementwise."""
    return elementwise.negative(x)


def power(x: Any, y: Any) -> Array:
    """``x ** y`` elementwise (a small literal integer exponent multiplies)."""
    return elementwise.power(x, y)


def where(condition: Any, x: Any, y: Any) -> Array:
    """``x`` where ``condition`` holds, else ``y`` (``arith.select``, elementwise)."""
    return elementwise.where(condition, x, y)


# ---- composed elementwise math --------------------------------------------------------------------------


def _float(x: Any) -> Array:
    """``x`` as a float array (integers and bools become float64, as in JAX)."""
    x = lift(x, like=tracing.element_type(np.dtype(np.float64)))
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _floats(*values: Any) -> list[Array]:
    """``values`` promoted to one float dtype."""
    arrays = elementwise.operands(*values)
    return arrays if arrays[0].dtype.kind == "f" else elementwise.operands(*arrays, dtype=np.float64)


def _fused(formula: Any, *arrays: Array) -> Array:
    """``formula`` (of traced scalars) applied elementwise with numpy
    broadcasting, as one ``soac.map`` whose body is the whole formula: a
    function composed of several operations stays one loop (with one adjoint),
    instead of a map per operation."""
    arrays = tuple(lift(a) for a in arrays)
    if all(a.ndim == 0 for a in arrays):
        return lift(formula(*arrays))
    return elementwise.broadcast(lambda *values: lift(formula(*[Array(v) for v in values])).value, *arrays)


absolute = abs


@located
def fabs(x: Any) -> Array:
    """The absolute value as a float."""
    return abs(_float(x))


def positive(x: Any) -> Array:
    """``+x``: ``x`` itself."""
    return lift(x)


@located
def sign(x: Any) -> Array:
    """-1, 0 or 1 by the sign of ``x`` (NaN stays NaN), in ``x``'s dtype; its derivative is 0.

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.sign)(np.array([-2.0, 0.0, 3.0]))
    array([-1.,  0.,  1.])
    """
    x = lift(x)
    if x.dtype == np.bool_:
        return x
    return _fused(lambda v: elementwise.where(v > 0, 1, elementwise.where(v < 0, -1, v * 0)), x)  # v * 0: NaN for NaN


@located
def square(x: Any) -> Array:
    """``x * x``."""
    x = lift(x)
    return x * x


@located
def reciprocal(x: Any) -> Array:
    """``1 / x``; integers become float64 (JAX's; numpy divides integers)."""
    return 1.0 / _float(x)


@located
def clip(a: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None, max: Any = None) -> Array:  # noqa: A002
    """``a`` limited to ``[a_min, a_max]`` (either bound may be None, or an
    array that broadcasts; numpy 2's ``min``/``max`` keywords too). The
    gradient flows where ``a`` is inside the bounds.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.clip(x, 0.0, None))(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    low = a_min if min is None else min
    high = a_max if max is None else max
    a = lift(a)
    bounds = [bound for bound in (low, high) if bound is not None]
    if not bounds:
        return a

    def clipped(v: Array, *limits: Array) -> Array:
        limits_left = list(limits)
        if low is not None:
            v = maximum(v, limits_left.pop(0))
        if high is not None:
            v = minimum(v, limits_left.pop(0))
        return v

    return _fused(clipped, *elementwise.operands(a, *bounds))


@located
def arctan(x: Any) -> Array:
    """The inverse tangent (``math.atan``)."""
    return atan(x)


@located
def arcsin(x: Any) -> Array:
    """The inverse sine, ``2 atan(x / (1 + sqrt(1 - x²)))`` (NaN outside [-1, 1])."""
    return _fused(lambda v: 2.0 * atan(v / (1.0 + sqrt(1.0 - v * v))), _float(x))


@located
def arccos(x: Any) -> Array:
    """The inverse cosine, ``2 atan(sqrt((1 - x) / (1 + x)))`` (accurate near 1; NaN outside [-1, 1])."""
    return _fused(lambda v: 2.0 * atan(sqrt((1.0 - v) / (1.0 + v))), _float(x))


@located
def arctan2(x1: Any, x2: Any) -> Array:
    """The angle of the point ``(x2, x1)``, in ``[-pi, pi]``: ``atan(x1 / x2)``
    moved to its quadrant (the signs of zeros are not told apart: ``arctan2(0,
    -1)`` is pi, as numpy's for +0).

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.arctan2)(np.array([1.0, 1.0, -1.0, 0.0]), np.array([1.0, -1.0, -1.0, -2.0]))
    array([ 0.78539816,  2.35619449, -2.35619449,  3.14159265])
    """
    def angle(y: Array, x: Array) -> Array:
        principal = atan(y / elementwise.where(x == 0, 1.0, x))
        turned = principal + elementwise.where(y >= 0, np.pi, -np.pi)
        on_axis = elementwise.where(y > 0, np.pi / 2, elementwise.where(y < 0, -np.pi / 2, y * 0.0))
        return elementwise.where(x > 0, principal, elementwise.where(x < 0, turned, on_axis))

    return _fused(angle, *_floats(x1, x2))


_BIG = 1e150  # above it, t² overflows: the formulas below use their limits


@located
def arcsinh(x: Any) -> Array:
    """The inverse hyperbolic sine, ``log1p(t + t² / (1 + sqrt(1 + t²)))`` of
    ``t = |x|`` with ``x``'s sign (accurate near 0)."""
    def inverse(v: Array) -> Array:
        t = abs(v)
        small = elementwise.where(t > _BIG, 0.0, t)
        value = elementwise.where(t > _BIG, log(t) + np.log(2.0), log1p(small + small * small / (1.0 + sqrt(1.0 + small * small))))
        return elementwise.where(v < 0, -value, value)

    return _fused(inverse, _float(x))


@located
def arccosh(x: Any) -> Array:
    """The inverse hyperbolic cosine, ``log1p((x - 1) + sqrt((x - 1)(x + 1)))``
    (accurate near 1; NaN below 1)."""
    def inverse(v: Array) -> Array:
        small = elementwise.where(v > _BIG, 1.0, v)
        return elementwise.where(v > _BIG, log(v) + np.log(2.0), log1p((small - 1.0) + sqrt((small - 1.0) * (small + 1.0))))

    return _fused(inverse, _float(x))


@located
def arctanh(x: Any) -> Array:
    """The inverse hyperbolic tangent, ``log1p(2x / (1 - x)) / 2``."""
    return _fused(lambda v: 0.5 * log1p(2.0 * v / (1.0 - v)), _float(x))


@located
def cbrt(x: Any) -> Array:
    """The real cube root (negative for negative ``x``)."""
    def root(v: Array) -> Array:
        magnitude = abs(v) ** (1.0 / 3.0)
        return elementwise.where(v < 0, -magnitude, magnitude)

    return _fused(root, _float(x))


@located
def logaddexp(x1: Any, x2: Any) -> Array:
    """``log(exp(x1) + exp(x2))`` without overflow (JAX's formula: the larger
    plus ``log1p(exp(-|x1 - x2|))``).

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.logaddexp)(np.array([0.0, 100.0]), np.array([0.0, 101.0]))
    array([  0.69314718, 101.31326169])
    """
    def total(a: Array, b: Array) -> Array:
        delta = a - b
        return elementwise.where(delta != delta, a + b, maximum(a, b) + log1p(exp(-abs(delta))))

    return _fused(total, *_floats(x1, x2))


@located
def logaddexp2(x1: Any, x2: Any) -> Array:
    """``log2(2**x1 + 2**x2)`` without overflow."""
    def total(a: Array, b: Array) -> Array:
        delta = a - b
        return elementwise.where(delta != delta, a + b, maximum(a, b) + log1p(exp2(-abs(delta))) / np.log(2.0))

    return _fused(total, *_floats(x1, x2))


@located
def hypot(x1: Any, x2: Any) -> Array:
    """``sqrt(x1² + x2²)`` without overflow (scaled by the larger magnitude)."""
    def length(a: Array, b: Array) -> Array:
        a, b = abs(a), abs(b)
        large, small = maximum(a, b), minimum(a, b)
        ratio = small / elementwise.where(large == 0, 1.0, large)
        return elementwise.where(large == 0, large, large * sqrt(1.0 + ratio * ratio))

    return _fused(length, *_floats(x1, x2))


@located
def sinc(x: Any) -> Array:
    """``sin(pi x) / (pi x)``, 1 at 0."""
    def normalized(v: Array) -> Array:
        safe = elementwise.where(v == 0, 1.0, v) * np.pi
        return elementwise.where(v == 0, 1.0, sin(safe) / safe)

    return _fused(normalized, _float(x))


@located
def deg2rad(x: Any) -> Array:
    """Degrees to radians."""
    return _float(x) * (np.pi / 180.0)


@located
def rad2deg(x: Any) -> Array:
    """Radians to degrees."""
    return _float(x) * (180.0 / np.pi)


radians, degrees = deg2rad, rad2deg


@located
def float_power(x1: Any, x2: Any) -> Array:
    """``x1 ** x2`` in float64."""
    a, b = elementwise.operands(x1, x2, dtype=np.float64)
    return a**b


@located
def rint(x: Any) -> Array:
    """The nearest integer, halves to even (numpy's), as a float."""
    return roundeven(_float(x))


@located
def fix(x: Any) -> Array:
    """Rounded towards zero, as a float."""
    return trunc(_float(x))


@located
def round(a: Any, decimals: int = 0) -> Array:  # noqa: A001  (numpy's name)
    """``a`` rounded to ``decimals`` decimals, halves to even (numpy's);
    integers stay integers (rounded to tens, hundreds, ... for negative
    ``decimals``). Its derivative is 0.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.round(x, 1))(np.array([0.25, 1.26, -2.35]))
    array([ 0.2,  1.3, -2.4])
    """
    a = lift(a)
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TraceError(f"round: decimals must be a Python int, got {decimals!r}")
    if a.dtype.kind in "ib":
        if decimals >= 0:
            return a
        scale = 10 ** (-int(decimals))
        return (roundeven(a.astype(np.float64) / scale) * scale).astype(a.dtype)
    if decimals == 0:
        return roundeven(a)
    scale = 10.0 ** int(decimals)
    return _fused(lambda v: roundeven(v * scale) / scale, a)


around = round


@located
def isnan(x: Any) -> Array:
    """Whether each element is NaN (never for integers)."""
    x = lift(x)
    return x != x


@located
def isinf(x: Any) -> Array:
    """Whether each element is +inf or -inf."""
    x = lift(x)
    return abs(x) == np.inf if x.dtype.kind == "f" else x != x


@located
def isfinite(x: Any) -> Array:
    """Whether each element is neither infinite nor NaN."""
    x = lift(x)
    return abs(x) < np.inf if x.dtype.kind == "f" else x == x


@located
def signbit(x: Any) -> Array:
    """Whether the sign bit is set: negative numbers, -0.0 and NaNs with a sign (the bits, read as an integer)."""
    x = lift(x)
    if x.dtype.kind != "f":
        return x < 0
    bits = ir.IntegerType.get_signless(x.dtype.itemsize * 8)
    zero = arith.constant(bits, 0)
    return elementwise.broadcast(lambda v: arith.cmpi(arith.CmpIPredicate.slt, arith.bitcast(bits, v), zero), x)


@located
def copysign(x1: Any, x2: Any) -> Array:
    """The magnitude of ``x1`` with the sign of ``x2``."""
    a, b = _floats(x1, x2)
    return _fused(lambda x, negative: elementwise.where(negative, -abs(x), abs(x)), a, signbit(b))


@located
def heaviside(x1: Any, x2: Any) -> Array:
    """0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where ``x1 == 0`` (NaN stays NaN)."""
    return _fused(
        lambda a, b: elementwise.where(a < 0, 0.0, elementwise.where(a > 0, 1.0, elementwise.where(a == 0, b, a))), *_floats(x1, x2)
    )


@located
def fmax(x1: Any, x2: Any) -> Array:
    """The elementwise maximum, ignoring NaNs (NaN only where both are)."""
    return _fused(lambda a, b: elementwise.where(a != a, b, elementwise.where(b != b, a, maximum(a, b))), *elementwise.operands(x1, x2))


@located
def fmin(x1: Any, x2: Any) -> Array:
    """The elementwise minimum, ignoring NaNs (NaN only where both are)."""
    return _fused(lambda a, b: elementwise.where(a != a, b, elementwise.where(b != b, a, minimum(a, b))), *elementwise.operands(x1, x2))


@located
def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """Whether ``|a - b| <= atol + rtol * |b|`` elementwise (infinities equal only themselves)."""
    def close(a: Array, b: Array) -> Array:
        near = (abs(a - b) <= atol + rtol * abs(b)) | (a == b)
        return near | ((a != a) & (b != b)) if equal_nan else near

    return _fused(close, *_floats(a, b))


@located
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Array:
    """``x`` with NaN replaced by ``nan`` and the infinities by ``posinf`` /
    ``neginf`` (the largest and lowest finite values by default)."""
    x = lift(x)
    if x.dtype.kind != "f":
        return x
    info = np.finfo(x.dtype)
    high = float(info.max) if posinf is None else posinf
    low = float(info.min) if neginf is None else neginf
    return _fused(lambda v: elementwise.where(v != v, nan, elementwise.where(v == np.inf, high, elementwise.where(v == -np.inf, low, v))), x)


def _comparison(name: str, symbol: str) -> Any:
    def compare(x1: Any, x2: Any) -> Array:
        return elementwise.compare(name, x1, x2)

    compare.__name__ = compare.__qualname__ = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                                               "eq": "equal", "ne": "not_equal"}[name]
    compare.__doc__ = f"``x1 {symbol} x2`` elementwise."
    return compare


less, less_equal = _comparison("lt", "<"), _comparison("le", "<=")
greater, greater_equal = _comparison("gt", ">"), _comparison("ge", ">=")
equal, not_equal = _comparison("eq", "=="), _comparison("ne", "!=")


def _truth(x: Any) -> Array:
    x = lift(x)
    return x if x.dtype == np.bool_ else x != 0


def logical_and(x1: Any, x2: Any) -> Array:
    """The truth of ``x1 and x2`` elementwise (non-zero is true)."""
    return elementwise.binary("and", _truth(x1), _truth(x2))


def logical_or(x1: Any, x2: Any) -> Array:
    """The truth of ``x1 or x2`` elementwise (non-zero is true)."""
    return elementwise.binary("or", _truth(x1), _truth(x2))


def logical_xor(x1: Any, x2: Any) -> Array:
    """Whether exactly one of ``x1``, ``x2`` is true, elementwise."""
    return elementwise.compare("ne", _truth(x1), _truth(x2))


def logical_not(x: Any) -> Array:
    """The truth of ``not x`` elementwise."""
    return elementwise.logical_not(_truth(x))
