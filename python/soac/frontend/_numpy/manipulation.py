"""Shapes and arrangements of arrays: ``reshape``, ``ravel``, ``transpose``,
``swapaxes``, ``moveaxis``, ``expand_dims``, ``squeeze``, ``concatenate``,
``stack``, ``split``, ``flip``, ``roll``, ``broadcast_to``, ``tile``,
``repeat``, ``take``, ``take_along_axis`` and their relatives.

Each builds its result with nested ``soac.map``\\ s over ``soac.iota``\\ s
of the result's sizes whose body reads the source at computed positions
(``x[i, j]``: ``tensor.extract``, or a row slice when the trailing axes are
taken whole), so they stay parallel and their reverse rule is a sparse
``reduce_by_index`` into the source: gradients cost what the copy costs.
``ravel`` alone is a ``tensor.collapse_shape`` (no copy).

Sizes may be dynamic (every size of a traced argument is): what can be
checked while tracing raises :class:`TraceError`; sizes known only when the
program runs that do not fit (a ``reshape`` to another number of elements,
a ``broadcast_to`` from a size that is neither 1 nor the target) make a read
out of range there, which stops the program with
``soac.IndexOutOfRangeError`` (unless index checks are off).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from .. import combinators, elementwise, tracing
from ..array import Array, lift
from ..locations import TraceError, located
from .creation import build, full
from .shapes import (
    _groups, along, checked, is_static, normalize_axes, normalize_axis, select, shape_string, size_equal,
    size_floordiv, size_less, size_max, size_min, size_product, split_leading,
)

__all__ = [
    "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "concatenate", "expand_dims", "flip",
    "fliplr", "flipud", "hstack", "moveaxis", "ravel", "repeat", "reshape", "roll", "split", "squeeze", "stack",
    "swapaxes", "take", "take_along_axis", "tile", "transpose", "vstack",
]


def _sizes_string(sizes: Sequence[Any]) -> str:
    text = ["?" if isinstance(s, Array) else str(int(s)) for s in sizes]
    return "(" + ", ".join(text) + ("," if len(text) == 1 else "") + ")"


def _size_arguments(shape: Any, what: str) -> tuple[Any, ...]:
    """A shape argument (an int, a traced int or a sequence of them) as a tuple."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    for s in shape:
        if not is_static(s) and not (isinstance(s, Array) and s.ndim == 0 and s.dtype.kind == "i"):
            raise TraceError(f"{what}: a size must be an integer (Python or a traced scalar), got {s!r}")
    return tuple(int(s) if is_static(s) else s for s in shape)


def _along_axis(x: Array, axis: int, size: Any, position: Any) -> Array:
    """The array shaped as ``x`` but with ``size`` positions along ``axis``,
    whose position ``i`` there is ``x``'s position ``position(i)``: one flat
    map reading elements (see :func:`~.creation.build`)."""
    sizes = list(x.shape)
    sizes[axis] = size

    def element(*at: Array) -> Array:
        key = list(at)
        key[axis] = position(at[axis])
        return x[tuple(key)]

    return build(sizes, element)


@located
def ravel(a: Any, order: str = "C") -> Array:
    """The elements of ``a`` as a vector, in row-major order: one
    ``tensor.collapse_shape`` (no copy). Only ``order="C"``.

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.ravel)(np.arange(6.0).reshape(2, 3))
    array([0., 1., 2., 3., 4., 5.])
    """
    if order != "C":
        raise TraceError(f"ravel: only order='C' is supported, got {order!r}")
    a = lift(a)
    if a.ndim == 1:
        return a
    if a.ndim == 0:
        return build([1], lambda _: a)
    element = ir.RankedTensorType(a.value.type).element_type
    static = None not in a.static_shape
    total = size_product(a.static_shape) if static else ir.ShapedType.get_dynamic_size()
    group = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in range(a.ndim)])
    result = ir.RankedTensorType.get([total], element)
    return Array(tensor.CollapseShapeOp(result, a.value, ir.ArrayAttr.get([group])).result)


