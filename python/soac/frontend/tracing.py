"""The state of a trace and the conversions between Python values and IR.

A trace builds one ``func.func``; :class:`Trace` objects form a stack because
differentiating a function inside a trace traces it into a second function
of the same module. Arrays remember their trace, so that a value captured from
an enclosing function (which ``func.func`` cannot see) is a clear error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, tensor

from ..autodiff import _fresh_name as fresh_name
from ..types import numpy_dtype
from . import array as array_module
from .locations import TraceError, user_location

Structure = Union[None, tuple]  # how leaves nest: None for a leaf, a tuple of structures

_FLOATS = {"float16": ir.F16Type.get, "float32": ir.F32Type.get, "float64": ir.F64Type.get}


@dataclass(frozen=True)
class ArgSpec:
    """The abstract value a traced function is compiled for: a dtype and a
    rank (0 for a scalar); every size is dynamic."""

    dtype: np.dtype
    ndim: int

    @staticmethod
    def of(value: Any) -> ArgSpec:
        if isinstance(value, ArgSpec):
            return value
        if not isinstance(value, (np.ndarray, np.generic, bool, int, float)):
            raise TraceError(f"cannot pass a {type(value).__name__} to a traced function; use numpy arrays or scalars")
        array = np.asarray(value)
        if not (array.dtype.name in _FLOATS or array.dtype == np.bool_ or array.dtype.kind == "i"):
            raise TraceError(f"arrays of dtype {array.dtype} cannot be traced")
        return ArgSpec(array.dtype, array.ndim)

    def ir_type(self) -> ir.Type:
        element = element_type(self.dtype)
        if self.ndim == 0:
            return element
        return ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * self.ndim, element)


@dataclass
class Trace:
    """One function being traced: its module and its ``func.func``."""

    module: ir.Module
    function: func.FuncOp


_stack: list[Trace] = []


def active() -> bool:
    """Whether a function is being traced."""
    return bool(_stack)


def current() -> Trace:
    if not _stack:
        raise TraceError("soac operations on arrays need a traced function (soac.jit, soac.grad, ...)")
    return _stack[-1]


def element_type(dtype: np.dtype) -> ir.Type | None:
    """The MLIR scalar type of a numpy dtype (integers are signless), or None."""
    dtype = np.dtype(dtype)
    if dtype.name in _FLOATS:
        return _FLOATS[dtype.name]()
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dtype.kind == "i":
        return ir.IntegerType.get_signless(8 * dtype.itemsize)
    return None


def trace_function(fn: Callable, arg_types: Sequence[ir.Type], module: ir.Module, *, private: bool = False):
    """Traces ``fn`` into a new ``func.func`` of ``module`` taking ``arg_types``.

    ``private`` functions (callees of a soac.vjp) are not entry points.
    Returns the function and how to rebuild ``fn``'s output from its results
    (see :func:`flatten`).
    """
    code = getattr(fn, "__code__", None)
    location = ir.Location.file(code.co_filename, code.co_firstlineno, 1) if code else user_location()
    # Helpers go first: soac-autodiff expands a soac.vjp of a function that
    # itself holds a soac.vjp only when the callee comes first in the module.
    where = ir.InsertionPoint.at_block_begin(module.body) if private else ir.InsertionPoint(module.body)
    with location, where:
        name = fresh_name(module, re.sub(r"\W", "", getattr(fn, "__name__", "")) or "traced")  # <lambda> -> lambda
        function = func.FuncOp(name, (list(arg_types), []))
        if private:
            function.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = function.add_entry_block()
    _stack.append(Trace(module, function))
    try:
        with location, ir.InsertionPoint(block):
            values, structure = flatten(fn(*[array_module.Array(v) for v in block.arguments]))
            if not values:
                raise TraceError(f"traced function {function.name.value} returns nothing")
            results = [lift(v).value for v in values]
            func.ReturnOp(results)
    finally:
        _stack.pop()
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(arg_types), [r.type for r in results]))
    return function, structure


def flatten(output: Any) -> tuple[list[Any], Structure]:
    """The leaves of ``output`` (a value or nested tuples/lists of values) and
    its structure for :func:`rebuild` (``None`` for a leaf)."""
    if not isinstance(output, (tuple, list)):
        return [output], None
    leaves, structure = [], []
    for item in output:
        item_leaves, item_structure = flatten(item)
        leaves += item_leaves
        structure.append(item_structure)
    return leaves, tuple(structure)


def rebuild(values: Sequence[Any], structure: Structure) -> Any:
    """The inverse of :func:`flatten` (tuples for lists)."""
    leaves = iter(values)

    def build(node: Structure) -> Any:
        return next(leaves) if node is None else tuple(build(child) for child in node)

    return build(structure)


def lift(value: Any, like: ir.Type | None = None) -> array_module.Array:
    """``value`` as an Array of the current trace: Python and numpy scalars
    become constants (of the scalar type ``like`` when given: Python numbers
    take the type of the array they meet), numpy arrays dense constants."""
    if isinstance(value, array_module.Array):
        if value.trace is not current():
            raise TraceError(
                "this value belongs to another traced function (a closure over a traced value, or one kept "
                "after its trace ended); pass it as an argument instead"
            )
        return value
    current()
    if isinstance(value, (bool, int, float)) and like is not None:
        return array_module.Array(_scalar_constant(value, like))
    if isinstance(value, (bool, int, float, np.generic)):  # numpy scalars keep their dtype
        return array_module.Array(_scalar_constant(value, ArgSpec.of(value).ir_type()))
    if isinstance(value, np.ndarray):
        ArgSpec.of(value)
        shaped = ir.RankedTensorType.get(list(value.shape), element_type(value.dtype))
        return array_module.Array(arith.constant(shaped, ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=shaped)))
    raise TraceError(f"cannot trace a value of type {type(value).__name__}; soac traces arrays and numbers")


def coerce(values: Sequence[Any], types: Sequence[ir.Type], what: str) -> list[ir.Value]:
    """``values`` as IR values of ``types``: numbers become constants, tensors
    with the same dtype and rank are cast (a static size for a dynamic one)."""
    if len(values) != len(types):
        raise TraceError(f"{what} returns {len(values)} values where {len(types)} are expected")
    coerced = []
    for value, type_ in zip(values, types):
        value = lift(value, like=type_ if not isinstance(type_, ir.ShapedType) else None).value
        if value.type != type_:
            if not (_same_rank_tensors(value.type, type_)):
                raise TraceError(f"{what} returns {describe(value.type)} where {describe(type_)} is expected")
            value = tensor.cast(type_, value)
        coerced.append(value)
    return coerced


def join(a: ir.Type, b: ir.Type, what: str) -> ir.Type:
    """The most precise type both ``a`` and ``b`` can be cast to (sizes on which
    they disagree become dynamic)."""
    if a == b:
        return a
    if not _same_rank_tensors(a, b):
        raise TraceError(f"{what}: {describe(a)} and {describe(b)} differ")
    a, b = ir.RankedTensorType(a), ir.RankedTensorType(b)
    shape = [x if x == y else ir.ShapedType.get_dynamic_size() for x, y in zip(a.shape, b.shape)]
    return ir.RankedTensorType.get(shape, a.element_type)


def describe(type_: ir.Type) -> str:
    """A numpy-style name of an IR type: ``float64``, ``float32[?, 3]``."""
    if isinstance(type_, ir.RankedTensorType):
        tensor_type = ir.RankedTensorType(type_)
        dims = ", ".join("?" if ir.ShapedType.is_dynamic_size(d) else str(d) for d in tensor_type.shape)
        return f"{describe(tensor_type.element_type)}[{dims}]"
    if isinstance(type_, ir.IntegerType) and ir.IntegerType(type_).width == 1:
        return "bool"
    dtype = numpy_dtype(type_)
    return dtype.name if dtype is not None else str(type_)


def index(value: Any) -> ir.Value:
    """An integer (Python or traced scalar) as an ``index`` value."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return arith.constant(ir.IndexType.get(), int(value))
    value = lift(value)
    if value.ndim != 0 or value.dtype.kind != "i":
        raise TraceError(f"an index must be an integer scalar, got {describe(value.value.type)}")
    return arith.index_cast(ir.IndexType.get(), value.value)


def dim(array: array_module.Array, axis: int) -> ir.Value:
    """The size of ``array`` along ``axis`` as an ``index`` value."""
    static = array.shape[axis]
    if static is not None:
        return arith.constant(ir.IndexType.get(), static)
    return tensor.dim(array.value, arith.constant(ir.IndexType.get(), axis))


def _scalar_constant(value: Any, type_: ir.Type) -> ir.Value:
    if isinstance(type_, ir.FloatType):
        return arith.constant(type_, float(value))
    if isinstance(value, float):
        raise TraceError(f"the float {value!r} meets an integer value ({describe(type_)}); convert with .astype")
    return arith.constant(type_, int(value))


def _same_rank_tensors(a: ir.Type, b: ir.Type) -> bool:
    if not (isinstance(a, ir.RankedTensorType) and isinstance(b, ir.RankedTensorType)):
        return False
    a, b = ir.RankedTensorType(a), ir.RankedTensorType(b)
    return a.rank == b.rank and a.element_type == b.element_type
