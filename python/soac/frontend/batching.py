"""``soac.vmap``: a function mapped over an axis of its arguments, as
``jax.vmap``, built on ``soac.map`` (so it nests, differentiates, fuses and
compiles like any map; per-example gradients are ``vmap(grad(loss))``).

>>> import numpy as np, soac
>>> soac.vmap(lambda row, w: soac.numpy.sum(row * w), in_axes=(0, None))(np.ones((3, 2)), np.array([1.0, 2.0]))
array([3., 3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compiler import CpuOptions
from . import combinators
from .array import Array, lift
from .jit import Function
from .locations import TraceError
from ._numpy.manipulation import moveaxis
from .pytree import tree_flatten, tree_unflatten


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, *, options: CpuOptions = CpuOptions()) -> Function:
    """``fun`` mapped over axis ``in_axes`` of its arguments (an int for all,
    or one entry per argument: an int, or None for an argument passed whole
    to every call); the results stack along ``out_axes`` (an int, or one per
    output leaf). Arguments may be pytrees (an entry of ``in_axes`` then
    applies to every leaf of its argument)."""

    def batched(*args: Any) -> Any:
        axes = _per_argument(in_axes, len(args))
        mapped: list[Array] = []
        slots: list[tuple[list[Any], Any, list[int]]] = []  # per argument: leaves, tree, mapped leaf positions
        for arg, axis in zip(args, axes):
            leaves, tree = tree_flatten(arg)
            positions = []
            if axis is not None:
                for k, leaf in enumerate(leaves):
                    leaf = lift(leaf)
                    if leaf.ndim == 0 or not -leaf.ndim <= axis < leaf.ndim:
                        raise TraceError(f"vmap: in_axes {axis} is out of range for {leaf!r}")
                    leaves[k] = leaf if axis % leaf.ndim == 0 else moveaxis(leaf, axis, 0)
                    positions.append(k)
                    mapped.append(leaves[k])
            slots.append((leaves, tree, positions))
        if not mapped:
            raise TraceError("vmap needs at least one argument mapped (in_axes not None)")

        def body(*rows: Array) -> Any:
            rows_left = iter(rows)
            call = []
            for leaves, tree, positions in slots:
                own = list(leaves)
                for k in positions:
                    own[k] = next(rows_left)
                call.append(tree_unflatten(tree, own))
            return fun(*call)

        out = combinators.map(body, *mapped)
        leaves, tree = tree_flatten(out)
        out_list = _per_argument(out_axes, len(leaves))
        return tree_unflatten(tree, [leaf if axis in (0, None) else moveaxis(leaf, 0, axis) for leaf, axis in zip(leaves, out_list)])

    batched.__name__ = batched.__qualname__ = f"vmap_{getattr(fun, '__name__', 'function')}"
    return Function(batched, options)


def _per_argument(axes: Any, count: int) -> list[Any]:
    if axes is None or isinstance(axes, int):
        return [axes] * count
    axes = list(axes)
    if len(axes) != count:
        raise TraceError(f"vmap: {len(axes)} axes given for {count} arguments")
    return axes