@located
def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Array:
    """``a``'s elements in row-major order, in ``shape``: sizes are ints or
    traced ints, one of them may be -1 (inferred). Sizes known to fit give a
    view (``tensor.collapse_shape`` and ``expand_shape``, no copy); sizes
    known only when the program runs are checked then, by a copy whose reads
    go out of range (stopping the program) when they do not give ``a``'s
    number of elements.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.reshape(x, (3, -1)))(np.arange(6.0))
    array([[0., 1.],
           [2., 3.],
           [4., 5.]])
    """
    if order != "C":
        raise TraceError(f"reshape: only order='C' is supported, got {order!r}")
    shape = newshape if shape is None else shape
    if shape is None:
        raise TraceError("reshape needs a shape")
    a = lift(a)
    sizes = list(_size_arguments(shape, "reshape"))
    unknown = [k for k, s in enumerate(sizes) if is_static(s) and s == -1]
    if len(unknown) > 1:
        raise TraceError(f"reshape: only one size can be -1, got {_sizes_string(sizes)}")
    if any(is_static(s) and s < -1 for s in sizes):
        raise TraceError(f"reshape: negative size in {_sizes_string(sizes)}")
    total = a.size
    if unknown:
        known = size_product(s for k, s in enumerate(sizes) if k != unknown[0])
        if is_static(known) and known == 0:
            raise TraceError(f"reshape: cannot infer the -1 of {_sizes_string(sizes)} with a size 0")
        sizes[unknown[0]] = size_floordiv(total, known)
    ok = size_equal(size_product(sizes), total)
    if ok is False:
        raise TraceError(f"reshape: cannot reshape {shape_string(a)} ({total} elements) into {_sizes_string(sizes)}")
    if len(sizes) == a.ndim and all(is_static(s) and s == t for s, t in zip(sizes, a.static_shape)):
        return a
    flat = ravel(a)
    if len(sizes) == 1 and (ok is True or unknown):
        return flat
    if ok is True and sizes:
        return split_leading(flat, tuple(sizes))  # sizes known to fit: a view, no copy
    strides = [size_product(sizes[k + 1:]) for k in range(len(sizes))]

    def element(*indices: Array) -> Array:
        position = 0
        for i, stride in zip(indices, strides):
            position = position + (i if is_static(stride) and stride == 1 else i * stride)
        return flat[checked(position, ok, total)]

    return build(sizes, element)


@located
def transpose(a: Any, axes: Any = None) -> Array:
    """``a`` with its axes permuted: axis k of the result is axis
    ``axes[k]`` of ``a`` (reversed when None). Nested maps over the
    result's moved axes read ``a``: its elements, or its rows when axes at
    the back stay in place.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.transpose(x, (1, 0, 2)))(np.arange(4.0).reshape(2, 2, 1))[:, :, 0]
    array([[0., 2.],
           [1., 3.]])
    """
    a = lift(a)
    if axes is None:
        order = tuple(range(a.ndim))[::-1]
    else:
        order = normalize_axes(axes, a.ndim, "transpose")
        if len(order) != a.ndim:
            raise TraceError(f"transpose: axes {tuple(axes)} do not permute the {a.ndim} axes of {shape_string(a)}")
    return _permute(a, list(order))


def _permute(a: Array, order: list[int]) -> Array:
    if order == sorted(order):
        return a
    # Trailing axes that stay in place are copied as rows (contiguous
    # copies, one index computation per row), not element by element.
    moved = len(order)
    while order[moved - 1] == moved - 1:
        moved -= 1
    sizes = [a.dim(k) for k in order[:moved]]

    def element(*indices: Array) -> Array:
        key: list[Any] = [None] * moved
        for k, axis in enumerate(order[:moved]):
            key[axis] = indices[k]
        return a[tuple(key)]

    # One map per moved axis, nested, not creation.build's flat map over
    # all positions: that unravels each position with a division and a
    # remainder per axis, which cost more than the copy (2-3x the time of
    # a transpose and of its gradient).
    def maps(*outer: Array) -> Array:
        if len(outer) == moved:
            return element(*outer)
        return combinators.map(lambda i: maps(*outer, i), combinators.iota(sizes[len(outer)]))

    result = maps()
    if order == [1, 0]:
        # A product reading the transpose of a matrix reads the matrix instead
        # (soac.matmul's transpose flags; products.py): this copy then dies.
        result.transpose_of = a
    return result


