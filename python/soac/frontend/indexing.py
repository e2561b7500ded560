"""Basic indexing of traced arrays, with numpy's semantics: integers (Python
or traced), slices ``start:stop:step`` with a positive step (bounds Python or
traced integers), ``None`` and ``...``.

An integer picks an element (``tensor.extract``) or drops an axis; slices
keep theirs, and the whole selection is one ``tensor.extract_slice`` (whose
reverse rule reads a row sparsely); ``None`` adds an axis of static size 1
(``tensor.expand_shape``). Negative integers count from the end, as in numpy,
for traced integers too (their sign is tested when the program runs); slice
bounds are clamped to the array as numpy does. An index still out of range is
an error when the program runs (``soac.IndexOutOfRangeError``).

Integer arrays, boolean masks and negative steps are the gathers of
:mod:`.gather`, which builds on this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import tracing
from .array import Array, lift
from .locations import TraceError, located

# A size or position: a Python int when known while tracing, else an `index` value.
Index = Union[int, ir.Value]


# Index arithmetic that folds when both sides are known.
def add(a: Index, b: Index) -> Index:
    return a + b if isinstance(a, int) and isinstance(b, int) else arith.addi(as_value(a), as_value(b))


def sub(a: Index, b: Index) -> Index:
    return a - b if isinstance(a, int) and isinstance(b, int) else arith.subi(as_value(a), as_value(b))


def mul(a: Index, b: Index) -> Index:
    return a * b if isinstance(a, int) and isinstance(b, int) else arith.muli(as_value(a), as_value(b))


def clamp(a: Index, low: Index, high: Index) -> Index:
    """``a`` clamped to ``[low, high]``."""
    if all(isinstance(v, int) for v in (a, low, high)):
        return min(max(a, low), high)  # type: ignore[type-var]
    return arith.maxsi(arith.minsi(as_value(a), as_value(high)), as_value(low))


def non_negative(a: Index) -> Index:
    """``max(a, 0)``: the size of a range whose end may precede its start."""
    return max(a, 0) if isinstance(a, int) else arith.maxsi(a, as_value(0))


def ceil_div(a: Index, b: int) -> Index:
    """``ceil(a / b)`` for ``a >= 0`` and a positive Python ``b``."""
    if isinstance(a, int):
        return -(-a // b)
    return arith.divsi(arith.addi(a, as_value(b - 1)), as_value(b))


def from_end(position: Index, size: Index) -> Index:
    """numpy's negative positions: ``position + size`` where ``position < 0``."""
    if isinstance(position, int):
        return add(position, size) if position < 0 else position
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, as_value(0))
    return arith.select(negative, as_value(add(position, size)), position)


def as_value(a: Index) -> ir.Value:
    return arith.constant(ir.IndexType.get(), a) if isinstance(a, int) else a


def dim(array: Array, axis: int) -> Index:
    """The size of ``array`` along ``axis``: an int when static."""
    static = array.static_shape[axis]
    return static if static is not None else tracing.dim(array.value, axis)


def is_integer(key: Any) -> bool:
    """Whether ``key`` is one integer: Python, numpy, or a traced integer scalar."""
    if isinstance(key, (bool, np.bool_)):
        return False
    if isinstance(key, (int, np.integer)):
        return True
    return isinstance(key, (np.ndarray, Array)) and key.ndim == 0 and key.dtype.kind == "i"


def scalar_index(key: Any) -> Index | None:
    """An integer index (see :func:`is_integer`) as an Index; None for anything else."""
    if not is_integer(key):
        return None
    if isinstance(key, Array):
        return arith.index_cast(ir.IndexType.get(), lift(key).value)
    return int(key)


@dataclass
class Slice:
    """A slice normalized against its axis: ``size`` positions ``start + k * step``."""

    start: Index
    size: Index
    step: int
    whole: bool = False  # the whole axis in order (``:``)


