"""The operators and methods of traced arrays (``x + y``, ``x @ y``, ``x[i]``,
``x.sum()``, ...), attached to :class:`~soac.frontend.array.Array` when the
numpy layer is imported, as ``jax/_src/numpy/array_methods.py`` does: the
class is only a value with a shape and a dtype, so the modules that emit
these operations build on it and it imports none of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import elementwise
from ..array import Array
from ..indexing import getitem
from .products import matmul
from .reductions import max, mean, sum
from .ufuncs import abs, add, divide, multiply, power, subtract


def _bitwise(name: str) -> Callable[[Any, Any], Array]:
    """``&`` or ``|``: logical on bools, bitwise on integers."""
    return lambda x, y: elementwise.binary(name, x, y)


def _comparison(name: str) -> Callable[[Any, Any], Array]:
    return lambda x, y: elementwise.compare(name, x, y)


# Each binary operator also gets its reflected form (__radd__, ...).
_BINARY: dict[str, Callable[[Any, Any], Array]] = {
    "add": add, "sub": subtract, "mul": multiply, "truediv": divide, "pow": power,
    "and": _bitwise("and"), "or": _bitwise("or"), "matmul": matmul,
}
# Python reflects comparisons itself (2.0 < x is x > 2.0).
_COMPARISONS = {name: _comparison(name) for name in ("lt", "le", "gt", "ge", "eq", "ne")}
_UNARY: dict[str, Callable[[Any], Array]] = {
    "neg": elementwise.negative, "pos": lambda x: x, "invert": elementwise.logical_not, "abs": abs,
}


def _reflected(fn: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Array]:
    """``other <op> self``: what Python calls when the left operand is no Array (``2.0 * x``)."""

    def method(self: Array, other: Any) -> Array:
        return fn(other, self)

    return method


def _astype(self: Array, dtype: Any) -> Array:
    return elementwise.astype(self, np.dtype(dtype))


def register_methods() -> None:
    """Attaches the operators and methods to ``Array`` (once: soac.numpy's import calls it)."""
    for name, fn in _BINARY.items():
        setattr(Array, f"__{name}__", fn)
        setattr(Array, f"__r{name}__", _reflected(fn))
    for name, fn in {**_COMPARISONS, **_UNARY}.items():
        setattr(Array, f"__{name}__", fn)
    Array.__hash__ = None  # type: ignore[assignment]  # == builds IR, so arrays are no dict keys
    # numpy's own operators step aside, so `np.float64(2) * x` reaches __rmul__.
    Array.__array_ufunc__ = None
    Array.__getitem__ = getitem
    Array.astype = _astype
    Array.sum, Array.max, Array.mean = sum, max, mean
