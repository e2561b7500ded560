"""The tracing frontend: plain Python functions on arrays become soac IR.

``soac.jit`` traces a function on symbolic arrays (:class:`Array`): Python
operators and ``soac.math`` emit arith/math ops, ``soac.map`` and the other
combinators take Python callables as bodies, ``soac.fori_loop``,
``soac.while_loop`` and ``soac.cond`` emit scf ops, ``soac.numpy`` is a
numpy-like layer made of SOACs, and ``soac.grad`` / ``soac.vjp`` /
``soac.value_and_grad`` differentiate traced functions. Ops carry the
user's source locations; mistakes raise :class:`TraceError` at the user's line.

One module per job: ``locations`` (source locations, errors), ``tracing``
(trace state, Python values to IR), ``array`` (the traced array and its
operators), ``elementwise`` (broadcasting), ``combinators`` (SOACs),
``control`` (scf), ``math``, ``numpy``, ``jit``, ``transforms`` (derivatives)
and ``custom`` (derivatives given by the user).
"""

from .array import Array  # first: the other modules build on it
from . import math, numpy  # noqa: I001
from .combinators import iota, map, reduce, reduce_by_index, scan, scatter
from .control import cond, fori_loop, while_loop
from .custom import CustomDerivatives, custom_jvp, custom_vjp
from .jit import Function, Traced, jit
from .locations import TraceError
from .tracing import ArgSpec
from .transforms import grad, hvp, jvp, value_and_grad, vjp

__all__ = [
    "ArgSpec", "Array", "CustomDerivatives", "Function", "TraceError", "Traced", "cond", "custom_jvp", "custom_vjp",
    "fori_loop", "grad", "hvp", "iota", "jit", "jvp", "map",
    "math", "numpy", "reduce", "reduce_by_index", "scan", "scatter", "value_and_grad", "vjp", "while_loop",
]
