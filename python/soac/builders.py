"""Build soac operations whose bodies come from Python callables.

The generated builders in :mod:`soac.dialect` take result types and leave regions
empty; these helpers create the body block with the right argument types, call
the Python function on its arguments, add the ``soac.yield`` and infer result
types. Values defined outside may be used freely inside a body.

>>> import soac
>>> from soac import builders
>>> from mlir import ir
>>> from mlir.dialects import arith, func
>>> with ir.Context(), ir.Location.unknown():
...     module = ir.Module.create()
...     f32 = ir.F32Type.get()
...     vec = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], f32)
...     with ir.InsertionPoint(module.body):
...         @func.FuncOp.from_py_func(vec, vec)
...         def dot(x, y):
...             products = builders.map([x, y], lambda a, b: arith.mulf(a, b))
...             zero = arith.constant(f32, 0.0)
...             return builders.reduce(products, zero, lambda acc, v: arith.addf(acc, v))
...     soac.verify(module)
...     print(dot.func_op.type)
(tensor<?xf32>, tensor<?xf32>) -> f32
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Union

from mlir import ir
from mlir.dialects import func

from . import _soac
from . import dialect as ops
from .errors import BuildError

Values = Union[ir.Value, Sequence[ir.Value]]
Body = Callable[..., Values]


def row_type(tensor_type: ir.Type) -> ir.Type:
    """The type of one row of a ranked tensor: its element type at rank 1,
    otherwise the tensor of the remaining dimensions."""
    tensor = ir.RankedTensorType(tensor_type)
    if tensor.rank == 0:
        raise BuildError(f"a tensor of rank 0 has no rows: {tensor}")
    if tensor.rank == 1:
        return tensor.element_type
    return ir.RankedTensorType.get(tensor.shape[1:], tensor.element_type)


def outer_size(tensors: Sequence[ir.Value]) -> int:
    """The static outer size shared by ``tensors``, or the dynamic-size marker."""
    for value in tensors:
        size = ir.RankedTensorType(value.type).shape[0]
        if not ir.ShapedType.is_dynamic_size(size):
            return size
    return ir.ShapedType.get_dynamic_size()


def tensor_of_rows(outer: int, row: ir.Type) -> ir.RankedTensorType:
    """The tensor type with ``outer`` rows of type ``row`` (a scalar or a tensor)."""
    if isinstance(row, ir.RankedTensorType):
        tensor = ir.RankedTensorType(row)
        return ir.RankedTensorType.get([outer, *tensor.shape], tensor.element_type)
    return ir.RankedTensorType.get([outer], row)


def map(
    inputs: Values,
    body: Body,
    *,
    result_types: Sequence[ir.Type] | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> Values:
    """``soac.map`` of ``body`` over the rows of ``inputs``.

    ``body`` receives one row per input and returns a value or a sequence of
    values; result types are inferred from them unless ``result_types`` is given.
    Returns the single result, or the list of results.
    """
    inputs = _as_list(inputs)
    if not inputs:
        raise BuildError("soac.map needs at least one input")
    if result_types is not None:
        op = ops.MapOp(list(result_types), inputs, loc=loc, ip=ip)
        _fill_body(op, [row_type(v.type) for v in inputs], body)
        return _results(op)
    # The result types depend on what the body yields: build the body in a
    # placeholder op first, then move it into the real one.
    placeholder = ops.MapOp([], inputs, loc=loc, ip=ip)
    yielded = _fill_body(placeholder, [row_type(v.type) for v in inputs], body)
    outer = outer_size(inputs)
    op = ops.MapOp([tensor_of_rows(outer, v.type) for v in yielded], inputs, loc=loc, ip=ip)
    placeholder.body.blocks[0].append_to(op.body)
    placeholder.operation.erase()
    return _results(op)


def reduce(
    inputs: Values,
    inits: Values,
    operator: Body,
    *,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> Values:
    """``soac.reduce`` of ``inputs`` with neutral elements ``inits``.

    ``operator`` receives the k accumulated values then the k new values and
    returns k values.
    """
    inputs, inits = _as_list(inputs), _as_list(inits)
    op = ops.ReduceOp([v.type for v in inits], inputs, inits, loc=loc, ip=ip)
    _fill_body(op, [v.type for v in inits] * 2, operator)
    return _results(op)


def scan(
    inputs: Values,
    inits: Values,
    operator: Body,
    *,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> Values:
    """Inclusive ``soac.scan``; operands and operator as for :func:`reduce`."""
    inputs, inits = _as_list(inputs), _as_list(inits)
    outer = outer_size(inputs) if inputs else ir.ShapedType.get_dynamic_size()
    result_types = [tensor_of_rows(outer, v.type) for v in inits]
    op = ops.ScanOp(result_types, inputs, inits, loc=loc, ip=ip)
    _fill_body(op, [v.type for v in inits] * 2, operator)
    return _results(op)


def reduce_by_index(
    dests: Values,
    indices: ir.Value,
    values: Values,
    inits: Values,
    operator: Body,
    *,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> Values:
    """``soac.reduce_by_index``: combine row i of ``values`` into row
    ``indices[i]`` of ``dests`` with ``operator`` (as for :func:`reduce`)."""
    dests, values, inits = _as_list(dests), _as_list(values), _as_list(inits)
    op = ops.ReduceByIndexOp([v.type for v in dests], dests, indices, values, inits, loc=loc, ip=ip)
    _fill_body(op, [v.type for v in inits] * 2, operator)
    return _results(op)


def scatter(
    dest: ir.Value,
    indices: ir.Value,
    values: ir.Value,
    *,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Value:
    """``soac.scatter``: ``dest`` with row ``indices[i]`` replaced by row i of ``values``."""
    return ops.scatter(dest.type, dest, indices, values, loc=loc, ip=ip)


def matmul(
    lhs: ir.Value,
    rhs: ir.Value,
    *,
    transpose_lhs: bool = False,
    transpose_rhs: bool = False,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Value:
    """``soac.matmul``: ``op(lhs) · op(rhs)`` of two matrices, ``op`` the
    transpose where asked; the result type follows from the operands."""
    lhs_shape = ir.RankedTensorType(lhs.type).shape
    rhs_shape = ir.RankedTensorType(rhs.type).shape
    m = lhs_shape[1 if transpose_lhs else 0]
    n = rhs_shape[0 if transpose_rhs else 1]
    result = ir.RankedTensorType.get([m, n], ir.RankedTensorType(lhs.type).element_type)
    return ops.matmul(
        result, lhs, rhs, transpose_lhs=transpose_lhs or None, transpose_rhs=transpose_rhs or None, loc=loc, ip=ip
    )


def iota(
    size: int | ir.Value,
    element_type: ir.Type | None = None,
    *,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Value:
    """``soac.iota``: ``0 .. size-1``; a static size is an ``int``, a dynamic one an ``index`` value."""
    element_type = element_type or ir.IndexType.get()
    if isinstance(size, int):
        return ops.iota(ir.RankedTensorType.get([size], element_type), loc=loc, ip=ip)
    dynamic = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], element_type)
    return ops.iota(dynamic, size=size, loc=loc, ip=ip)


def vjp(
    callee: func.FuncOp,
    operands: Sequence[ir.Value],
    *,
    wrt: Sequence[int] | None = None,
    width: int = 1,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> Values:
    """``soac.vjp @callee(args..., cotangents...)``: the callee's results, then one
    gradient per differentiated argument (all of them unless ``wrt`` is given);
    with ``width`` k (vector mode), k cotangents per result and k gradients per
    differentiated argument, consecutive."""
    result_types = list(derivative_type("vjp", callee, wrt=wrt, width=width).results)
    op = ops.VjpOp(result_types, _symbol(callee), list(operands), wrt=_wrt(wrt), width=_width(width), loc=loc, ip=ip)
    return _results(op)


def jvp(
    callee: func.FuncOp,
    operands: Sequence[ir.Value],
    *,
    wrt: Sequence[int] | None = None,
    width: int = 1,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> Values:
    """``soac.jvp @callee(args..., tangents...)``: the callee's results, then one
    tangent per result; with ``width`` k (vector mode), k tangents per
    differentiated argument and per result, consecutive."""
    result_types = list(derivative_type("jvp", callee, wrt=wrt, width=width).results)
    op = ops.JvpOp(result_types, _symbol(callee), list(operands), wrt=_wrt(wrt), width=_width(width), loc=loc, ip=ip)
    return _results(op)


def derivative_type(
    kind: str, callee: func.FuncOp, *, wrt: Sequence[int] | None = None, width: int = 1
) -> ir.FunctionType:
    """The type of ``soac.vjp`` (``kind`` "vjp") or ``soac.jvp`` ("jvp") of
    ``callee``: vjp ``(args..., cotangents...) -> (results..., gradients...)``,
    one cotangent per result and one gradient per argument in ``wrt`` (all of
    them by default); jvp ``(args..., tangents...) -> (results..., tangents...)``,
    one tangent per argument in ``wrt``, then per result; with ``width`` k,
    k of each, consecutive. The rule is defined once, in C++
    (dialect/DerivativeSignature.h), for the verifiers, soac-autodiff and this.

    >>> import soac
    >>> from soac import builders
    >>> from mlir import ir
    >>> from mlir.dialects import arith, func
    >>> with ir.Context(), ir.Location.unknown():
    ...     module = ir.Module.create()
    ...     f32, i64 = ir.F32Type.get(), ir.IntegerType.get_signless(64)
    ...     with ir.InsertionPoint(module.body):
    ...         @func.FuncOp.from_py_func(f32, i64)
    ...         def f(x, n):
    ...             return arith.mulf(x, x)
    ...     print(builders.derivative_type("vjp", f.func_op, wrt=[0], width=2))
    ...     print(builders.derivative_type("jvp", f.func_op, wrt=[0]))
    (f32, i64, f32, f32) -> (f32, f32, f32)
    (f32, i64, f32) -> (f32, f32)
    """
    signature = ir.FunctionType(callee.function_type.value)
    return ir.FunctionType(_soac.derivative_type(kind, signature, None if wrt is None else list(wrt), width))


def _as_list(values: Values) -> list[ir.Value]:
    if isinstance(values, ir.Value):
        return [values]
    if isinstance(values, ir.OpView):
        return list(values.results)
    return list(values)


def _fill_body(op: ir.OpView, arg_types: Sequence[ir.Type], body: Body) -> list[ir.Value]:
    """Creates the body block of ``op``, calls ``body`` in it and yields what it returns."""
    block = op.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block), op.location:
        returned = body(*block.arguments)
        yielded = _as_yielded(returned, op.operation.name)
        ops.yield_(yielded)
    return yielded


def _as_yielded(returned: object, op_name: str) -> list[ir.Value]:
    if isinstance(returned, (ir.Value, ir.OpView)):
        return _as_list(returned)
    if isinstance(returned, (list, tuple)) and all(isinstance(v, ir.Value) for v in returned):
        return list(returned)
    raise BuildError(
        f"the body of {op_name} must return an mlir.ir.Value or a sequence of them, "
        f"got {type(returned).__name__}"
    )


def _results(op: ir.OpView) -> Values:
    results = list(op.results)
    return results[0] if len(results) == 1 else results


def _symbol(callee: func.FuncOp) -> ir.FlatSymbolRefAttr:
    return ir.FlatSymbolRefAttr.get(ir.StringAttr(callee.sym_name).value)


def _width(width: int) -> ir.IntegerAttr | None:
    return None if width == 1 else ir.IntegerAttr.get(ir.IntegerType.get_signless(64), width)


def _wrt(wrt: Sequence[int] | None) -> ir.DenseI64ArrayAttr | None:
    return None if wrt is None else ir.DenseI64ArrayAttr.get(list(wrt))
