"""Eager calls: ``soac.numpy``, ``soac.math`` and the combinators called on
numpy arrays outside any trace compute at once and return numpy arrays, as
``jax.numpy`` does outside ``jax.jit``.

Each call runs through :func:`soac.jit` of the function, with the arguments
that are not arrays (axes, shapes, dtypes, Python numbers, callables) static
and static shapes (the sizes are known, so a mismatch is a clear error while
tracing rather than a failed check at run time): a function compiles once per
signature, shapes and static values, and later calls reuse the code. That is JAX's op-by-op dispatch at the granularity of one
numpy function: fine for glue code around jitted steps (stacking losses,
building inputs), slow for a loop of small calls, which belongs in a jit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import locations
from .jit import Function
from .pytree import tree_leaves

# Jitted forms of the functions called eagerly, by static positions and keywords.
_CACHE_SIZE = 256


def run_eagerly(function: Callable, args: tuple, kwargs: dict) -> Any:
    """``function(*args, **kwargs)`` compiled: array pytrees are traced, every
    other argument and every keyword is passed as a static Python value."""
    static = tuple(i for i, a in enumerate(args) if not _is_array_tree(a))
    names = tuple(sorted(kwargs))
    jitted = _jitted(function, len(args), static, names)
    values = [_hashable(a) if i in static else a for i, a in enumerate(args)]
    return jitted(*values, *(_hashable(kwargs[name]) for name in names))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _jitted(function: Callable, count: int, static: tuple[int, ...], names: tuple[str, ...]) -> Function:
    def call(*values: Any) -> Any:
        return function(*values[:count], **dict(zip(names, values[count:])))

    functools.update_wrapper(call, function)
    return Function(call, static_argnums=(*static, *range(count, count + len(names))), static_shapes=True)


def _is_array_tree(value: Any) -> bool:
    """Whether ``value`` is a pytree of arrays (numpy, or anything with
    ``__array__`` or ``__dlpack__``), which the compiled code takes as data."""
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return False
    leaves = tree_leaves(value)
    return bool(leaves) and all(isinstance(leaf, (np.ndarray, np.generic)) or hasattr(leaf, "__array__")
                                or hasattr(leaf, "__dlpack__") for leaf in leaves)


def _hashable(value: Any) -> Any:
    """A static argument as a hashable value (lists of axes become tuples)."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


locations.run_eagerly = run_eagerly
