"""tensor dialect ops. Tensors are immutable: every op that "writes" copies."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from mlir import ir

from .core import element_dtype, fail, handles

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _shape(result_type: ir.RankedTensorType, dynamic_sizes: Sequence[Any]) -> list[int]:
    """The static shape of ``result_type`` with its dynamic dims taken from ``dynamic_sizes``."""
    sizes = iter(int(s) for s in dynamic_sizes)
    return [next(sizes) if d == _DYNAMIC else d for d in result_type.shape]


def _mixed(op: ir.OpView, name: str, dynamic: Iterator[Any]) -> list[int]:
    """Static offsets/sizes/strides of a slice op with the dynamic ones filled in."""
    return [int(next(dynamic)) if v == _DYNAMIC else v for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def _slice_of(op: ir.OpView, dynamic_operands: Sequence[Any], shape: Sequence[int]) -> tuple[list[int], tuple]:
    """The sizes of a slice op and the numpy index selecting it from a tensor of
    ``shape``, after checking that it lies inside."""
    dynamic = iter(dynamic_operands)
    offsets = _mixed(op, "static_offsets", dynamic)
    sizes = _mixed(op, "static_sizes", dynamic)
    strides = _mixed(op, "static_strides", dynamic)
    for dim, (extent, offset, size, stride) in enumerate(zip(shape, offsets, sizes, strides)):
        if size and (offset < 0 or offset + (size - 1) * stride >= extent):
            raise fail(op, f"slice out of bounds in dim {dim}: offset {offset}, size {size}, stride {stride} of {extent}")
    index = tuple(slice(o, o + s * st, st) if s > 0 else slice(o, o) for o, s, st in zip(offsets, sizes, strides))
    return sizes, index


def _reduced_shape(sizes: Sequence[int], result_type: ir.RankedTensorType) -> list[int]:
    """The sizes kept by a rank-reducing slice: unit sizes are dropped where the
    result type has fewer dims."""
    result = list(result_type.shape)
    kept, r = [], 0
    for i, size in enumerate(sizes):
        remaining_sizes, remaining_dims = len(sizes) - i, len(result) - r
        if r < len(result) and (size != 1 or remaining_sizes == remaining_dims or result[r] == 1):
            kept.append(size)
            r += 1
    return kept


def _as_int64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit number, as compiled code holds it."""
    return (value + 2**63) % 2**64 - 2**63


def _check_product(op: ir.OpView, factors: Sequence[int], expected: int, what: str, expected_text: str,
                   both_empty: bool = False) -> None:
    """Fails unless ``factors`` multiply to ``expected`` (or ``both_empty``: the
    op's source and result have no elements), with the messages of
    soac-check-indices (CheckSizes.cpp): first that none is negative and the
    product fits in 64 bits, then the product."""
    product = int(np.prod(factors, dtype=object)) if factors else 1
    if any(f < 0 for f in factors) or product >= 2**64:
        raise fail(op, f"one of {what} is negative, or their product overflows")
    if product != expected and not both_empty:
        raise fail(op, f"{what} multiply to {_as_int64(product)}, but {expected_text % expected}")


@handles("tensor.extract")
def _extract(interp, op, operands):
    tensor, *indices = operands
    position = tuple(int(i) for i in indices)
    if any(not 0 <= i < n for i, n in zip(position, tensor.shape)):
        raise fail(op, f"index {list(position)} out of bounds for shape {list(tensor.shape)}")
    return [tensor[position]]


@handles("tensor.insert")
def _insert(interp, op, operands):
    value, dest, *indices = operands
    position = tuple(int(i) for i in indices)
    if any(not 0 <= i < n for i, n in zip(position, dest.shape)):
        raise fail(op, f"index {list(position)} out of bounds for shape {list(dest.shape)}")
    result = dest.copy()
    result[position] = value
    return [result]


@handles("tensor.splat")
def _splat(interp, op, operands):
    value, *dynamic_sizes = operands
    result_type = op.results[0].type
    return [np.full(_shape(result_type, dynamic_sizes), value, dtype=element_dtype(result_type))]


@handles("tensor.empty")
def _empty(interp, op, operands):
    # Contents are undefined; zeros make runs reproducible.
    result_type = op.results[0].type
    return [np.zeros(_shape(result_type, operands), dtype=element_dtype(result_type))]


@handles("tensor.generate")
def _generate(interp, op, operands):
    result_type = op.results[0].type
    result = np.zeros(_shape(result_type, operands), dtype=element_dtype(result_type))
    for position in np.ndindex(*result.shape):
        (result[position],) = interp.run_region(op.regions[0], [np.int64(i) for i in position])
    return [result]


