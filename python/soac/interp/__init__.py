"""A plain numpy interpreter of soac IR: the oracle every lowering and every
derivative is tested against. Written for clarity, not speed.

>>> import numpy as np, soac
>>> from mlir import ir
>>> with ir.Context():
...     module = soac.parse('''
...       func.func @sum_squares(%x: tensor<?xf64>) -> f64 {
...         %zero = arith.constant 0.0 : f64
...         %sq = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
...         ^bb0(%v: f64):
...           %s = arith.mulf %v, %v : f64
...           soac.yield %s : f64
...         }
...         %s = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
...         ^bb0(%acc: f64, %v: f64):
...           %t = arith.addf %acc, %v : f64
...           soac.yield %t : f64
...         }
...         return %s : f64
...       }''')
...     print(soac.interpret(module, "sum_squares", np.array([1.0, 2.0, 3.0])))
14.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir

from ..errors import InterpretError
from . import arith_math, scf, soac_ops, tensor  # noqa: F401  (register their handlers)
from .core import Interpreter, dtype_of, element_dtype

__all__ = ["interpret"]


def interpret(module: ir.Module, function: str, *args: Any) -> Any:
    """Runs ``@function`` of ``module`` on numpy arrays and scalars.

    Array arguments must have the dtype of the function's argument types and
    fit their static sizes; Python and numpy scalars are converted to the
    argument's type. Returns the single result, or a tuple of results (numpy
    arrays for tensors, numpy scalars otherwise).

    Raises :class:`soac.InterpretError` for unsupported ops, arguments that do
    not fit the signature, and undefined behaviour at run time.
    """
    interpreter = Interpreter(module)
    if function not in interpreter.functions:
        raise InterpretError(f"no function @{function} in the module; it has {sorted(interpreter.functions)}")
    signature = ir.FunctionType(ir.TypeAttr(interpreter.functions[function].attributes["function_type"]).value)
    if len(args) != len(signature.inputs):
        raise InterpretError(f"@{function} takes {len(signature.inputs)} arguments, got {len(args)}")
    values = [_argument(function, i, arg, type_) for i, (arg, type_) in enumerate(zip(args, signature.inputs))]
    with np.errstate(all="ignore"):  # integer wrap-around and IEEE specials are defined behaviour
        results = interpreter.call(function, values)
    return results[0] if len(results) == 1 else tuple(results)


def _argument(function: str, position: int, value: Any, type_: ir.Type) -> Any:
    where = f"argument #{position} of @{function}"
    if not isinstance(type_, ir.RankedTensorType):
        if np.ndim(value) != 0:
            raise InterpretError(f"{where} is a scalar of type {type_}, got an array of shape {np.shape(value)}")
        return dtype_of(type_).type(value)
    array = np.asarray(value)
    expected = element_dtype(type_)
    if array.dtype != expected:
        raise InterpretError(f"{where} has type {type_}, so dtype {expected}; got {array.dtype}")
    if array.ndim != type_.rank:
        raise InterpretError(f"{where} has type {type_}, so rank {type_.rank}; got shape {array.shape}")
    for dim, (size, static) in enumerate(zip(array.shape, type_.shape)):
        if static != ir.ShapedType.get_dynamic_size() and size != static:
            raise InterpretError(f"{where} has type {type_}; got size {size} in dim {dim}")
    return array
