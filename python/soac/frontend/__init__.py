"""The tracing frontend: plain Python functions on arrays become soac IR.

``soac.jit`` traces a function on symbolic arrays (:class:`Array`): Python
operators and ``soac.math`` emit arith/math ops, ``soac.map`` and the other
combinators take Python callables as bodies, ``soac.fori_loop``,
``soac.while_loop`` and ``soac.cond`` emit scf ops, ``soac.numpy`` is a
numpy-like layer made of SOACs, and ``soac.grad`` / ``soac.vjp`` /
``soac.value_and_grad`` differentiate traced functions. Ops carry the
user's source locations; mistakes raise :class:`TraceError` at the user's line.

The modules form layers; each imports only modules of earlier layers (and
earlier modules of its own), as ``test/python/test_frontend_layout.py``
checks:

1. ``locations``: source locations of the user's code, :class:`TraceError`.
2. ``tracing``: the stack of traces, :class:`ArgSpec`, Python values and
   dtypes as IR (constants, types, sizes), flattening outputs. It knows IR
   values, not arrays.
3. ``array``: the :class:`Array` class (value, shape, dtype; no operators)
   and Python values made into arrays (``lift``, ``coerce``, ``index``).
4. Primitives that emit ops on arrays: ``indexing`` (``x[i]``),
   ``elementwise`` (broadcasting, arithmetic, comparisons, casts),
   ``combinators`` (the SOACs), ``control`` (scf loops and branches),
   ``math`` (``soac.math``).
5. The numpy layer: ``_numpy/`` holds one module per family of functions
   (``shapes``, ``ufuncs``, ``creation``, ``reductions``, ``products``) and
   ``array_methods``, which attaches :class:`Array`'s operators and methods
   (``+``, ``@``, ``x[i]``, ``x.sum()``); ``numpy`` is the ``soac.numpy``
   namespace, and importing it attaches them. This package imports it, so
   arrays always have them.
6. Entry points: ``jit`` (tracing a function into a ``func.func``, compiling,
   caching), ``eager`` (the numpy layer called outside a trace runs through
   ``jit``), ``transforms`` (derivatives) and ``custom`` (derivatives given
   by the user).
"""

from . import eager, lax, math, numpy  # numpy attaches Array's operators (_numpy/array_methods.py); eager runs them on numpy arrays
from .array import Array
from .batching import vmap
from .combinators import iota, map, reduce, reduce_by_index, scan, scatter
from .control import cond, fori_loop, while_loop
from .custom import CustomDerivatives, custom_jvp, custom_vjp
from .jit import Function, Traced, jit
from .locations import TraceError
from .tracing import ArgSpec
from .pytree import register_dataclass, register_pytree_node
from .transforms import grad, hessian, hvp, jacfwd, jacrev, jvp, value_and_grad, vjp

__all__ = [
    "ArgSpec", "Array", "CustomDerivatives", "Function", "TraceError", "Traced", "cond", "custom_jvp", "custom_vjp",
    "fori_loop", "grad", "hessian", "hvp", "iota", "jacfwd", "jacrev", "jit", "jvp", "register_dataclass", "register_pytree_node", "map",
    "math", "numpy", "reduce", "reduce_by_index", "scan", "scatter", "value_and_grad", "vjp", "vmap", "while_loop", "lax",
]