def swapaxes(a: Any, axis1: int, axis2: int) -> Array:
    """``a`` with axes ``axis1`` and ``axis2`` exchanged (a :func:`transpose`)."""
    a = lift(a)
    order = list(range(a.ndim))
    i, j = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    order[i], order[j] = order[j], order[i]
    return _permute(a, order)


@located
def moveaxis(a: Any, source: Any, destination: Any) -> Array:
    """``a`` with the axes ``source`` moved to the positions ``destination``
    (ints or sequences of ints), the others in their order (a :func:`transpose`)."""
    a = lift(a)
    source_axes = normalize_axes(source, a.ndim, "moveaxis")
    destination_axes = normalize_axes(destination, a.ndim, "moveaxis")
    if len(source_axes) != len(destination_axes):
        raise TraceError(f"moveaxis: {len(source_axes)} source axes for {len(destination_axes)} destinations")
    order = [k for k in range(a.ndim) if k not in source_axes]
    for dest, src in sorted(zip(destination_axes, source_axes)):
        order.insert(dest, src)
    return _permute(a, order)


@located
def expand_dims(a: Any, axis: Any) -> Array:
    """``a`` with an axis of size 1 inserted at each of ``axis`` (an int or a
    tuple, positions in the result).

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.expand_dims(x, (0, 2)))(np.arange(2.0)).shape
    (1, 2, 1)
    """
    a = lift(a)
    count = len(axis) if isinstance(axis, (tuple, list)) else 1
    new = set(normalize_axes(axis, a.ndim + count, "expand_dims"))
    if a.ndim == 0:
        return build([1] * count, lambda *_: a)
    # Each source axis takes the new axes before it into its group, the last one those after it too.
    groups: list[list[int]] = []
    pending: list[int] = []
    sizes: list[int | None] = []
    source = iter(a.static_shape)
    for k in range(a.ndim + count):
        if k in new:
            pending.append(k)
            sizes.append(1)
        else:
            groups.append([*pending, k])
            pending = []
            sizes.append(next(source))
    groups[-1].extend(pending)
    dynamic = ir.ShapedType.get_dynamic_size()
    result = ir.RankedTensorType.get([dynamic if s is None else s for s in sizes], ir.RankedTensorType(a.value.type).element_type)
    dynamic_sizes = [tracing.dim(a.value, d) for d in range(a.ndim) if a.static_shape[d] is None]
    op = tensor.ExpandShapeOp(result, a.value, _groups(groups), dynamic_sizes, [dynamic if s is None else s for s in sizes])
    return Array(op.result)


@located
def squeeze(a: Any, axis: Any = None) -> Array:
    """``a`` without the axes ``axis`` of size 1 (all axes of static size 1
    when None: an axis of dynamic size is kept, as its size is not known while
    tracing; name it in ``axis`` to remove it, which stops the program when it
    runs if the size is not 1)."""
    a = lift(a)
    if axis is None:
        axes = [k for k, s in enumerate(a.static_shape) if s == 1]
    else:
        axes = list(normalize_axes(axis, a.ndim, "squeeze"))
        for k in axes:
            if a.static_shape[k] not in (None, 1):
                raise TraceError(f"squeeze: axis {k} of {shape_string(a)} has size {a.static_shape[k]}, not 1")
    if not axes:
        return a
    kept = [k for k in range(a.ndim) if k not in axes]
    checks = {k: size_equal(a.dim(k), 1) for k in axes}

    def element(*at: Array) -> Array:
        key: list[Any] = [checked(0, checks[k], a.dim(k)) if k in checks else None for k in range(a.ndim)]
        for k, i in zip(kept, at):
            key[k] = i
        return a[tuple(key)]

    return build([a.dim(k) for k in kept], element)


