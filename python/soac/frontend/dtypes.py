"""Type promotion as in JAX: ``promote_types`` for two dtypes, and
``result_type`` for operands where Python scalars are weakly typed.

The lattice (``jax.numpy.promote_types`` restricted to the dtypes soac
traces: bool, signed integers, float16/32/64)::

    bool < int8 < int16 < int32 < int64 < float16 < float32 < float64

with one difference from a chain: an integer meets a float at the float's
own width (``int64`` and ``float32`` give ``float32``), as in JAX and unlike
numpy (which gives ``float64``). Python scalars (``bool``, ``int``,
``float``) are *weak*: they take the dtype of the arrays they meet, so
``w - 0.1 * g`` keeps ``w``'s float32, ``x + 1`` keeps ``x``'s int8, and only
a Python float meeting integers or bools makes them float64 (a Python int
meeting bools makes them int64). numpy scalars (``np.float32(2)``) are
strong, as arrays.

>>> import numpy as np
>>> promote_types(np.int64, np.float32), promote_types(np.int8, np.int32)
(dtype('float32'), dtype('int32'))
>>> result_type(np.zeros(2, np.float32), 0.5), result_type(np.arange(2), 0.5)
(dtype('float32'), dtype('float64'))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .locations import TraceError

__all__ = ["is_weak", "promote_types", "result_type"]

# The default dtypes of weak Python scalars when no array decides (JAX with x64 enabled).
_DEFAULT = {"b": np.dtype(np.bool_), "i": np.dtype(np.int64), "f": np.dtype(np.float64)}
_KIND_ORDER = {"b": 0, "i": 1, "f": 2}


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype both ``a`` and ``b`` are converted to when they meet (JAX's lattice)."""
    a, b = _traceable(a), _traceable(b)
    if a == b:
        return a
    if a.kind != b.kind:
        low, high = sorted((a, b), key=lambda d: _KIND_ORDER[d.kind])
        return high  # bool -> any number, integer -> the float's own width
    return a if a.itemsize >= b.itemsize else b


def is_weak(value: Any) -> bool:
    """Whether ``value`` is a weakly typed Python scalar."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)


def result_type(*values: Any) -> np.dtype:
    """The dtype of an operation on ``values``: the strong ones (arrays, traced
    values, numpy scalars) promoted with :func:`promote_types`, then each weak
    Python scalar raising it only to its own kind (bool < int < float)."""
    strong = [_traceable(_dtype_of(v)) for v in values if not is_weak(v)]
    result = None
    for dtype in strong:
        result = dtype if result is None else promote_types(result, dtype)
    for value in values:
        if is_weak(value):
            kind = "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"
            if result is None or _KIND_ORDER[kind] > _KIND_ORDER[result.kind]:
                result = _DEFAULT[kind]
    if result is None:
        raise TraceError("an operation needs at least one value")
    return result


def _dtype_of(value: Any) -> np.dtype:
    dtype = getattr(value, "dtype", None)  # arrays, traced or numpy, and numpy scalars
    if dtype is None:
        raise TraceError(f"cannot trace a value of type {type(value).__name__}; soac traces arrays and numbers")
    return np.dtype(dtype)


def _traceable(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind not in _KIND_ORDER or (dtype.kind == "f" and dtype.itemsize not in (2, 4, 8)):
        raise TraceError(f"arrays of dtype {dtype} cannot be traced (soac has bool, int8..int64, float16/32/64)")
    return dtype
