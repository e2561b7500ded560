"""``soac.lax``: JAX's ``jax.lax`` control flow under its names: ``scan``
(a sequential loop with a carry and stacked outputs), and ``fori_loop``,
``while_loop``, ``cond`` and ``map`` (soac's).

>>> import numpy as np, soac
>>> cumulative = lambda c, x: (c + x, c * x)
>>> soac.jit(lambda xs: soac.lax.scan(cumulative, 0.0, xs))(np.array([1.0, 2.0, 3.0]))
(np.float64(6.0), array([0., 2., 9.]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .array import Array, index, lift
from .indexing import set_row
from .combinators import map  # noqa: A004  (lax.map, as JAX names it)
from .control import cond, fori_loop, while_loop
from .locations import TraceError, located
from ._numpy.creation import zeros
from .pytree import tree_flatten, tree_map

__all__ = ["cond", "fori_loop", "map", "scan", "while_loop"]


@located
def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: Any = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """``jax.lax.scan``: ``carry, y = f(carry, x)`` for each ``x`` along the
    leading axis of ``xs`` (a pytree of arrays; ``None`` with ``length``),
    returning the last carry and the ``y`` stacked (a pytree too).

    It is an ``scf.for`` (``soac.fori_loop``) carrying the carry and the
    stacked outputs, into which each step writes its row in place. Reverse
    mode keeps one checkpoint of the carry per iteration, but none of the
    stacked outputs (the loop only writes them), so a gradient costs time
    and memory linear in the length. The first step runs before the loop (it
    gives the outputs' shapes), so the length must be at least 1.
    """
    leaves, _ = tree_flatten(xs)
    if length is None:
        if not leaves:
            raise TraceError("scan needs xs or a length")
        length = lift(leaves[0]).shape[0]

    def step_input(i: Any) -> Any:
        return tree_map(lambda leaf: lift(leaf)[i], xs)

    def position(i: Any) -> Any:
        return length - 1 - i if reverse else i

    def write(buffer: Array, i: Any, y: Any) -> Array:
        return set_row(buffer, index(position(i)), lift(y).astype(buffer.dtype))

    carry, first = f(init, step_input(position(0)))
    stacked = tree_map(lambda y: write(zeros((length, *lift(y).shape), lift(y).dtype), 0, y), first)

    def body(i: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        carry, ys = state
        carry, y = f(carry, step_input(position(i)))
        return carry, tree_map(lambda buffer, value: write(buffer, i, value), ys, y)

    return fori_loop(1, length, body, (carry, stacked))