def atleast_1d(*arys: Any) -> Any:
    """Each argument with at least one axis (a scalar becomes shape ``(1,)``)."""
    results = [expand_dims(x, 0) if lift(x).ndim == 0 else lift(x) for x in arys]
    return results[0] if len(results) == 1 else results


def atleast_2d(*arys: Any) -> Any:
    """Each argument with at least two axes (``(n,)`` becomes ``(1, n)``)."""
    results = []
    for x in arys:
        x = lift(x)
        results.append(expand_dims(x, tuple(range(2 - x.ndim))) if x.ndim < 2 else x)
    return results[0] if len(results) == 1 else results


def atleast_3d(*arys: Any) -> Any:
    """Each argument with at least three axes (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` ``(m, n, 1)``)."""
    results = []
    for x in arys:
        x = lift(x)
        if x.ndim == 0:
            x = expand_dims(x, (0, 1, 2))
        elif x.ndim == 1:
            x = expand_dims(x, (0, 2))
        elif x.ndim == 2:
            x = expand_dims(x, 2)
        results.append(x)
    return results[0] if len(results) == 1 else results


@located
def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Array:
    """The arrays joined along ``axis`` (flattened first when None), their
    dtypes promoted. Inside a map over the axes before ``axis``, each array
    is scattered into its place (``soac.scatter``; sizes known only when the
    program runs that differ stop it there).

    >>> import numpy as np, soac
    >>> soac.jit(lambda a, b: soac.numpy.concatenate([a, b], axis=1))(np.zeros((2, 1)), np.ones((2, 2)))
    array([[0., 1., 1.],
           [0., 1., 1.]])
    """
    if isinstance(arrays, Array) or not isinstance(arrays, (list, tuple)):
        raise TraceError("concatenate takes a list or tuple of arrays")
    if not arrays:
        raise TraceError("concatenate needs at least one array")
    arrays = elementwise.operands(*arrays, dtype=None if dtype is None else np.dtype(dtype))
    if axis is None:
        arrays, axis = [ravel(x) for x in arrays], 0
    first = arrays[0]
    if first.ndim == 0:
        raise TraceError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, first.ndim)
    for x in arrays[1:]:
        if x.ndim != first.ndim:
            raise TraceError(f"concatenate: {shape_string(first)} and {shape_string(x)} have different ranks")
        for d in range(first.ndim):
            s, t = first.static_shape[d], x.static_shape[d]
            if d != axis and s is not None and t is not None and s != t:
                raise TraceError(f"concatenate along axis {axis}: {shape_string(first)} and {shape_string(x)} differ in axis {d}")
    if len(arrays) == 1:
        return first
    return along(axis, _join_rows, *arrays)


def _join_rows(*parts: Array) -> Array:
    """The rows of ``parts`` one after the other: each part scattered into its
    place (a ``soac.scatter`` per part, whose derivative is a gather)."""
    offsets: list[Any] = [0]
    for p in parts:
        offsets.append(offsets[-1] + p.dim(0))
    joined = full([offsets[-1], *parts[0].shape[1:]], 0, parts[0].dtype)
    for p, offset in zip(parts, offsets):
        positions = combinators.iota(p.dim(0))
        joined = combinators.scatter(joined, positions if is_static(offset) and offset == 0 else positions + offset, p)
    return joined


@located
def stack(arrays: Sequence[Any], axis: int = 0, dtype: Any = None) -> Array:
    """The arrays (of one shape) joined along a new axis ``axis``.

    >>> import numpy as np, soac
    >>> soac.jit(lambda a, b: soac.numpy.stack([a, b], axis=1))(np.zeros(2), np.ones(2))
    array([[0., 1.],
           [0., 1.]])
    """
    if isinstance(arrays, Array) or not isinstance(arrays, (list, tuple)):
        raise TraceError("stack takes a list or tuple of arrays")
    if not arrays:
        raise TraceError("stack needs at least one array")
    arrays = elementwise.operands(*arrays, dtype=None if dtype is None else np.dtype(dtype))
    first = arrays[0]
    for x in arrays[1:]:
        if x.ndim != first.ndim or any(s is not None and t is not None and s != t for s, t in zip(first.static_shape, x.static_shape)):
            raise TraceError(f"stack: {shape_string(first)} and {shape_string(x)} differ")
    axis = normalize_axis(axis, first.ndim + 1)
    return concatenate([expand_dims(x, axis) for x in arrays], axis=axis)


