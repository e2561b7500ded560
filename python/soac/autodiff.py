"""Reverse-mode derivatives of soac functions, compiled for the CPU.

``soac.vjp`` and ``soac.grad`` add a function around ``soac.vjp @f`` to a copy
of the module, expand it with the ``soac-autodiff`` pass (derivatives by
re-execution, no tape) and compile the result.

>>> import numpy as np, soac
>>> program = '''
...   func.func @sum_of_squares(%x: tensor<?xf64>) -> f64 {
...     %zero = arith.constant 0.0 : f64
...     %sq = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
...     ^bb0(%v: f64):
...       %s = arith.mulf %v, %v : f64
...       soac.yield %s : f64
...     }
...     %s = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
...     ^bb0(%acc: f64, %v: f64):
...       %t = arith.addf %acc, %v : f64
...       soac.yield %t : f64
...     }
...     return %s : f64
...   }'''
>>> soac.mlir.grad(program, "sum_of_squares")(np.array([1.0, 2.0, 3.0]))
array([2., 4., 6.])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlir import ir, passmanager
from mlir.dialects import arith, func

from . import builders
from .compiler import CpuOptions, as_module, compile
from .diagnostics import diagnostic_lines, verify
from .errors import Error, LoweringError
from .runtime.abi import CompiledFunction


@dataclass
class Derivative:
    """A compiled derivative and the IR it was compiled from.

    ``module`` holds the program after ``soac-autodiff`` (the generated
    ``@<f>__vjp_wrt_...`` functions included) and ``function`` names the entry
    point; ``soac.interpret(d.module, d.function, ...)`` runs the same IR on the
    reference interpreter.
    """

    module: ir.Module
    function: str
    compiled: CompiledFunction

    def __call__(self, *args: Any) -> Any:
        return self.compiled(*args)


def vjp(
    module: ir.Module | str,
    function: str,
    *,
    wrt: Sequence[int] | None = None,
    checkpoint_levels: int = 1,
    mixed_mode: bool = False,
    width: int = 1,
    options: CpuOptions = CpuOptions(),
) -> Derivative:
    """The vector-Jacobian product of ``@function``: a callable taking its
    arguments, then one cotangent per result, returning its results, then one
    gradient per argument in ``wrt`` (all arguments by default).

    Vector mode: with ``width=k`` each cotangent is a stack of k cotangents
    (shape ``(k, *result.shape)``) and each gradient comes back stacked the
    same way; the k products share the function's forward sweep.

    ``checkpoint_levels=k`` strip-mines loops into k levels: about k·N^(1/k)
    saved loop states instead of N, for more re-execution. ``mixed_mode``
    differentiates maps with scalar bodies by forward-mode partials inside the
    adjoint map (soac-autodiff's mixed-mode option)."""
    if width < 1:
        raise Error(f"width must be at least 1, got {width}")
    return _derive(module, function, wrt, options, checkpoint_levels, mixed_mode, scalar_seed=False, width=width)


def grad(
    module: ir.Module | str,
    function: str,
    *,
    wrt: Sequence[int] | None = None,
    checkpoint_levels: int = 1,
    mixed_mode: bool = False,
    options: CpuOptions = CpuOptions(),
) -> Derivative:
    """The gradient of ``@function``, which must return one float scalar: a
    callable taking its arguments and returning the gradient with respect to
    each argument in ``wrt`` (a tuple when there are several). See
    :func:`vjp` for ``checkpoint_levels`` and ``mixed_mode``."""
    return _derive(module, function, wrt, options, checkpoint_levels, mixed_mode, scalar_seed=True)


def _derive(
    module, function: str, wrt, options: CpuOptions, checkpoint_levels: int, mixed_mode: bool, *, scalar_seed: bool,
    width: int = 1,
) -> Derivative:
    results: list[ir.Type] = []

    def add_wrapper(copy: ir.Module, callee, name: str) -> None:
        results.extend(ir.FunctionType(callee.function_type.value).results)
        if scalar_seed and (len(results) != 1 or not isinstance(results[0], ir.FloatType)):
            raise Error(f"grad needs @{function} to return one float scalar; it returns ({', '.join(map(str, results))})")
        _add_wrapper(copy, callee, name, wrt, scalar_seed, width)

    derivative = derive(module, function, "grad" if scalar_seed else "vjp", add_wrapper, options, checkpoint_levels, mixed_mode)
    if width == 1:
        return derivative
    return StackedLanes(derivative.module, derivative.function, derivative.compiled, width, len(results))


def derive(
    module, function: str, suffix: str, add_wrapper, options: CpuOptions, checkpoint_levels: int = 1, mixed_mode: bool = False
) -> Derivative:
    """Compiles ``@<function>_<suffix>``, which ``add_wrapper(copy, callee,
    name)`` adds to a copy of the module around soac.vjp/soac.jvp ops of
    ``@function``, after expanding them with ``soac-autodiff``."""
    source = as_module(module)
    with source.context, ir.Location.unknown():
        copy = ir.Module.parse(source.operation.get_asm(enable_debug_info=True))
        callee = _find_function(copy, function)
        name = _fresh_name(copy, f"{function}_{suffix}")
        add_wrapper(copy, callee, name)
        verify(copy)  # e.g. wrt naming an integer argument
        try:
            autodiff = f"soac-autodiff{{checkpoint-levels={checkpoint_levels} mixed-mode={int(mixed_mode)}}}"
            pipeline = f"builtin.module({autodiff},canonicalize,cse)"
            passmanager.PassManager.parse(pipeline).run(copy.operation)
        except ir.MLIRError as error:
            raise LoweringError(f"soac-autodiff could not differentiate @{function}", diagnostic_lines(error)) from None
        return Derivative(copy, name, compile(copy, name, options=options))


def _find_function(module: ir.Module, name: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise Error(f"no function @{name} in the module")


def _fresh_name(module: ir.Module, base: str) -> str:
    taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations if "sym_name" in op.attributes}
    name, counter = base, 0
    while name in taken:
        counter += 1
        name = f"{base}_{counter}"
    return name


def _add_wrapper(module: ir.Module, callee, name: str, wrt, scalar_seed: bool, width: int = 1) -> None:
    """Appends ``@name`` calling ``soac.vjp @callee`` (with the seed 1.0 for
    grad; with ``width`` lanes of cotangents and gradients)."""
    signature = ir.FunctionType(callee.function_type.value)
    vjp_type = builders.derivative_type("vjp", callee, wrt=wrt, width=width)
    # grad: the arguments in (the seed is 1.0), the gradients out.
    inputs = list(signature.inputs) if scalar_seed else list(vjp_type.inputs)
    outputs = list(vjp_type.results)[len(signature.results) :] if scalar_seed else list(vjp_type.results)
    add_function(module, name, inputs, outputs, lambda args: emit_vjp(callee, args, wrt, scalar_seed, width))


def add_function(module: ir.Module, name: str, inputs, outputs, body) -> None:
    """Appends ``@name(inputs) -> outputs`` returning what ``body(arguments)``
    builds (a value or a list of values)."""
    with ir.InsertionPoint(module.body):
        function = func.FuncOp(name, (inputs, outputs))
        block = function.add_entry_block()
    with ir.InsertionPoint(block):
        values = body(list(block.arguments))
        func.ReturnOp(values if isinstance(values, list) else [values])


def emit_vjp(
    callee, args: Sequence[ir.Value], wrt: Sequence[int] | None, scalar_seed: bool, width: int = 1
) -> list[ir.Value]:
    """``soac.vjp @callee`` at the insertion point: with ``scalar_seed`` (grad),
    ``args`` are the callee's arguments, the cotangent is 1.0 and only the
    gradients are returned; otherwise ``args`` end with the cotangents and the
    results come before the gradients. Shared by modules and traced functions."""
    signature = ir.FunctionType(callee.function_type.value)
    args = list(args)
    if scalar_seed:
        args.append(arith.constant(signature.results[0], 1.0))
    values = builders.vjp(callee, args, wrt=wrt, width=width)
    values = values if isinstance(values, list) else [values]
    return values[len(signature.results) :] if scalar_seed else values


@dataclass
class StackedLanes(Derivative):
    """A vector-mode derivative called with stacked lanes: the compiled
    function takes the k lanes of each tangent or cotangent as separate
    arguments, after the primal arguments, and returns the results, then k
    lanes per derivative; this wrapper stacks and unstacks them."""

    width: int
    num_results: int

    def __call__(self, *args: Any) -> Any:
        signature = self.compiled.signature
        num_stacks = (len(signature.args) - len(args)) // (self.width - 1)
        primal, stacks = args[: len(args) - num_stacks], args[len(args) - num_stacks :]
        lanes = [_lane(stack, lane) for stack in stacks for lane in range(self.width)]
        outputs = self.compiled(*primal, *lanes)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        derivatives = outputs[self.num_results :]
        stacked = [np.stack(derivatives[k : k + self.width]) for k in range(0, len(derivatives), self.width)]
        return (*outputs[: self.num_results], *stacked)


def _lane(stack, lane: int):
    """Lane ``lane`` of a stack, as the argument's own type (a scalar for 0-d)."""
    value = np.asarray(stack)[lane]
    return value if value.shape else value[()]
