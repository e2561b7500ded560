"""The state of a trace and the conversions between Python values and IR.

A trace builds one ``func.func``; :class:`Trace` objects form a stack because
differentiating a function inside a trace traces it into a second function
of the same module. Arrays remember their trace, so that a value captured from
an enclosing function (which ``func.func`` cannot see) is a clear error.

This module knows IR values only: the traced array (:mod:`.array`) is built on
it, and wraps the values made here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, tensor

from ..runtime.abi import as_array
from ..types import numpy_dtype
from . import pytree
from .locations import TraceError

Structure = pytree.PyTreeDef  # how leaves nest

_FLOATS = {"float16": ir.F16Type.get, "float32": ir.F32Type.get, "float64": ir.F64Type.get}
# The native-byte-order dtypes ArgSpec.of accepts (others are judged by name and kind).
_TRACEABLE_DTYPES = frozenset(map(np.dtype, (*_FLOATS, "bool", "int8", "int16", "int32", "int64")))


# Inner sizes (all but an array's first) up to this are traced as static by
# default: loops over the 3 of a point, the 4 of a 4 × 4 transform or the 10
# coordinates of GMM's points then have trip counts LLVM knows, and no
# vectorized loop with run-time checks and a scalar remainder each
# (docs/benchmarks.md, "Static shapes against dynamic ones"), at the cost of
# one compilation per such size. 16: two vectors of AVX-512 float64s.
SMALL_INNER_SIZE = 16
# The bound for traces lowered to the GPU (the GPU check bundle's), where the
# timings on a GPU were measured with it: static sizes there have not been
# timed on a GPU yet. (Their splats of zeros used to become host constants
# copied to the device at each use; the GPU lowering now fills them on the
# GPU as it does dynamic ones.)
GPU_SMALL_INNER_SIZE = 4


@dataclass(frozen=True)
class ArgSpec:
    """The abstract value a traced function is compiled for: a dtype and a
    rank (0 for a scalar); every size is dynamic unless ``shape`` gives it
    (``None`` for each dynamic one)."""

    dtype: np.dtype
    ndim: int
    shape: tuple[int | None, ...] | None = None

    @staticmethod
    def of(value: Any, static_shape: bool = False, static_inner_sizes_up_to: int = 0) -> ArgSpec:
        """The spec of an argument: its sizes included when ``static_shape``,
        else those of its inner sizes (all but the first) that are at most
        ``static_inner_sizes_up_to``."""
        if isinstance(value, ArgSpec):
            return value
        if type(value) is np.ndarray and value.dtype in _TRACEABLE_DTYPES:  # the common case, quickly
            return ArgSpec(value.dtype, value.ndim, _traced_sizes(value.shape, static_shape, static_inner_sizes_up_to))
        array = as_array(value) if hasattr(value, "__dlpack__") or hasattr(value, "__array__") else None
        if array is None and not isinstance(value, (np.generic, bool, int, float)):
            raise TraceError(
                f"cannot pass a {type(value).__name__} to a traced function; use arrays (numpy, or anything with "
                "__dlpack__ or __array__), numbers, or pytrees of them"
            )
        array = np.asarray(value) if array is None else array
        if not (array.dtype.name in _FLOATS or array.dtype == np.bool_ or array.dtype.kind == "i"):
            raise TraceError(f"arrays of dtype {array.dtype} cannot be traced")
        return ArgSpec(array.dtype, array.ndim, _traced_sizes(tuple(array.shape), static_shape, static_inner_sizes_up_to))

    def ir_type(self) -> ir.Type:
        element = element_type(self.dtype)
        if self.ndim == 0:
            return element
        dynamic = ir.ShapedType.get_dynamic_size()
        shape = [dynamic if size is None else size for size in self.shape or (None,) * self.ndim]
        return ir.RankedTensorType.get(shape, element)


def _traced_sizes(shape: tuple[int, ...], every: bool, inner_up_to: int) -> tuple[int | None, ...] | None:
    """The sizes of ``shape`` a trace takes as static (ArgSpec.shape): all
    of them, or the inner ones up to ``inner_up_to``; None when none is."""
    if not shape:
        return None
    if every:
        return tuple(shape)
    sizes = tuple(size if axis and size <= inner_up_to else None for axis, size in enumerate(shape))
    return sizes if any(size is not None for size in sizes) else None


@dataclass
class Trace:
    """One function being traced: its module and its ``func.func``.

    A ``capturing`` trace (a function traced to be differentiated inside
    another) turns the values of enclosing traces that it uses into extra
    arguments, appended after its own (closure conversion, as JAX does):
    ``captures`` pairs each value of the enclosing trace with its argument.
    """

    module: ir.Module
    function: func.FuncOp
    capturing: bool = False
    captures: list[tuple[ir.Value, ir.Value]] = field(default_factory=list)

    def capture(self, outer: ir.Value) -> ir.Value:
        """The argument standing for ``outer`` (a value of the enclosing trace)."""
        for value, argument in self.captures:
            if value == outer:
                return argument
        argument = self.function.entry_block.add_argument(outer.type, ir.Location.unknown())
        self.captures.append((outer, argument))
        return argument


_stack: list[Trace] = []


def capture(value: ir.Value, owner: Trace) -> ir.Value | None:
    """``value`` of the enclosing trace ``owner`` as a value of the current
    trace, through the arguments of every capturing trace in between; None
    where ``owner`` is no enclosing trace or a trace in between cannot capture."""
    positions = [i for i, trace in enumerate(_stack) if trace is owner]
    if not positions:
        return None
    inner = _stack[positions[-1] + 1:]
    if not inner or not all(trace.capturing for trace in inner):
        return None
    for trace in inner:
        value = trace.capture(value)
    return value


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


@contextlib.contextmanager
def into(module: ir.Module, function: func.FuncOp, *, capturing: bool = False) -> Iterator[Trace]:
    """Makes ``function`` (of ``module``) the current trace inside the ``with`` block."""
    trace = Trace(module, function, capturing)
    _stack.append(trace)
    try:
        yield trace
    finally:
        _stack.pop()


def flatten(output: Any) -> tuple[list[Any], Structure]:
    """The leaves of ``output`` (a pytree: nested tuples, lists, dicts, ... of
    values) and its structure for :func:`rebuild`."""
    return pytree.tree_flatten(output)


def rebuild(values: Sequence[Any], structure: Structure) -> Any:
    """The inverse of :func:`flatten`."""
    return pytree.tree_unflatten(structure, values)


def constant(value: Any, like: ir.Type | None = None) -> ir.Value:
    """A Python or numpy scalar (of the scalar type ``like`` when given: Python
    numbers take the type of the array they meet) or a numpy array as a
    constant of the current trace."""
    current()
    if isinstance(value, np.ndarray) and value.ndim == 0:  # a 0-d array is a scalar, as in numpy
        value = value[()]
    if isinstance(value, (bool, int, float)) and like is not None:
        return _scalar_constant(value, like)
    if isinstance(value, (bool, int, float, np.generic)):  # numpy scalars keep their dtype
        return _scalar_constant(value, ArgSpec.of(value).ir_type())
    if isinstance(value, np.ndarray):
        ArgSpec.of(value)
        shaped = ir.RankedTensorType.get(list(value.shape), element_type(value.dtype))
        return arith.constant(shaped, ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=shaped))
    raise TraceError(f"cannot trace a value of type {type(value).__name__}; soac traces arrays and numbers")


def join(a: ir.Type, b: ir.Type, what: str) -> ir.Type:
    """The most precise type both ``a`` and ``b`` can be cast to (sizes on which
    they disagree become dynamic)."""
    if a == b:
        return a
    if not same_rank_tensors(a, b):
        raise TraceError(f"{what}: {describe(a)} and {describe(b)} differ")
    a, b = ir.RankedTensorType(a), ir.RankedTensorType(b)
    shape = [x if x == y else ir.ShapedType.get_dynamic_size() for x, y in zip(a.shape, b.shape)]
    return ir.RankedTensorType.get(shape, a.element_type)


def same_rank_tensors(a: ir.Type, b: ir.Type) -> bool:
    """Whether ``a`` and ``b`` are tensors of one rank and element type (a cast joins them)."""
    if not (isinstance(a, ir.RankedTensorType) and isinstance(b, ir.RankedTensorType)):
        return False
    a, b = ir.RankedTensorType(a), ir.RankedTensorType(b)
    return a.rank == b.rank and a.element_type == b.element_type


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


def dim(value: ir.Value, axis: int) -> ir.Value:
    """The size of the tensor ``value`` along ``axis`` as an ``index`` value."""
    size = ir.RankedTensorType(value.type).shape[axis]
    if not ir.ShapedType.is_dynamic_size(size):
        return arith.constant(ir.IndexType.get(), size)
    return tensor.dim(value, arith.constant(ir.IndexType.get(), axis))


def _scalar_constant(value: Any, type_: ir.Type) -> ir.Value:
    if isinstance(type_, ir.FloatType):
        return arith.constant(type_, float(value))
    if isinstance(value, float):
        raise TraceError(f"the float {value!r} meets an integer value ({describe(type_)}); convert with .astype")
    return arith.constant(type_, int(value))
