"""``soac.numpy.linalg``: norms, built from the reductions (so they
differentiate and fuse). Decompositions and solvers are not there yet.

>>> import numpy as np, soac
>>> soac.jit(lambda m: (soac.numpy.linalg.norm(m), soac.numpy.linalg.norm(m, axis=1)))(np.array([[3.0, 4.0], [0.0, 1.0]]))
(np.float64(5.0990195135927845), array([5., 1.]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..array import Array, lift
from ..locations import TraceError, located
from .reductions import max, min, sum
from .ufuncs import abs, power, sqrt

__all__ = ["norm"]


@located
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A002  (numpy's name)
    """numpy's ``linalg.norm`` for vectors (``ord`` None or 2, 1, ``inf``,
    ``-inf``, 0, any p) along ``axis`` (an int, or None for all elements:
    the 2-norm of the flattened array, which is the Frobenius norm of a
    matrix, ``ord="fro"``). Matrix norms by singular values (``ord=2``
    with two axes, ``"nuc"``) are not there. As in JAX, the gradient of the
    2-norm at 0 is NaN."""
    x = lift(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if isinstance(axis, (tuple, list)) and len(axis) == 2 and ord in (None, "fro"):
        return sqrt(sum(x * x, axis=tuple(axis), keepdims=keepdims))
    if isinstance(axis, (tuple, list)) or (axis is None and ord not in (None, "fro", 2) and x.ndim > 1):
        raise TraceError(f"norm: ord={ord!r} over {axis!r} needs a matrix norm soac does not have; give one axis")
    if ord in (None, 2, "fro"):
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return max(abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum((x != 0.0).astype(x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, (int, float)):
        return power(sum(power(abs(x), float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)
    raise TraceError(f"norm: unknown ord {ord!r}")