def normalize_slice(key: slice, size: Index) -> Slice:
    """numpy's meaning of ``key`` on an axis of ``size``: negative bounds count
    from the end, bounds are clamped, an empty range has size 0."""
    if key.start is None and key.stop is None and key.step is None:
        return Slice(0, size, 1, whole=True)
    step = 1 if key.step is None else key.step
    if not isinstance(step, (int, np.integer)) or isinstance(step, bool):
        raise TraceError(f"the step of a slice must be a Python int, got {type(step).__name__}")
    step = int(step)
    if step == 0:
        raise TraceError("slice step cannot be zero")

    def bound(value: Any, default: Index, low: Index, high: Index) -> Index:
        if value is None:
            return default
        position = scalar_index(value)
        if position is None:
            raise TraceError(f"slice bounds must be integers, got {value!r}")
        return clamp(from_end(position, size), low, high)

    if step > 0:
        start = bound(key.start, 0, 0, size)
        stop = bound(key.stop, size, 0, size)
        return Slice(start, ceil_div(non_negative(sub(stop, start)), step), step)
    last = sub(size, 1)
    start = bound(key.start, last, -1, last)
    stop = bound(key.stop, -1, -1, last)
    return Slice(start, ceil_div(non_negative(sub(start, stop)), -step), step)


def expand_key(array: Array, key: Any) -> list[Any]:
    """``key`` as a list with one entry per axis of ``array`` (``...`` and the
    missing trailing axes become full slices), ``None`` entries kept."""
    key = list(key) if isinstance(key, tuple) else [key]
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ellipses) > 1:
        raise TraceError("an index can only have a single ellipsis ('...')")
    used = sum(_axes_used(k) for k in key)
    if used > array.ndim:
        raise TraceError(f"too many indices for {array!r}: it has {array.ndim} axes, but {used} were indexed")
    fill = [slice(None)] * (array.ndim - used)
    if ellipses:
        key[ellipses[0]:ellipses[0] + 1] = fill
    else:
        key += fill
    return key


def _axes_used(key: Any) -> int:
    if key is None or key is Ellipsis:
        return 0
    if isinstance(key, (np.ndarray, Array)) and key.dtype == np.bool_:
        return max(key.ndim, 1)
    return 1


def is_basic(key: list[Any]) -> bool:
    """Whether an expanded key needs no gather: integers, positive-step slices and None."""
    for k in key:
        if k is None or is_integer(k):
            continue
        if isinstance(k, slice) and (k.step is None or (isinstance(k.step, (int, np.integer)) and k.step > 0)):
            continue
        return False
    return True


@located
def basic_getitem(array: Array, key: list[Any]) -> Array:
    """``array[key]`` for an expanded basic key (see :func:`expand_key`, :func:`is_basic`)."""
    array = lift(array)
    positions: list[Index] = []
    slices: list[Slice | None] = []  # None for an axis an integer drops
    axis = 0
    for k in key:
        if k is None:
            continue
        size = dim(array, axis)
        if isinstance(k, slice):
            slices.append(normalize_slice(k, size))
            positions.append(0)
        else:
            slices.append(None)
            positions.append(from_end(scalar_index(k), size))  # type: ignore[arg-type]
        axis += 1
    if all(s is None for s in slices):
        result = Array(tensor.extract(array.value, [as_value(p) for p in positions])) if array.ndim else array
    elif all(s is not None and s.whole for s in slices):
        result = array  # x[:], x[...]
    else:
        result = _extract_slice(array, positions, slices)
    return _new_axes(result, key)


def _extract_slice(array: Array, positions: list[Index], slices: list[Slice | None]) -> Array:
    offsets = [p if s is None else s.start for p, s in zip(positions, slices)]
    sizes = [1 if s is None else s.size for s in slices]
    strides = [1 if s is None else s.step for s in slices]
    dynamic = ir.ShapedType.get_dynamic_size()
    shape = [size if isinstance(size, int) else dynamic for size, s in zip(sizes, slices) if s is not None]
    result = ir.RankedTensorType.get(shape, ir.RankedTensorType(array.value.type).element_type)
    op = tensor.ExtractSliceOp(result, array.value, *_slice_operands(offsets, sizes), strides)
    return Array(op.result)


