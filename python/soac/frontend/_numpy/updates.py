"""Functional updates, JAX's ``x.at[key].set(v)`` (and ``add``, ``subtract``,
``multiply``/``mul``, ``divide``, ``min``, ``max``, ``get``): a new array equal
to ``x`` except where ``key`` selects, which takes numpy's indexing (the
same keys as ``x[key]``).

They are SOACs: ``set`` is a ``soac.scatter``, the others a
``soac.reduce_by_index`` with their operator, so a position selected twice
gets every update combined (``add``) or one of them (``set``, as in JAX).
An update on the leading axis (``x.at[i]``, ``x.at[idx]``, ``x.at[idx, :]``)
writes whole rows; any other key updates the elements of the flattened
array at their flat positions. Negative indices count from the end; an update
whose index is still out of range is dropped, as JAX's default (``mode=
"drop"``) and as ``soac.scatter`` do. ``get`` is ``x[key]`` (an index out of
range there is an error, as every read of soac's).

>>> import numpy as np, soac
>>> soac.jit(lambda x, i: x.at[i].add(1.0).at[0].set(-1.0))(np.zeros(4), np.array([1, 3, 3, 9]))
array([-1.,  1.,  0.,  2.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from .. import combinators, elementwise, gather
from ..array import Array, lift
from ..indexing import expand_key, is_integer
from ..locations import TraceError, located
from ..math import maximum, minimum
from .creation import full
from .manipulation import broadcast_to, ravel
from .shapes import split_leading

__all__: list[str] = []  # reached through Array.at, not as functions


class IndexUpdateHelper:
    """``x.at``: ``x.at[key]`` is the place the update methods write."""

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, key: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, key)

    def __repr__(self) -> str:
        return f"{self.array!r}.at"


class IndexUpdateRef:
    """``x.at[key]``: each method returns the updated copy of ``x``."""

    def __init__(self, array: Array, key: Any):
        self.array, self.key = array, key

    def get(self) -> Array:
        """``x[key]``."""
        return gather.getitem(self.array, self.key)

    def set(self, values: Any) -> Array:
        """``x`` with ``values`` written where ``key`` selects (a ``soac.scatter``)."""
        return update(self.array, self.key, values, None)

    def add(self, values: Any) -> Array:
        """``x`` with ``values`` added where ``key`` selects (repeated positions add up)."""
        return update(self.array, self.key, values, "add")

    def subtract(self, values: Any) -> Array:
        """``x`` with ``values`` subtracted where ``key`` selects."""
        return update(self.array, self.key, elementwise.negative(values), "add")

    def multiply(self, values: Any) -> Array:
        """``x`` multiplied by ``values`` where ``key`` selects."""
        return update(self.array, self.key, values, "multiply")

    mul = multiply

    def divide(self, values: Any) -> Array:
        """``x`` divided by ``values`` where ``key`` selects (a product with their reciprocals)."""
        return update(self.array, self.key, elementwise.binary("div", 1, values), "multiply")

    def min(self, values: Any) -> Array:
        """The smaller of ``x`` and ``values`` where ``key`` selects."""
        return update(self.array, self.key, values, "min")

    def max(self, values: Any) -> Array:
        """The larger of ``x`` and ``values`` where ``key`` selects."""
        return update(self.array, self.key, values, "max")


# The operator of each combining update, and its neutral element for a dtype.
_OPERATORS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[np.dtype], Any]]] = {
    "add": (lambda a, b: a + b, lambda dtype: 0),
    "multiply": (lambda a, b: a * b, lambda dtype: 1),
    "min": (minimum, lambda dtype: float("inf") if dtype.kind == "f" else int(np.iinfo(dtype).max)),
    "max": (maximum, lambda dtype: float("-inf") if dtype.kind == "f" else int(np.iinfo(dtype).min)),
}


@located
def update(array: Any, key: Any, values: Any, how: str | None) -> Array:
    """``array`` with ``values`` combined in where ``key`` selects: written when
    ``how`` is None, else combined by the operator of ``_OPERATORS[how]``."""
    array = lift(array)
    if array.ndim == 0:
        raise TraceError(f".at[] updates arrays, not the scalar {array!r}")
    values = elementwise.operands(values, dtype=array.dtype)[0]
    rows = _row_key(array, key)
    if rows is not None:
        indices = ravel(rows)  # a scalar index: an array of one
        target = [indices.dim(0), *[array.dim(a) for a in range(1, array.ndim)]]
        written = _broadcast_to(values if rows.ndim == 1 else _as_row(values, array.ndim - 1), target)
        return _combine(array, _wrapped(indices, array.dim(0)), written, how)
    # Any other key: the selected elements' flat positions in the flattened array.
    strides = _strides(array)
    selection = gather.select(array, expand_key(array, gather.masks_as_indices(key)))
    positions = gather.build(selection, lambda indices: _flat_position(array, indices, strides), read_rows=False)
    written = _broadcast_to(values, list(positions.shape))
    flat = _combine(ravel(array), ravel(positions), ravel(written), how)
    return split_leading(flat, array.shape)


def _row_key(array: Array, key: Any) -> Array | None:
    """The row indices when ``key`` selects whole rows of the leading axis
    (an integer, or a 1-D integer array, then whole slices), else None."""
    expanded = expand_key(array, key)
    if not all(_whole(k) for k in expanded[1:]):
        return None
    first = expanded[0]
    if is_integer(first):
        return lift(first, like=ir.IntegerType.get_signless(64)).astype(np.int64)
    if isinstance(first, list):
        first = np.asarray(first)
    if isinstance(first, (np.ndarray, Array)) and first.ndim == 1 and first.dtype.kind == "i":
        return lift(first)
    return None


def _whole(key: Any) -> bool:
    return isinstance(key, slice) and key.start is None and key.stop is None and key.step is None


def _combine(dest: Array, indices: Array, values: Array, how: str | None) -> Array:
    # The SOACs want rows of one type: the values' rows take the destination's static sizes.
    dest_type, values_type = ir.RankedTensorType(dest.value.type), ir.RankedTensorType(values.value.type)
    rows = ir.RankedTensorType.get([values_type.shape[0], *dest_type.shape[1:]], dest_type.element_type)
    if rows != values_type:
        values = Array(tensor.cast(rows, values.value))
    if how is None:
        return combinators.scatter(dest, indices, values)
    operator, neutral = _OPERATORS[how]
    init = neutral(dest.dtype)
    if dest.ndim > 1:
        init = full([dest.dim(a) for a in range(1, dest.ndim)], init, dest.dtype)
    return combinators.reduce_by_index(operator, dest, indices, values, init)


def _wrapped(indices: Array, size: Any) -> Array:
    """numpy's negative indices, counted from the end of an axis of ``size``."""
    return elementwise.where(indices < 0, indices + size, indices)