def vstack(tup: Sequence[Any]) -> Array:
    """The arrays joined along axis 0, vectors as rows (``atleast_2d`` first)."""
    return concatenate([atleast_2d(x) for x in tup], axis=0)


def hstack(tup: Sequence[Any]) -> Array:
    """The arrays joined along axis 1, or along axis 0 for vectors."""
    arrays = [atleast_1d(x) for x in tup]
    return concatenate(arrays, axis=0 if arrays and arrays[0].ndim == 1 else 1)


def _section(x: Array, axis: int, start: Any, length: Any, ok: Any = True) -> Array:
    """``length`` positions of ``x`` along ``axis`` from ``start``."""
    return _along_axis(x, axis, length, lambda i: checked(i + start, ok, x.dim(axis)))


def _clamped_position(index: Any, size: Any) -> Any:
    """A slice bound as numpy reads it: negative counts from the end, then clamped to ``[0, size]``."""
    if is_static(index):
        index = int(index)
        if index < 0:
            index = size + index if not is_static(size) else int(size) + index
    else:
        index = select(index < 0, index + size, index)
    return size_min(size_max(index, 0), size)


@located
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """``ary`` cut along ``axis``: into ``indices_or_sections`` equal parts
    (an int), or before each of the positions in the list (ints, traced or
    not; negative ones count from the end, as in slices). Equal parts of a
    size known only when the program runs that does not divide stop it there.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: tuple(soac.numpy.split(x, [1, 3])))(np.arange(5.0))
    (array([0.]), array([1., 2.]), array([3., 4.]))
    """
    return _split(ary, indices_or_sections, axis, equal=True)


@located
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """:func:`split`, where ``n`` parts need not be equal: the first ``size % n`` have one more element."""
    return _split(ary, indices_or_sections, axis, equal=False)


def _split(ary: Any, sections: Any, axis: int, equal: bool) -> list[Array]:
    ary = lift(ary)
    axis = normalize_axis(axis, ary.ndim)
    n = ary.dim(axis)
    if is_static(sections):
        count = int(sections)
        if count <= 0:
            raise TraceError(f"split: the number of sections must be positive, got {count}")
        length = size_floordiv(n, count)
        if equal:
            ok = size_equal(length * count, n)
            if ok is False:
                raise TraceError(f"split: {shape_string(ary)} does not split into {count} equal parts along axis {axis}")
            return [_section(ary, axis, length * k, length, ok) for k in range(count)]
        extra = n - length * count  # the first `extra` parts have one more element
        return [
            _section(ary, axis, length * k + size_min(k, extra), length + select(size_less(k, extra), 1, 0))
            for k in range(count)
        ]
    if isinstance(sections, Array):
        raise TraceError("split: give the split positions as a list (of ints, traced or not), not an array")
    bounds = [0, *[_clamped_position(i, n) for i in sections], n]
    return [_section(ary, axis, start, size_max(stop - start, 0)) for start, stop in zip(bounds[:-1], bounds[1:])]


@located
def flip(m: Any, axis: Any = None) -> Array:
    """``m`` with the order of its elements reversed along ``axis`` (an int,
    a tuple, or every axis when None).

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.flip(x, 1))(np.arange(4.0).reshape(2, 2))
    array([[1., 0.],
           [3., 2.]])
    """
    m = lift(m)
    axes = normalize_axes(axis, m.ndim, "flip")
    if not axes:
        return m
    return build(m.shape, lambda *at: m[tuple(m.dim(k) - 1 - i if k in axes else i for k, i in enumerate(at))])


def fliplr(m: Any) -> Array:
    """:func:`flip` along axis 1."""
    return flip(m, 1)


def flipud(m: Any) -> Array:
    """:func:`flip` along axis 0."""
    return flip(m, 0)


