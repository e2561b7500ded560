"""Traced arrays: an ``ir.Value`` with a numpy-like face.

Python operators on an :class:`Array` emit arith/math ops, elementwise with
numpy broadcasting on tensors (built from ``soac.map``); indexing emits
``tensor.extract`` or, for a row of a rank>1 tensor, ``tensor.extract_slice``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from ..types import numpy_dtype
from . import elementwise, tracing
from .locations import TraceError, located


class Array:
    """A value of a traced function: a scalar or a tensor, with ``shape``
    (``None`` for a dynamic size), ``ndim`` and ``dtype``."""

    # numpy's own operators step aside, so `np.float64(2) * x` reaches __rmul__.
    __array_ufunc__ = None

    def __init__(self, value: ir.Value):
        self.value = value
        self.trace = tracing.current()

    @property
    def shape(self) -> tuple[int | None, ...]:
        if not isinstance(self.value.type, ir.RankedTensorType):
            return ()
        shape = ir.RankedTensorType(self.value.type).shape
        return tuple(None if ir.ShapedType.is_dynamic_size(d) else d for d in shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        type_ = self.value.type
        return numpy_dtype(ir.RankedTensorType(type_).element_type if self.ndim else type_)

    def __repr__(self) -> str:
        return f"soac traced {tracing.describe(self.value.type)}"

    def astype(self, dtype: Any) -> Array:
        return elementwise.astype(self, np.dtype(dtype))

    def __add__(self, other): return elementwise.binary("add", self, other)
    def __radd__(self, other): return elementwise.binary("add", other, self)
    def __sub__(self, other): return elementwise.binary("sub", self, other)
    def __rsub__(self, other): return elementwise.binary("sub", other, self)
    def __mul__(self, other): return elementwise.binary("mul", self, other)
    def __rmul__(self, other): return elementwise.binary("mul", other, self)
    def __truediv__(self, other): return elementwise.binary("div", self, other)
    def __rtruediv__(self, other): return elementwise.binary("div", other, self)
    def __pow__(self, other): return elementwise.power(self, other)
    def __rpow__(self, other): return elementwise.power(other, self)
    def __and__(self, other): return elementwise.binary("and", self, other)
    def __rand__(self, other): return elementwise.binary("and", other, self)
    def __or__(self, other): return elementwise.binary("or", self, other)
    def __ror__(self, other): return elementwise.binary("or", other, self)
    def __neg__(self): return elementwise.negative(self)
    def __pos__(self): return self
    def __invert__(self): return elementwise.logical_not(self)
    def __abs__(self): return numpy_layer.abs(self)
    def __lt__(self, other): return elementwise.compare("lt", self, other)
    def __le__(self, other): return elementwise.compare("le", self, other)
    def __gt__(self, other): return elementwise.compare("gt", self, other)
    def __ge__(self, other): return elementwise.compare("ge", self, other)
    def __eq__(self, other): return elementwise.compare("eq", self, other)  # type: ignore[override]
    def __ne__(self, other): return elementwise.compare("ne", self, other)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]  # == builds IR, so arrays are no dict keys

    def __matmul__(self, other):
        return numpy_layer.matmul(self, other)

    def __rmatmul__(self, other):
        return numpy_layer.matmul(other, self)

    def __bool__(self):
        raise TraceError(
            "a traced value has no Python truth value (it is known when the program runs); "
            "use soac.cond, soac.while_loop or soac.numpy.where"
        )

    def __len__(self) -> int:
        if not self.shape or self.shape[0] is None:
            raise TraceError(f"len() of {self!r}: the size is dynamic; use soac.numpy.size")
        return self.shape[0]

    def __iter__(self):
        raise TraceError(f"cannot iterate over {self!r} in Python; use soac.map or soac.fori_loop")

    @located
    def __getitem__(self, key: Any) -> Array:
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, (slice, type(None), type(Ellipsis))) for k in key):
            raise TraceError("traced arrays are indexed by integers only (no slices, None or ...)")
        if len(key) > self.ndim:
            raise TraceError(f"{len(key)} indices for {self!r}")
        positions = [self._position(axis, k) for axis, k in enumerate(key)]
        if len(key) == self.ndim:
            return Array(tensor.extract(self.value, positions))
        # Leading indices pick a sub-tensor: the row-slice form the derivative rules read sparsely.
        source = ir.RankedTensorType(self.value.type)
        dynamic = ir.ShapedType.get_dynamic_size()
        rest = list(source.shape[len(key):])
        sizes = [tracing.dim(self, axis) for axis in range(len(key), self.ndim) if ir.ShapedType.is_dynamic_size(source.shape[axis])]
        result = ir.RankedTensorType.get(rest, source.element_type)
        op = tensor.ExtractSliceOp(
            result, self.value, positions, sizes, [],
            [dynamic] * len(key) + [0] * len(rest), [1] * len(key) + rest, [1] * self.ndim,
        )
        return Array(op.result)

    def _position(self, axis: int, key: Any) -> ir.Value:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and key < 0:
            return arith.subi(tracing.dim(self, axis), arith.constant(ir.IndexType.get(), -int(key)))
        return tracing.index(key)

    def sum(self, axis: int | None = None) -> Array:
        return numpy_layer.sum(self, axis)

    def max(self, axis: int | None = None) -> Array:
        return numpy_layer.max(self, axis)

    def mean(self, axis: int | None = None) -> Array:
        return numpy_layer.mean(self, axis)


# The numpy layer builds on Array; imported last to close the cycle.
from . import numpy as numpy_layer  # noqa: E402
