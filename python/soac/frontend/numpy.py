"""``soac.numpy``: a small numpy-like layer built only from SOACs.

Reductions are ``soac.reduce`` (along axis 0 they fold whole rows, along a
later axis they run inside a ``soac.map`` over the leading ones); products are
maps and reductions; elementwise functions broadcast as numpy does, on the
trailing axes.

This module is the namespace; the functions live in ``_numpy/``, one module
per family. Importing it attaches :class:`~soac.frontend.array.Array`'s
operators and methods (``_numpy/array_methods.py``).

>>> import numpy as np, soac
>>> import soac.numpy as snp  # the same module
>>> A, x = np.arange(6.0).reshape(2, 3), np.array([1.0, 0.5, 2.0])
>>> soac.jit(lambda A, x: snp.logsumexp(A @ x) - snp.mean(A, axis=0))(A, x)
array([13.50002754, 12.50002754, 11.50002754])
"""

from ._numpy import array_methods, creation, linalg, manipulation, nn, products, reductions, shapes, ufuncs
from ._numpy.creation import *  # noqa: F403
from ._numpy.manipulation import *  # noqa: F403
from ._numpy.nn import *  # noqa: F403
from ._numpy.products import *  # noqa: F403
from ._numpy.reductions import *  # noqa: F403
from ._numpy.shapes import *  # noqa: F403
from ._numpy.ufuncs import *  # noqa: F403
from .dtypes import promote_types, result_type

# numpy's scalar types and constants under the names JAX users write (jnp.float32, jnp.pi, jnp.newaxis).
from numpy import bool_, e, float16, float32, float64, inf, int8, int16, int32, int64, nan, newaxis, pi  # noqa: E402

_NAMES = ["bool_", "e", "float16", "float32", "float64", "inf", "int8", "int16", "int32", "int64", "nan", "newaxis", "pi",
          "linalg", "promote_types", "result_type"]

__all__ = sorted([*creation.__all__, *manipulation.__all__, *nn.__all__, *products.__all__, *reductions.__all__, *shapes.__all__, *ufuncs.__all__, *_NAMES])

array_methods.register_methods(globals())