@located
def roll(a: Any, shift: Any, axis: Any = None) -> Array:
    """``a`` with its elements moved ``shift`` positions along ``axis``
    (cyclically; flattened and reshaped back when None); ``shift`` may be a
    traced int, or a tuple with one per axis."""
    a = lift(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = normalize_axes(axis, a.ndim, "roll")
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise TraceError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    moves = dict(zip(axes, shifts))
    return build(a.shape, lambda *at: a[tuple(elementwise.remainder(i - moves[k], a.dim(k)) if k in moves else i for k, i in enumerate(at))])


@located
def broadcast_to(array: Any, shape: Any) -> Array:
    """``array`` broadcast to ``shape`` as numpy does (its axes aligned with
    the trailing ones of ``shape``; an axis of size 1 repeats). Sizes known
    only when the program runs broadcast as well: a size 1 there repeats, and
    a size that is neither 1 nor the target stops the program.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.broadcast_to(x, (2, 3)))(np.arange(3.0))
    array([[0., 1., 2.],
           [0., 1., 2.]])
    """
    array = lift(array)
    shape = _size_arguments(shape, "broadcast_to")
    if array.ndim > len(shape):
        raise TraceError(f"broadcast_to: cannot broadcast {shape_string(array)} to {_sizes_string(shape)}, which has fewer axes")
    pad = len(shape) - array.ndim
    for d, s in enumerate(array.static_shape):
        target = shape[pad + d]
        if s is not None and s != 1 and is_static(target) and s != target:
            raise TraceError(f"broadcast_to: cannot broadcast {shape_string(array)} to {_sizes_string(shape)} (axis {d}: {s} against {target})")

    def level(x: Array, k: int) -> Array:
        if k == len(shape):
            return x
        target = shape[k]
        if k < pad:
            return combinators.map(lambda _: level(x, k + 1), combinators.iota(target))
        n = x.static_shape[0]
        if n is not None and is_static(target) and n == target:
            return combinators.map(lambda row: level(row, k + 1), x)
        if n == 1:
            row = x[0]
            return combinators.map(lambda _: level(row, k + 1), combinators.iota(target))
        size = x.dim(0)
        one = size_equal(size, 1)
        ok = elementwise.binary("or", one, size_equal(size, target))
        return combinators.map(lambda i: level(x[checked(select(one, 0, i), ok, size)], k + 1), combinators.iota(target))

    return level(array, 0)


@located
def tile(A: Any, reps: Any) -> Array:
    """``A`` repeated ``reps`` times along each axis (an int or a tuple, ints
    or traced ints), with numpy's alignment: the shorter of ``A``'s shape and
    ``reps`` is padded with leading 1s.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.tile(x, (2, 2)))(np.arange(2.0))
    array([[0., 1., 0., 1.],
           [0., 1., 0., 1.]])
    """
    A = lift(A)
    reps = _size_arguments(reps, "tile")
    if len(reps) > A.ndim:
        A = expand_dims(A, tuple(range(len(reps) - A.ndim))) if A.ndim or len(reps) else A
    reps = (1,) * (A.ndim - len(reps)) + reps
    sizes = [A.dim(d) if is_static(r) and r == 1 else A.dim(d) * r for d, r in enumerate(reps)]

    def element(*indices: Array) -> Array:
        key = [i if is_static(r) and r == 1 else elementwise.remainder(i, A.dim(d)) for d, (i, r) in enumerate(zip(indices, reps))]
        return A[tuple(key)]

    return build(sizes, element) if A.ndim else A


@located
def repeat(a: Any, repeats: Any, axis: int | None = None) -> Array:
    """Each element of ``a`` (flattened when ``axis`` is None) or each slice
    along ``axis``, ``repeats`` times in a row: ``repeats`` is one int
    (Python or traced); numpy's array of counts per element is not supported.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.numpy.repeat(x, 2))(np.arange(3.0))
    array([0., 0., 1., 1., 2., 2.])
    """
    a = lift(a)
    if isinstance(repeats, Array) and repeats.ndim:
        raise TraceError("repeat: only a single number of repeats is supported, not one per element")
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    return _along_axis(a, axis, a.dim(axis) * repeats, lambda i: elementwise.floor_divide(i, repeats))


def _index_array(indices: Any, what: str) -> Array:
    indices = lift(indices)
    if indices.dtype.kind not in "iu":
        raise TraceError(f"{what}: indices must be integers, got {indices.dtype}")
    return indices


def _position(index: Array, size: Any, mode: str | None) -> Any:
    """An index into an axis of ``size`` as numpy's ``take`` reads it: negative
    ones count from the end ("raise", the default: one still out of range stops
    the program), or wrapped ("wrap"), or clipped ("clip")."""
    if mode in (None, "raise"):
        return select(index < 0, index + size, index)
    if mode == "wrap":
        return elementwise.remainder(index, size)
    if mode == "clip":
        return size_max(size_min(index, size - 1), 0)
    raise TraceError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")


@located
def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None) -> Array:
    """The elements (or slices along ``axis``) of ``a`` at ``indices``, an
    integer array of any shape: the result has ``a.shape[:axis] +
    indices.shape + a.shape[axis + 1:]`` (``a`` flattened when ``axis`` is
    None). Negative indices count from the end; ``mode`` is numpy's ("raise",
    the default, stops the program on an index still out of range, "wrap",
    "clip"; JAX's default "fill" is not supported).

    >>> import numpy as np, soac
    >>> soac.jit(lambda x, i: soac.numpy.take(x, i, axis=1))(np.arange(6.0).reshape(2, 3), np.array([2, -3]))
    array([[2., 0.],
           [5., 3.]])
    """
    a, indices = lift(a), _index_array(indices, "take")
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim)

    before, after = list(range(axis)), list(range(axis + 1, a.ndim))
    sizes = [a.dim(k) for k in before] + list(indices.shape) + [a.dim(k) for k in after]

    def element(*at: Array) -> Array:
        where = at[axis:axis + indices.ndim]
        index = indices[where] if indices.ndim else indices
        key = [*at[:axis], _position(index, a.dim(axis), mode), *at[axis + indices.ndim:]]
        return a[tuple(key)]

    return build(sizes, element)