def _slice_operands(offsets: list[Index], sizes: list[Index]) -> tuple[list, list, list, list, list]:
    """The operands and static attributes of a slice op (extract_slice,
    insert_slice) with unit or static strides: dynamic offsets, dynamic
    sizes, no dynamic strides, then the static offsets and sizes (the
    dynamic marker where a value stands)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    return ([o for o in offsets if not isinstance(o, int)], [s for s in sizes if not isinstance(s, int)], [],
            [o if isinstance(o, int) else dynamic for o in offsets], [s if isinstance(s, int) else dynamic for s in sizes])


def set_row(array: Array, position: Index, row: Array) -> Array:
    """``array`` with row ``position`` replaced by ``row`` (shaped as a row,
    of ``array``'s dtype): ``tensor.insert`` or ``tensor.insert_slice``,
    which bufferize in place in a loop. ``position`` must be in range (the
    caller's guarantee, e.g. a loop counter bounded by the leading size): a
    loop whose carried array only receives rows this way is one that
    soac-autodiff need not checkpoint (see the scf.for rule)."""
    element = ir.RankedTensorType(array.value.type).element_type
    if array.ndim == 1:
        return Array(tensor.insert(row.value, array.value, [as_value(position)]))
    sizes = [1, *(dim(array, axis) for axis in range(1, array.ndim))]
    dynamic = ir.ShapedType.get_dynamic_size()
    slice_type = ir.RankedTensorType.get([s if isinstance(s, int) else dynamic for s in sizes[1:]], element)
    source = row.value if row.value.type == slice_type else tensor.cast(slice_type, row.value)
    offsets = [position, *([0] * (array.ndim - 1))]
    op = tensor.InsertSliceOp(source, array.value, *_slice_operands(offsets, sizes), [1] * array.ndim)
    return Array(op.result)


def _new_axes(array: Array, key: list[Any]) -> Array:
    """``array`` (the selection of ``key`` without its Nones) with an axis of
    size 1 for each ``None`` of ``key``, where it stands among the kept axes."""
    if not any(k is None for k in key):
        return array
    kept_before: list[int] = []  # for each None, how many kept axes precede it
    kept = 0
    for k in key:
        if k is None:
            kept_before.append(kept)
        elif isinstance(k, slice):
            kept += 1
    shape = list(array.static_shape)
    for count in reversed(kept_before):
        shape.insert(count, 1)
    element = ir.RankedTensorType(array.value.type).element_type if array.ndim else array.value.type
    dynamic = ir.ShapedType.get_dynamic_size()
    result = ir.RankedTensorType.get([dynamic if s is None else s for s in shape], element)
    if array.ndim == 0:
        return Array(tensor.from_elements(result, [array.value]))
    # Each kept axis groups with the new axes after it; new axes before the first kept one join its group.
    new = {before + j for j, before in enumerate(kept_before)}
    kept_positions = [p for p in range(len(shape)) if p not in new]
    groups = [
        list(range(0 if a == 0 else p, kept_positions[a + 1] if a + 1 < len(kept_positions) else len(shape)))
        for a, p in enumerate(kept_positions)
    ]
    sizes = [tracing.dim(array.value, a) for a in range(array.ndim) if array.static_shape[a] is None]
    op = tensor.ExpandShapeOp(
        result, array.value, ir.ArrayAttr.get([ir.ArrayAttr.get([_i64(p) for p in g]) for g in groups]),
        sizes, [dynamic if s is None else s for s in shape],
    )
    return Array(op.result)


def _i64(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def getitem(array: Array, key: Any) -> Array:
    """``array[key]`` for a basic key (the primitives' own indexing; the
    numpy layer's ``x[...]`` also takes integer arrays and masks)."""
    expanded = expand_key(array, key)
    if not is_basic(expanded):
        raise TraceError("this index needs a gather: use x[...] (soac.frontend.gather.getitem)")
    return basic_getitem(array, expanded)
