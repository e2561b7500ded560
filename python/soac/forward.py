"""Forward-mode derivatives, and those built on both modes: Hessian-vector
products (forward over reverse) and Jacobians.

``soac.jvp`` wraps ``soac.jvp @f`` in a function of a copy of the module,
expands it with the ``soac-autodiff`` pass (dual numbers: every op computes
its primal and its tangent, SOAC operators on pairs) and compiles it.

>>> import numpy as np, soac
>>> program = '''
...   func.func @norm2(%x: tensor<?xf64>) -> f64 {
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
>>> x, t = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 1.0])
>>> value, tangent = soac.mlir.jvp(program, "norm2")(x, t)  # f(x), ∇f(x)·t
>>> float(value), float(tangent)
(14.0, 8.0)
>>> soac.mlir.hvp(program, "norm2")(x, t)  # H·t with H = 2I
array([2., 0., 2.])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from . import builders
from .autodiff import Derivative, StackedLanes, _add_wrapper, _find_function, _fresh_name, add_function, derive, vjp
from .compiler import CpuOptions, compile
from .errors import Error


def jvp(
    module: ir.Module | str,
    function: str,
    *,
    wrt: Sequence[int] | None = None,
    width: int = 1,
    options: CpuOptions = CpuOptions(),
) -> Derivative:
    """The Jacobian-vector product of ``@function``: a callable taking its
    arguments, then one tangent per argument in ``wrt`` (all arguments by
    default), returning its results, then the tangent of each result.

    Vector mode: with ``width=k`` each tangent is a stack of k tangents (shape
    ``(k, *argument.shape)``) and each result's tangents come back stacked the
    same way: k directional derivatives from one pass over the primal."""
    if width < 1:
        raise Error(f"width must be at least 1, got {width}")

    def add_wrapper(copy: ir.Module, callee, name: str) -> None:
        jvp_type = builders.derivative_type("jvp", callee, wrt=wrt, width=width)
        add_function(copy, name, list(jvp_type.inputs), list(jvp_type.results), lambda args: builders.jvp(callee, args, wrt=wrt, width=width))

    derivative = derive(module, function, "jvp", add_wrapper, options)
    if width == 1:
        return derivative
    num_results = len(derivative.compiled.signature.results) // (1 + width)
    return StackedLanes(derivative.module, derivative.function, derivative.compiled, width, num_results)


def hvp(
    module: ir.Module | str,
    function: str,
    *,
    wrt: Sequence[int] | None = None,
    checkpoint_levels: int = 1,
    options: CpuOptions = CpuOptions(),
) -> Derivative:
    """The Hessian-vector product of ``@function``, which must return one
    float scalar: a callable taking its arguments, then one vector per
    argument in ``wrt``, returning H·v for each (a tuple when there are
    several). Forward over reverse: the jvp of the function computing the
    gradient with soac.vjp."""

    def add_wrapper(copy: ir.Module, callee, name: str) -> None:
        signature = ir.FunctionType(callee.function_type.value)
        results = list(signature.results)
        if len(results) != 1 or not isinstance(results[0], ir.FloatType):
            raise Error(f"hvp needs @{function} to return one float scalar; it returns ({', '.join(map(str, results))})")
        positions = _positions(signature, wrt)
        gradient_name = _fresh_name(copy, f"{name}_gradient")
        _add_wrapper(copy, callee, gradient_name, wrt, scalar_seed=True)
        gradient = _find_function(copy, gradient_name)
        # The jvp of the gradient: its arguments and one vector per
        # differentiated argument in, the gradients and H·v out.
        product = builders.derivative_type("jvp", gradient, wrt=positions)

        def body(args):
            values = builders.jvp(gradient, args, wrt=positions)
            return (values if isinstance(values, list) else [values])[len(positions) :]

        add_function(copy, name, list(product.inputs), list(product.results)[len(positions) :], body)

    return derive(module, function, "hvp", add_wrapper, options, checkpoint_levels)


def jacfwd(
    module: ir.Module | str, function: str, *, wrt: int = 0, width: int = 8, options: CpuOptions = CpuOptions()
) -> Jacobian:
    """The Jacobian of ``@function``'s one result with respect to argument
    ``wrt``, by columns: vector-mode jvps of ``width`` columns each (one pass
    over the primal per ``width`` elements of the argument)."""
    return Jacobian(compile(module, function, options=options), jvp(module, function, wrt=[wrt], width=width, options=options), wrt, width, forward=True)


def jacrev(
    module: ir.Module | str, function: str, *, wrt: int = 0, width: int = 8, options: CpuOptions = CpuOptions()
) -> Jacobian:
    """The Jacobian of ``@function``'s one result with respect to argument
    ``wrt``, by rows: vector-mode vjps of ``width`` rows each (the rows of a
    call share the function's forward sweep)."""
    return Jacobian(compile(module, function, options=options), vjp(module, function, wrt=[wrt], width=width, options=options), wrt, width, forward=False)


@dataclass
class Jacobian:
    """A compiled Jacobian: called on the function's arguments, returns the
    Jacobian of its one result with respect to argument ``wrt``, of shape
    ``result.shape + argument.shape``, from the jvp (``forward``: ``width``
    columns per call) or the vjp (``width`` rows per call) in ``derivative``."""

    primal: Any
    derivative: Derivative
    wrt: int
    width: int
    forward: bool

    def __call__(self, *args: Any) -> np.ndarray:
        result = self.primal(*args)
        if isinstance(result, tuple):
            raise Error(f"a Jacobian needs a function with one result; @{self.derivative.function} has {len(result)}")
        y, x = np.asarray(result), np.asarray(args[self.wrt])
        jacobian = np.zeros(y.shape + x.shape, dtype=np.result_type(y, x))
        # Columns (forward) or rows (reverse) of the Jacobian, `width` per call.
        seeds_like, place = (x, lambda index: (Ellipsis, *index)) if self.forward else (y, lambda index: index)
        indices = list(np.ndindex(*seeds_like.shape))
        for start in range(0, len(indices), self.width):
            chunk = indices[start : start + self.width]
            # the last chunk is padded with zero seeds
            units = [_unit(seeds_like, index) for index in chunk] + [np.zeros_like(seeds_like)] * (self.width - len(chunk))
            lanes = self.derivative(*args, np.stack(units) if self.width > 1 else units[0])[1]
            lanes = lanes if self.width > 1 else [lanes]
            for index, lane in zip(chunk, lanes):
                jacobian[place(index)] = lane
        return jacobian


def _unit(like: np.ndarray, index: tuple[int, ...]):
    """The basis vector of ``like``'s shape and dtype with a 1 at ``index``."""
    unit = np.zeros_like(like)
    unit[index] = 1
    return unit if unit.shape else unit[()]


def _positions(signature: ir.FunctionType, wrt: Sequence[int] | None) -> list[int]:
    return list(range(len(signature.inputs))) if wrt is None else list(wrt)
