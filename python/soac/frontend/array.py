"""Traced arrays: an ``ir.Value`` with a numpy-like face, and Python values
made into traced arrays (:func:`lift`, :func:`coerce`, :func:`index`).

The class knows its value, shape and dtype only. Its operators and methods
(``+``, ``@``, ``x[i]``, ``x.sum()``, ...) emit ops, so the modules that
emit them build on this one, and the numpy layer attaches them to the class
(``_numpy/array_methods.py``, as JAX does) without an import cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from ..types import numpy_dtype
from . import tracing
from .locations import ConcretizationError, TraceError, user_location


class Array:
    """A value of a traced function: a scalar or a tensor, with ``shape``,
    ``ndim``, ``size`` and ``dtype``.

    Sizes are values: ``x.shape`` holds a Python int for each static size and
    a traced int64 scalar for each dynamic one (every size of a traced
    argument is dynamic unless the function is jitted with
    ``static_shapes=True``), so sizes can be computed with and passed to
    ``arange``, ``iota``, ``zeros`` and slices. ``static_shape`` has ``None``
    for the dynamic sizes instead.
    """

    # The matrix this one is the transpose of, when a transpose made it
    # (products read that matrix with a transpose flag instead).
    transpose_of: Array | None = None

    def __init__(self, value: ir.Value):
        self.value = value
        self.owner = tracing.current()  # the trace whose function holds the value

    @property
    def static_shape(self) -> tuple[int | None, ...]:
        """The sizes known while tracing: an int per static size, ``None`` per dynamic one."""
        if not isinstance(self.value.type, ir.RankedTensorType):
            return ()
        shape = ir.RankedTensorType(self.value.type).shape
        return tuple(None if ir.ShapedType.is_dynamic_size(d) else d for d in shape)

    @property
    def shape(self) -> tuple[Any, ...]:
        """The sizes as values: Python ints where static, traced int64 scalars where dynamic."""
        return tuple(self.dim(axis) for axis in range(self.ndim))

    def dim(self, axis: int) -> Any:
        """The size along ``axis``: a Python int when static, else a traced int64 scalar."""
        static = self.static_shape[axis]
        if static is not None:
            return static
        with user_location():
            return Array(arith.index_cast(ir.IntegerType.get_signless(64), tracing.dim(self.value, axis)))

    @property
    def size(self) -> Any:
        """The number of elements (a Python int when every size is static)."""
        total: Any = 1
        for axis in range(self.ndim):
            total = total * self.dim(axis)
        return total

    @property
    def ndim(self) -> int:
        return len(self.static_shape)

    @property
    def dtype(self) -> np.dtype:
        type_ = self.value.type
        return numpy_dtype(ir.RankedTensorType(type_).element_type if self.ndim else type_)

    def __repr__(self) -> str:
        return f"soac traced {tracing.describe(self.value.type)}"

    def __bool__(self):
        raise ConcretizationError(
            "a traced value has no Python truth value (it is known when the program runs); "
            "use soac.cond, soac.while_loop or soac.numpy.where"
        )

    def __index__(self) -> int:
        raise ConcretizationError(
            f"{self!r} is used as a Python int (range, int, a list index), but it is known only when the program runs; "
            "use soac.fori_loop or soac.map over soac.iota, or pass it in static_argnums"
        )

    __int__ = __index__

    def __len__(self) -> int:
        # Python insists that len() is an int, so a dynamic size cannot be one.
        if not self.ndim:
            raise TraceError(f"len() of a scalar {self!r}")
        if self.static_shape[0] is None:
            raise ConcretizationError(
                f"len() of {self!r}: the size is only known when the program runs; use x.shape[0] "
                "(a traced int), or jit with static_shapes=True to trace for the arguments' sizes"
            )
        return self.static_shape[0]

    def __iter__(self):
        raise TraceError(f"cannot iterate over {self!r} in Python; use soac.map or soac.fori_loop")


def lift(value: Any, like: ir.Type | None = None) -> Array:
    """``value`` as an Array of the current trace: Python and numpy scalars
    become constants (of the scalar type ``like`` when given: Python numbers
    take the type of the array they meet), numpy arrays dense constants."""
    if isinstance(value, Array):
        if value.owner is not tracing.current():
            captured = tracing.capture(value.value, value.owner)
            if captured is not None:
                return Array(captured)
            raise TraceError(
                "this value belongs to another traced function (a closure over a traced value, or one kept "
                "after its trace ended); pass it as an argument instead"
            )
        return value
    return Array(tracing.constant(value, like))


def coerce(values: Sequence[Any], types: Sequence[ir.Type], what: str) -> list[ir.Value]:
    """``values`` as IR values of ``types``: numbers become constants, tensors
    with the same dtype and rank are cast (a static size for a dynamic one)."""
    if len(values) != len(types):
        raise TraceError(f"{what} returns {len(values)} values where {len(types)} are expected")
    coerced = []
    for value, type_ in zip(values, types):
        value = lift(value, like=type_ if not isinstance(type_, ir.ShapedType) else None).value
        if value.type != type_:
            if not tracing.same_rank_tensors(value.type, type_):
                raise TraceError(f"{what} returns {tracing.describe(value.type)} where {tracing.describe(type_)} is expected")
            value = tensor.cast(type_, value)
        coerced.append(value)
    return coerced


def index(value: Any) -> ir.Value:
    """An integer (Python or traced scalar) as an ``index`` value."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return arith.constant(ir.IndexType.get(), int(value))
    value = lift(value)
    if value.ndim != 0 or value.dtype.kind != "i":
        raise TraceError(f"an index must be an integer scalar, got {tracing.describe(value.value.type)}")
    return arith.index_cast(ir.IndexType.get(), value.value)
