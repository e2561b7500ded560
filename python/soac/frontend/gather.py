"""numpy's full indexing of traced arrays: what :mod:`.indexing` does, plus
integer arrays (gathers, on any number of axes), boolean masks known while
tracing, and slices with a negative step.

A gather is a ``soac.map`` over the rows of the index arrays (broadcast
together, as numpy does) and over the positions of the slices, whose body
reads the array at the computed indices (``tensor.extract``, or a row slice
when the trailing axes are taken whole). It stays parallel, fuses with what
reads it, and its adjoint is sparse: a ``reduce_by_index (+)`` of the
cotangent into the positions read, never a dense one-hot per read.

Where the result axes go follows numpy: the axes of the index arrays take
the place of the indexed axes when those are adjacent (integers count as
index arrays there), else they come first.

Negative indices count from the end (tested when the program runs); an index
still out of range is an error when the program runs
(``soac.IndexOutOfRangeError``), as every read of soac's.

The same structure, with the array's flat positions in place of its
elements, gives the positions that :mod:`.updates` (``x.at[...]``) writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith

from . import combinators, elementwise
from .array import Array, lift
from .indexing import Index, basic_getitem, dim, expand_key, is_basic, is_integer, normalize_slice
from .locations import TraceError, located


@dataclass
class _Axis:
    """One axis of the result: the positions ``start + k * step`` of a source
    axis (a slice), a new axis of size 1 (``None``), or one axis of the index
    arrays (``group``)."""

    kind: str  # "slice", "new", "group"
    source: int = -1
    start: Index = 0
    size: Index = 1
    step: int = 1
    whole: bool = False


@dataclass
class _Selection:
    """An expanded key resolved against an array of rank ``ndim``: the
    result's axes in order, the index arrays (broadcast to one shape), the
    source axis each indexes, and the integers of the key by source axis.
    Indices are as the user gave them (negative ones not wrapped yet)."""

    ndim: int
    axes: list[_Axis]
    arrays: list[Array]
    array_axes: list[int]
    integers: dict[int, Any]


@located
def getitem(array: Any, key: Any) -> Array:
    """``array[key]`` with numpy's semantics (``x[i]``, ``x[1:-1]``,
    ``x[:, None]``, ``x[..., 0]``, ``E[idx]``, ``M[rows, cols]``,
    ``x[mask]`` for a mask known while tracing, ``x[::-1]``).

    >>> import numpy as np, soac
    >>> soac.jit(lambda E, idx: E[idx, 1:])(np.arange(12.0).reshape(4, 3), np.array([3, 0, -1]))
    array([[10., 11.],
           [ 1.,  2.],
           [10., 11.]])
    """
    array = lift(array)
    expanded = expand_key(array, masks_as_indices(key))
    if is_basic(expanded):
        return basic_getitem(array, expanded)

    def element(indices: dict[int, Any]) -> Array:
        # The trailing axes not indexed are read whole, as a row slice (its adjoint is sparse).
        leading = [indices[a] for a in range(len(indices))]
        return basic_getitem(array, leading + [slice(None)] * (array.ndim - len(leading)))

    return build(select(array, expanded), element, read_rows=True)


def select(array: Array, key: list[Any]) -> _Selection:
    """Resolves an expanded key (see :func:`.indexing.expand_key`) against ``array``."""
    arrays: list[Array] = []
    array_axes: list[int] = []
    integers: dict[int, Any] = {}
    positions: list[tuple[str, int, Any]] = []  # (kind, source axis, normalized slice) in key order
    axis = 0
    for k in key:
        if k is None:
            positions.append(("new", -1, None))
            continue
        if is_integer(k):
            integers[axis] = k
            positions.append(("integer", axis, None))
        elif isinstance(k, slice):
            positions.append(("slice", axis, normalize_slice(k, dim(array, axis))))
        else:
            arrays.append(_index_array(k))
            array_axes.append(axis)
            positions.append(("array", axis, None))
        axis += 1
    arrays = _broadcast_together(arrays)
    group = [_Axis("group") for _ in range(arrays[0].ndim if arrays else 0)]
    # numpy: the index arrays' axes replace the indexed axes where those (integers too) are adjacent.
    advanced = [i for i, (kind, _, _) in enumerate(positions) if kind in ("array", "integer")]
    adjacent = bool(arrays) and advanced == list(range(advanced[0], advanced[-1] + 1))
    axes: list[_Axis] = [] if adjacent else list(group)
    for i, (kind, source, value) in enumerate(positions):
        if kind == "new":
            axes.append(_Axis("new"))
        elif kind == "slice":
            axes.append(_Axis("slice", source, value.start, value.size, value.step, value.whole))
        elif adjacent and i == advanced[0]:
            axes += group
    return _Selection(array.ndim, axes, arrays, array_axes, integers)


def build(selection: _Selection, element: Callable[[dict[int, Any]], Array], *, read_rows: bool) -> Array:
    """The result of a selection: nested maps over its axes whose innermost
    body is ``element`` of the source indices (a dict from source axis to a
    Python or traced integer, as given in the key). With ``read_rows``, the
    result's trailing axes that are the source's trailing axes taken whole
    are left to ``element`` (which reads rows) instead of mapped."""
    axes = list(selection.axes)
    if read_rows:
        expected = selection.ndim - 1
        while axes and axes[-1].kind == "slice" and axes[-1].whole and axes[-1].source == expected:
            axes.pop()
            expected -= 1

    def level(position: int, indices: dict[int, Any], rows: list[Array]) -> Array:
        if position == len(axes):
            return element({**indices, **dict(zip(selection.array_axes, rows))})
        axis = axes[position]
        if axis.kind == "new":
            return combinators.map(lambda _: level(position + 1, indices, rows), combinators.iota(1))
        if axis.kind == "slice":

            def at(k: Array) -> Array:
                where = k if axis.whole else _as_int64(axis.start) + k * axis.step
                return level(position + 1, {**indices, axis.source: where}, rows)

            return combinators.map(at, combinators.iota(_as_int64(axis.size)))
        return combinators.map(lambda *inner: level(position + 1, indices, list(inner)), *rows)

    return level(0, dict(selection.integers), selection.arrays)


def _as_int64(value: Index) -> Any:
    """A Python int as itself, an ``index`` value as a traced int64."""
    return value if isinstance(value, int) else Array(arith.index_cast(ir.IntegerType.get_signless(64), value))


def _index_array(key: Any) -> Array:
    if isinstance(key, (list, tuple)):
        key = np.asarray(key)
        if key.size == 0:
            key = key.astype(np.int64)
    if isinstance(key, np.ndarray) and key.dtype.kind == "b":
        raise TraceError("a boolean mask must index as many axes as it has")  # masks are turned into indices first
    index = lift(key)
    if index.dtype.kind != "i":
        raise TraceError(f"arrays used as indices must be integers (or a boolean mask known while tracing), got {index!r}")
    return index


def _broadcast_together(arrays: list[Array]) -> list[Array]:
    """The index arrays broadcast to one shape, as numpy does."""
    if len(arrays) <= 1 or all(a.ndim == arrays[0].ndim and a.static_shape == arrays[0].static_shape for a in arrays):
        return arrays
    return [elementwise.broadcast(lambda *values, k=k: values[k], *arrays) for k in range(len(arrays))]


def masks_as_indices(key: Any) -> Any:
    """Boolean masks known while tracing (numpy arrays, Python bools) as the
    integer arrays of their true positions (``np.nonzero``); a traced mask has
    a size known only when the program runs, which no traced array can have."""
    entries = list(key) if isinstance(key, tuple) else [key]
    converted: list[Any] = []
    for k in entries:
        if isinstance(k, Array) and k.dtype == np.bool_:
            raise TraceError(
                "a traced boolean mask selects a number of elements known only when the program runs; "
                "use soac.numpy.where(mask, x, 0) (or a sum over where) instead of x[mask]"
            )
        if isinstance(k, (bool, np.bool_)) or (isinstance(k, list) and k and all(isinstance(v, bool) for v in k)):
            k = np.asarray(k)
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            if k.ndim == 0:
                raise TraceError("a scalar boolean index is not supported; use soac.numpy.where")
            converted += [np.asarray(i, dtype=np.int64) for i in np.nonzero(k)]
        else:
            converted.append(k)
    return tuple(converted) if isinstance(key, tuple) or len(converted) != 1 else converted[0]
