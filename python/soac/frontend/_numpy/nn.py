"""Normalizations along axes: ``softmax`` and ``log_softmax`` (as
``jax.nn``'s and ``scipy.special``'s; numpy has none), computed stably
around the maximum.

The axes normalized over are moved last (a transpose, unless they are last
already) and each position of the others normalizes one flat vector, in one
``soac.map``; the result is moved back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import elementwise
from ..array import Array, lift
from ..locations import located
from ..math import abs, exp, log
from .manipulation import ravel, transpose
from .reductions import _max_rows, sum_rows
from .shapes import along, normalize_axes, split_leading

__all__ = ["log_softmax", "softmax"]


@located
def softmax(x: Any, axis: Any = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int, a tuple, or None for
    all axes), with the maximum subtracted first (JAX's default axis, -1).

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.softmax)(np.log(np.array([[1.0, 3.0], [2.0, 2.0]])))
    array([[0.25, 0.75],
           [0.5 , 0.5 ]])
    """

    def vector(v: Array) -> Array:
        shifted = exp(v - _stable_max(v))
        return shifted / sum_rows(shifted)

    return _normalized(x, axis, vector)


@located
def log_softmax(x: Any, axis: Any = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis`` (an int, a tuple, or None for all
    axes), computed around the maximum.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.log_softmax(x, axis=0))(np.log(np.array([1.0, 3.0])))
    array([-1.38629436, -0.28768207])
    """

    def vector(v: Array) -> Array:
        shifted = v - _stable_max(v)
        return shifted - log(sum_rows(exp(shifted)))

    return _normalized(x, axis, vector)


def _stable_max(v: Array) -> Array:
    """The maximum of ``v``, or 0 when it is not finite (so that ±inf is not subtracted from itself)."""
    largest = _max_rows(v)
    return elementwise.where(abs(largest) < np.inf, largest, 0.0)


def _normalized(x: Any, axis: Any, vector: Callable[[Array], Array]) -> Array:
    x = lift(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if x.ndim == 0:
        return vector(split_leading(ravel(x), (1,)))[0]
    axes = sorted(normalize_axes(axis, x.ndim, "softmax"))
    kept = [k for k in range(x.ndim) if k not in axes]
    order = kept + axes
    moved = transpose(x, order)

    def normalize(sub: Array) -> Array:
        if sub.ndim == 1:
            return vector(sub)
        return split_leading(vector(ravel(sub)), sub.shape)

    result = along(len(kept), normalize, moved)
    return transpose(result, [order.index(k) for k in range(x.ndim)])
