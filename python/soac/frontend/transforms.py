"""Derivatives of traced Python functions, and of modules (``soac.grad``,
``soac.vjp``, ``soac.value_and_grad``, ``soac.jvp``, ``soac.hvp``).

Given MLIR (a module or its text and a function name) they are
:mod:`soac.autodiff`'s (:mod:`soac.forward`'s for jvp and hvp). Given a Python function they return a jitted
function whose trace holds the function's own ``func.func`` and a
``soac.vjp`` of it (built by the same :func:`soac.autodiff.emit_vjp`): inside
another trace that is nested IR (``grad(grad(f))``, ``jit(grad(f))``), outside
one it is compiled by the CPU pipeline, whose ``soac-autodiff`` expands it.
``soac.jvp`` emits ``soac.jvp`` the same way (forward mode), and
``soac.hvp`` is the jvp of the gradient.

>>> import numpy as np, soac
>>> soac.grad(lambda x: soac.numpy.sum(x * x))(np.array([1.0, 2.0, 3.0]))
array([2., 4., 6.])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir

from .. import autodiff, builders, forward
from ..compiler import CpuOptions
from ..errors import Error
from . import tracing
from .array import Array, coerce, lift
from .jit import Function, trace_function
from .locations import TraceError

Differentiable = Callable[..., Any] | ir.Module | str


def grad(fun: Differentiable, function: str | None = None, *, wrt: Sequence[int] | None = None,
         checkpoint_levels: int = 1, mixed_mode: bool = False, options: CpuOptions = CpuOptions()) -> Any:
    """The gradient of a function returning one float scalar, with respect to
    the arguments in ``wrt`` (every float argument by default); a tuple when
    there are several. For MLIR, see :func:`soac.autodiff.grad`."""
    if _is_mlir(fun):
        return autodiff.grad(fun, function, wrt=wrt, checkpoint_levels=checkpoint_levels, mixed_mode=mixed_mode, options=options)
    _traced_only(function, checkpoint_levels, mixed_mode)

    def gradient(*args: Any) -> Any:
        arrays, callee, positions = _differentiate(fun, args, wrt, scalar=True)
        gradients = autodiff.emit_vjp(callee, [a.value for a in arrays], positions, scalar_seed=True)
        return _structured([Array(g) for g in gradients])

    return _jitted(gradient, "grad", fun, options)


def value_and_grad(fun: Callable[..., Any], *, wrt: Sequence[int] | None = None, options: CpuOptions = CpuOptions()) -> Any:
    """As :func:`grad`, returning ``(value, gradient)``.

    >>> import numpy as np, soac
    >>> soac.value_and_grad(lambda x, y: x * y)(np.float64(3.0), np.float64(4.0))
    (np.float64(12.0), (np.float64(4.0), np.float64(3.0)))
    """

    def value_and_gradient(*args: Any) -> Any:
        arrays, callee, positions = _differentiate(fun, args, wrt, scalar=True)
        seed = lift(1.0, like=_results(callee)[0])
        value, *gradients = autodiff.emit_vjp(callee, [a.value for a in arrays] + [seed.value], positions, scalar_seed=False)
        return Array(value), _structured([Array(g) for g in gradients])

    return _jitted(value_and_gradient, "value_and_grad", fun, options)


def vjp(fun: Differentiable, function: str | None = None, *, wrt: Sequence[int] | None = None,
        checkpoint_levels: int = 1, mixed_mode: bool = False, width: int = 1, options: CpuOptions = CpuOptions()) -> Any:
    """The vector-Jacobian product: a function taking the arguments, then one
    cotangent per result, and returning the results, then one gradient per
    argument in ``wrt`` (every float argument by default). For MLIR, see
    :func:`soac.autodiff.vjp`.

    >>> import numpy as np, soac
    >>> soac.vjp(lambda x: soac.math.sin(x))(np.array([0.0, np.pi]), np.array([1.0, 2.0]))
    (array([0.0000000e+00, 1.2246468e-16]), array([ 1., -2.]))
    """
    if _is_mlir(fun):
        return autodiff.vjp(fun, function, wrt=wrt, checkpoint_levels=checkpoint_levels, mixed_mode=mixed_mode, width=width,
                            options=options)
    _traced_only(function, checkpoint_levels, mixed_mode)
    if width != 1:
        raise Error("vector mode (width) is available for MLIR functions; call vjp once per cotangent here")
    count = _positional_count(fun)

    def vector_jacobian_product(*args: Any) -> Any:
        if len(args) <= count:
            raise TraceError(f"vjp of {_name(fun)} takes its {count} arguments, then one cotangent per result")
        arrays, callee, positions = _differentiate(fun, args[:count], wrt, scalar=False)
        results = _results(callee)
        cotangents = coerce(list(args[count:]), results, f"the cotangents of {_name(fun)}")
        values = autodiff.emit_vjp(callee, [a.value for a in arrays] + cotangents, positions, scalar_seed=False)
        return tuple(Array(v) for v in values)

    return _jitted(vector_jacobian_product, "vjp", fun, options)


def jvp(fun: Differentiable, function: str | None = None, *, wrt: Sequence[int] | None = None, width: int = 1,
        options: CpuOptions = CpuOptions()) -> Any:
    """The Jacobian-vector product (forward mode): a function taking the
    arguments, then one tangent per argument in ``wrt`` (every float argument
    by default), and returning the results, then one tangent per result. For
    MLIR, and vector mode (``width``), see :func:`soac.forward.jvp`.

    >>> import numpy as np, soac
    >>> soac.frontend.jvp(lambda x: x * x)(np.array([1.0, 3.0]), np.array([1.0, 0.5]))
    (array([1., 9.]), array([2., 3.]))
    """
    if _is_mlir(fun):
        return forward.jvp(fun, function, wrt=wrt, width=width, options=options)
    _traced_only(function, 1)
    if width != 1:
        raise Error("vector mode (width) is available for MLIR functions; call jvp once per tangent here")
    count = _positional_count(fun)

    def jacobian_vector_product(*args: Any) -> Any:
        arrays, callee, positions = _differentiate(fun, args[:count], wrt, scalar=False)
        if len(args) != count + len(positions):
            raise TraceError(f"jvp of {_name(fun)} takes its {count} arguments, then {len(positions)} tangents")
        types = [arrays[i].value.type for i in positions]
        tangents = coerce(list(args[count:]), types, f"the tangents of {_name(fun)}")
        values = builders.jvp(callee, [a.value for a in arrays] + tangents, wrt=positions)
        return tuple(Array(v) for v in (values if isinstance(values, list) else [values]))

    return _jitted(jacobian_vector_product, "jvp", fun, options)


def hvp(fun: Differentiable, function: str | None = None, *, wrt: Sequence[int] | None = None,
        checkpoint_levels: int = 1, options: CpuOptions = CpuOptions()) -> Any:
    """The Hessian-vector product of a function returning one float scalar
    (forward over reverse): a function taking the arguments, then one tangent
    per argument in ``wrt``, returning one product per argument in ``wrt``.
    For MLIR, see :func:`soac.forward.hvp`.

    >>> import numpy as np, soac
    >>> soac.frontend.hvp(lambda x: soac.numpy.sum(x * x * x))(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    array([ 6., 12.])
    """
    if _is_mlir(fun):
        return forward.hvp(fun, function, wrt=wrt, checkpoint_levels=checkpoint_levels, options=options)
    _traced_only(function, checkpoint_levels)
    count = _positional_count(fun)

    def hessian_vector_product(*args: Any) -> Any:
        positions = _differentiate(fun, args[:count], wrt, scalar=True)[2]
        gradient = grad(fun, wrt=positions)
        gradient.__signature__ = inspect.signature(fun)  # jvp tells arguments from tangents by it
        products = jvp(gradient, wrt=positions)(*args)[len(positions):]
        return _structured(list(products))

    return _jitted(hessian_vector_product, "hvp", fun, options)


def _differentiate(fun: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int] | None, *, scalar: bool):
    """Traces ``fun`` on ``args`` into a private function of the current
    module; returns the arguments as arrays, the function and the wrt positions."""
    arrays = [lift(a) for a in args]
    module = tracing.current().module
    callee, _ = trace_function(fun, [a.value.type for a in arrays], module, private=True)
    results = _results(callee)
    if scalar and (len(results) != 1 or not isinstance(results[0], ir.FloatType)):
        returned = ", ".join(tracing.describe(r) for r in results)
        raise TraceError(f"grad needs {_name(fun)} to return one float scalar; it returns ({returned})")
    positions = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if wrt is None else list(wrt)
    for i in positions:
        if not 0 <= i < len(arrays) or arrays[i].dtype.kind != "f":
            raise TraceError(f"wrt position {i} of {_name(fun)} is not a float argument")
    return arrays, callee, positions


def _jitted(body: Callable[..., Any], kind: str, fun: Callable[..., Any], options: CpuOptions) -> Function:
    body.__name__ = f"{kind}_{_name(fun)}"
    body.__qualname__ = body.__name__
    return Function(body, options)


def _results(callee) -> list[ir.Type]:
    return list(ir.FunctionType(callee.function_type.value).results)


def _structured(gradients: list[Array]) -> Any:
    return gradients[0] if len(gradients) == 1 else tuple(gradients)


def _is_mlir(fun: Any) -> bool:
    return isinstance(fun, (ir.Module, str))


def _traced_only(function: str | None, checkpoint_levels: int, mixed_mode: bool = False) -> None:
    if function is not None:
        raise Error("a function name is for MLIR modules; a Python function is differentiated itself")
    if checkpoint_levels != 1:
        raise Error("for a Python function, give checkpoint_levels to soac.fori_loop / soac.while_loop")
    if mixed_mode:
        raise Error("for a Python function, give mixed_mode to soac.map")


def _positional_count(fun: Callable[..., Any]) -> int:
    parameters = inspect.signature(fun).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        raise Error(f"vjp of {_name(fun)} needs a fixed number of arguments, to tell them from the cotangents")
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)


def _name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)