def _flat_position(array: Array, indices: dict[int, Any], strides: list[Any]) -> Array:
    """The flat position of the element at ``indices`` (every axis), or -1 when
    an index is out of range on its axis (it must not land on another element)."""
    position: Any = 0
    inside: Any = True
    for axis in range(array.ndim):
        index = _wrapped(lift(indices[axis], like=ir.IntegerType.get_signless(64)).astype(np.int64), array.dim(axis))
        inside = (index >= 0) & (index < array.dim(axis)) & inside
        position = position + index * strides[axis]
    return elementwise.where(inside, position, -1)


def _strides(array: Array) -> list[Any]:
    """The row-major strides of ``array``, in elements."""
    strides: list[Any] = [1] * array.ndim
    for axis in range(array.ndim - 2, -1, -1):
        strides[axis] = strides[axis + 1] * array.dim(axis + 1)
    return strides


def _broadcast_to(values: Array, shape: list[Any]) -> Array:
    """``values`` broadcast to ``shape`` (sizes as values), as numpy does."""
    if values.ndim > len(shape):
        raise TraceError(f"cannot broadcast the update values {values!r} to the {len(shape)} axes they update")
    if values.ndim == len(shape) and None not in values.static_shape and all(
        isinstance(size, int) and size == static for size, static in zip(shape, values.static_shape)
    ):
        return values
    if values.ndim == len(shape) and all(static != 1 for static in values.static_shape):
        return values  # sizes that must agree; a mismatch is an error when the program runs
    return broadcast_to(values, shape)


def _as_row(values: Array, row_rank: int) -> Array:
    """The values of one row, with the leading axis of size 1 that one row index has."""
    if values.ndim > row_rank:
        raise TraceError(f"cannot broadcast the update values {values!r} to a row of rank {row_rank}")
    return gather.getitem(values, None) if values.ndim == row_rank else values
