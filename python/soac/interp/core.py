"""The interpreter's machinery: values, types, regions, function calls.

Values are numpy arrays (tensors) and numpy scalars (everything else), in the
dtype of their MLIR type, so float32 programs compute in float32. Each op kind
has a handler registered with :func:`handles`; a handler receives the
interpreter, the op and its operand values and returns its result values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir

from ..errors import InterpretError
from ..types import numpy_dtype

Handler = Callable[["Interpreter", ir.OpView, list[Any]], Sequence[Any]]
_HANDLERS: dict[str, Handler] = {}

# Ops that end a block; their operands are the block's results.
TERMINATORS = {"func.return", "soac.yield", "scf.yield", "scf.condition", "tensor.yield"}


def handles(*op_names: str) -> Callable[[Handler], Handler]:
    """Registers the decorated function as the handler of ``op_names``."""

    def register(handler: Handler) -> Handler:
        for name in op_names:
            _HANDLERS[name] = handler
        return handler

    return register


def fail(op: ir.OpView, message: str) -> InterpretError:
    """An InterpretError located at ``op``: raise the result."""
    return InterpretError(f"{location(op)}: '{op.operation.name}': {message}")


def location(op: ir.OpView) -> str:
    """``op``'s source location as ``file:line:col`` (the location's text otherwise)."""
    where = op.location
    if where.is_a_file():
        return f"{where.filename}:{where.start_line}:{where.start_col}"
    return str(where)


def dtype_of(type_: ir.Type) -> np.dtype:
    """numpy dtype of a scalar MLIR type (index is int64)."""
    dtype = numpy_dtype(type_)
    if dtype is None:
        raise InterpretError(f"the interpreter has no numpy type for {type_}")
    return dtype


def element_dtype(type_: ir.Type) -> np.dtype:
    """dtype of a tensor's elements, or of a scalar type."""
    if isinstance(type_, ir.RankedTensorType):
        return dtype_of(type_.element_type)
    return dtype_of(type_)


def scalar(value: Any, type_: ir.Type) -> np.generic:
    """``value`` as a numpy scalar of MLIR type ``type_``."""
    return dtype_of(type_).type(value)


class Interpreter:
    """Runs the functions of one module; see :func:`soac.interpret`."""

    def __init__(self, module: ir.Module):
        self.functions = {
            ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations
            if op.operation.name == "func.func"
        }
        # What each SSA value of the running function holds. Nested regions
        # share their function's environment (they see values from above); a
        # call gets a fresh one, so recursion is safe.
        self.env: dict[ir.Value, Any] = {}

    def call(self, name: str, args: Sequence[Any], caller: ir.OpView | None = None) -> list[Any]:
        function = self.functions.get(name)
        if function is None:
            raise InterpretError(f"no function @{name} in the module") if caller is None else fail(
                caller, f"no function @{name} in the module"
            )
        if len(function.regions[0].blocks) == 0:
            raise InterpretError(f"@{name} is a declaration without a body")
        caller_env, self.env = self.env, {}
        try:
            return self.run_region(function.regions[0], args)
        finally:
            self.env = caller_env

    def run_region(self, region: ir.Region, args: Sequence[Any]) -> list[Any]:
        """Runs the single block of ``region`` with ``args`` bound to its
        arguments; returns the operands of its terminator."""
        env = self.env
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise InterpretError("the interpreter runs regions of exactly one block")
        block = blocks[0]
        for argument, value in zip(block.arguments, args, strict=True):
            env[argument] = value
        for op in block.operations:
            operands = [env[v] for v in op.operands]
            name = op.operation.name
            if name in TERMINATORS:
                return operands
            handler = _HANDLERS.get(name)
            if handler is None:
                raise fail(op, "the reference interpreter does not support this op")
            results = handler(self, op, operands)
            for result, value in zip(op.results, results, strict=True):
                env[result] = value
        raise InterpretError("block without terminator")


def call_function(interpreter: Interpreter, op: ir.OpView, operands: list[Any]) -> list[Any]:
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    return interpreter.call(callee, operands, caller=op)


_HANDLERS["func.call"] = call_function