@located
def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None) -> Array:
    """``arr`` read along ``axis`` at ``indices``, an integer array of the
    same rank (``result[i, j] = arr[i, indices[i, j]]`` for ``axis=1``), as
    the output of ``argsort`` indexes; the other axes broadcast where one of
    the two has static size 1. ``axis=None`` takes from the flattened array.
    Negative indices count from the end (``mode`` as in :func:`take`).

    >>> import numpy as np, soac
    >>> soac.jit(lambda x, i: soac.numpy.take_along_axis(x, i, 1))(np.arange(6.0).reshape(2, 3), np.array([[2], [0]]))
    array([[2.],
           [3.]])
    """
    arr, indices = lift(arr), _index_array(indices, "take_along_axis")
    if axis is None:
        if indices.ndim != 1:
            raise TraceError(f"take_along_axis with axis=None needs a vector of indices, got {indices!r}")
        arr, axis = ravel(arr), 0
    if indices.ndim != arr.ndim:
        raise TraceError(f"take_along_axis: indices {shape_string(indices)} and array {shape_string(arr)} differ in rank")
    axis = normalize_axis(axis, arr.ndim)
    sizes: list[Any] = []
    for d in range(arr.ndim):
        s, t = arr.static_shape[d], indices.static_shape[d]
        if d != axis and s is not None and t is not None and s != t and 1 not in (s, t):
            raise TraceError(f"take_along_axis: indices {shape_string(indices)} and array {shape_string(arr)} differ in axis {d}")
        sizes.append(arr.dim(d) if d != axis and t == 1 and s != 1 else indices.dim(d))

    def element(*at: Array) -> Array:
        index_key = tuple(0 if indices.static_shape[d] == 1 and d != axis else i for d, i in enumerate(at))
        key = [0 if arr.static_shape[d] == 1 and indices.static_shape[d] != 1 else i for d, i in enumerate(at)]
        key[axis] = _position(indices[index_key], arr.dim(axis), mode)
        return arr[tuple(key)]

    return build(sizes, element)
