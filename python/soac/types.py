"""How MLIR types map to numpy dtypes, for the interpreter and the runtime."""

from __future__ import annotations

import numpy as np
from mlir import ir

_INTEGERS = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def numpy_dtype(type_: ir.Type) -> np.dtype | None:
    """The numpy dtype of a scalar MLIR type (``index`` is int64), or None."""
    if isinstance(type_, ir.IndexType):
        return np.dtype(np.int64)
    if isinstance(type_, ir.IntegerType) and type_.is_signless and type_.width in _INTEGERS:
        return np.dtype(_INTEGERS[type_.width])
    if str(type_) in _FLOATS:
        return np.dtype(_FLOATS[str(type_)])
    return None