@handles("tensor.from_elements")
def _from_elements(interp, op, operands):
    result_type = op.results[0].type
    return [np.array(operands, dtype=element_dtype(result_type)).reshape(result_type.shape)]


@handles("tensor.dim")
def _dim(interp, op, operands):
    tensor, dim = operands
    if not 0 <= int(dim) < tensor.ndim:
        raise fail(op, f"dimension {int(dim)} out of range for rank {tensor.ndim}")
    return [np.int64(tensor.shape[int(dim)])]


@handles("tensor.cast")
def _cast(interp, op, operands):
    (tensor,) = operands
    shape = [size if expected == _DYNAMIC else expected for expected, size in zip(op.results[0].type.shape, tensor.shape)]
    if tensor.size == 0 and 0 in shape:
        return [tensor.reshape(shape)]  # empty tensors may differ in their sizes, as in compiled code
    for dim, (expected, size) in enumerate(zip(shape, tensor.shape)):
        if expected != size:
            raise fail(op, f"dimension {dim} of the source has size {size}, but the result type has {expected}")
    return [tensor]


@handles("tensor.reshape")
def _reshape(interp, op, operands):
    source, shape = operands
    result_type = op.results[0].type
    sizes = [int(s) for s in shape]
    for dim, (size, static) in enumerate(zip(sizes, result_type.shape)):
        if static != _DYNAMIC and size != static:
            raise fail(op, f"dimension {dim} of the shape is {size}, but the result type has {static}")
    _check_product(op, sizes, source.size, "the shape's sizes", "the source has %d elements")
    return [source.reshape(sizes)]


@handles("tensor.concat")
def _concat(interp, op, operands):
    axis = ir.IntegerAttr(op.attributes["dim"]).value
    result_type = op.results[0].type
    for dim, static in enumerate(result_type.shape):
        if dim == axis:
            continue
        expected = static if static != _DYNAMIC else operands[0].shape[dim]
        for k, tensor in enumerate(operands):
            if tensor.shape[dim] != expected:
                raise fail(op, f"input {k} has size {tensor.shape[dim]} in dimension {dim}, but the result has {expected}")
    total = sum(tensor.shape[axis] for tensor in operands)
    if result_type.shape[axis] not in (_DYNAMIC, total):
        raise fail(op, f"the inputs' sizes in dimension {axis} add up to {total}, but the result has {result_type.shape[axis]}")
    return [np.concatenate(operands, axis=axis)]


@handles("tensor.extract_slice")
def _extract_slice(interp, op, operands):
    source, *dynamic = operands
    sizes, index = _slice_of(op, dynamic, source.shape)
    return [source[index].reshape(_reduced_shape(sizes, op.results[0].type)).copy()]


@handles("tensor.insert_slice")
def _insert_slice(interp, op, operands):
    source, dest, *dynamic = operands
    sizes, index = _slice_of(op, dynamic, dest.shape)
    kept = _reduced_shape(sizes, op.operands[0].type)
    if source.size or 0 not in kept:  # empty tensors may differ in their sizes, as in compiled code
        for dim, (size, expected) in enumerate(zip(source.shape, kept)):
            if size != expected:
                raise fail(op, f"dimension {dim} of the source has size {size}, but the slice has {expected}")
    result = dest.copy()
    result[index] = np.reshape(source, sizes)
    return [result]


@handles("tensor.collapse_shape")
def _collapse_shape(interp, op, operands):
    (source,) = operands
    groups = [list(ir.ArrayAttr(group)) for group in ir.ArrayAttr(op.attributes["reassociation"])]
    shape = [int(np.prod([source.shape[ir.IntegerAttr(d).value] for d in group])) for group in groups]
    return [source.reshape(shape)]


@handles("tensor.expand_shape")
def _expand_shape(interp, op, operands):
    source, *dynamic = operands
    shape = _mixed(op, "static_output_shape", iter(dynamic))
    groups = [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)] for group in ir.ArrayAttr(op.attributes["reassociation"])]
    # Empty tensors may differ in their sizes, as in compiled code (a map without rows has rows of size 0).
    both_empty = source.size == 0 and 0 in shape
    for g, group in enumerate(groups):
        _check_product(op, [shape[d] for d in group], source.shape[g], f"the sizes of group {g}", "the source has %d", both_empty)
    return [source.reshape(shape)]
