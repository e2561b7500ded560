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
from ..locations import TraceError
from .. import gather
from . import manipulation, products, reductions
from .products import matmul
from .reductions import max, mean, sum
from .ufuncs import abs, add, clip, divide, multiply, power, round, subtract
from .updates import IndexUpdateHelper


def _bitwise(name: str) -> Callable[[Any, Any], Array]:
    """``&`` or ``|``: logical on bools, bitwise on integers."""
    return lambda x, y: elementwise.binary(name, x, y)


def _comparison(name: str) -> Callable[[Any, Any], Array]:
    return lambda x, y: elementwise.compare(name, x, y)


# Each binary operator also gets its reflected form (__radd__, ...).
_BINARY: dict[str, Callable[[Any, Any], Array]] = {
    "add": add, "sub": subtract, "mul": multiply, "truediv": divide, "pow": power,
    "and": _bitwise("and"), "or": _bitwise("or"), "matmul": matmul,
    "floordiv": elementwise.floor_divide, "mod": elementwise.remainder,
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


# The numpy ufuncs that Python operators call when a numpy value is on their
# left (`np.ones(3) * x`, `np.float32(2) < x`): they run as the operator.
_OPERATOR_UFUNCS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "truediv", "divide": "truediv",
    "power": "pow", "matmul": "matmul", "floor_divide": "floordiv", "remainder": "mod",
    "bitwise_and": "and", "bitwise_or": "or", "logical_and": "and", "logical_or": "or",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge", "equal": "eq", "not_equal": "ne",
}


def _numpy_on_traced(namespace: dict[str, Any], name: str) -> TraceError:
    """The error for a numpy function called on a traced array, naming soac.numpy's twin when there is one."""
    hint = f"use soac.numpy.{name}" if name in namespace else f"soac.numpy has no {name} yet"
    return TraceError(
        f"numpy.{name} cannot run on a traced array (its values exist only when the compiled program runs); {hint}"
    )


def _array_ufunc(namespace: dict[str, Any]) -> Callable[..., Any]:
    def __array_ufunc__(self: Array, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        operator = _OPERATOR_UFUNCS.get(ufunc.__name__)
        if operator is not None and method == "__call__" and not kwargs and len(inputs) == 2:
            return _BINARY.get(operator, _COMPARISONS.get(operator))(*inputs)
        raise _numpy_on_traced(namespace, ufunc.__name__)

    return __array_ufunc__


def _array_function(namespace: dict[str, Any]) -> Callable[..., Any]:
    def __array_function__(self: Array, function: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise _numpy_on_traced(namespace, function.__name__)

    return __array_function__


def _array(self: Array, *args: Any, **kwargs: Any) -> Any:
    raise TraceError(
        f"{self!r} cannot become a numpy array: its values exist only when the compiled program runs; "
        "use soac.numpy functions on it, and return it to get its values"
    )


def _astype(self: Array, dtype: Any) -> Array:
    return elementwise.astype(self, np.dtype(dtype))


def _reshape(self: Array, *shape: Any, order: str = "C") -> Array:
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``: :func:`~.manipulation.reshape`."""
    return manipulation.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)


def _transpose(self: Array, *axes: Any) -> Array:
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``: :func:`~.manipulation.transpose`."""
    if not axes or axes == (None,):
        return manipulation.transpose(self)
    return manipulation.transpose(self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes)


def _matrix_transpose(self: Array) -> Array:
    """``x.mT``: the last two axes exchanged."""
    if self.ndim < 2:
        raise TraceError(f"x.mT needs an array of rank 2 or more, got {self!r}")
    return manipulation.swapaxes(self, -1, -2)


# Methods that are the numpy functions of the same name, with the array first.
# (No x.trace(): Array's own attribute `trace` holds the trace it belongs to.)
_METHODS: dict[str, Callable[..., Any]] = {
    "sum": sum, "max": max, "mean": mean, "min": reductions.min, "prod": reductions.prod, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod, "var": reductions.var,
    "std": reductions.std, "all": reductions.all, "any": reductions.any, "ptp": reductions.ptp, "clip": clip,
    "round": round, "ravel": manipulation.ravel, "flatten": manipulation.ravel, "squeeze": manipulation.squeeze,
    "swapaxes": manipulation.swapaxes, "take": manipulation.take, "repeat": manipulation.repeat,
    "dot": products.dot, "diagonal": products.diagonal,
    "reshape": _reshape, "transpose": _transpose,
}


def register_methods(namespace: dict[str, Any]) -> None:
    """Attaches the operators and methods to ``Array`` (once: soac.numpy's
    import calls it with its namespace, which errors name functions from)."""
    for name, fn in _BINARY.items():
        setattr(Array, f"__{name}__", fn)
        setattr(Array, f"__r{name}__", _reflected(fn))
    for name, fn in {**_COMPARISONS, **_UNARY}.items():
        setattr(Array, f"__{name}__", fn)
    Array.__hash__ = None  # type: ignore[assignment]  # == builds IR, so arrays are no dict keys
    # numpy's operators with a numpy value on the left run as ours; numpy functions are errors that name soac.numpy's.
    Array.__array_ufunc__ = _array_ufunc(namespace)
    Array.__array_function__ = _array_function(namespace)
    Array.__array__ = _array
    Array.__getitem__ = gather.getitem
    Array.at = property(IndexUpdateHelper, doc="JAX's functional updates: ``x.at[key].set(v)``, ``.add(v)``, ... (see _numpy/updates.py)")
    Array.astype = _astype
    for name, fn in _METHODS.items():
        setattr(Array, name, fn)
    Array.T = property(manipulation.transpose, doc="The array with its axes reversed (``transpose``).")
    Array.mT = property(_matrix_transpose, doc="The array with its last two axes exchanged.")
