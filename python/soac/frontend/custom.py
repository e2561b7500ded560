"""Functions with derivatives given by the user (``soac.custom_vjp``,
``soac.custom_jvp``), in the spirit of JAX's: for numerically delicate code
(a stable logsumexp) or code with no derivative rule.

Each decorated function is traced into its own ``func.func`` naming the
traced derivative functions in ``soac.custom_vjp`` / ``soac.custom_jvp``
attributes, and called; ``soac-autodiff`` then calls them instead of
differentiating the body. By re-execution, the vjp gets the arguments and
the cotangents and returns the value and one gradient per float argument;
the jvp gets the arguments and one tangent per float argument and returns
the value and its tangent.

>>> import numpy as np, soac
>>> @soac.custom_vjp
... def softplus(x):
...     return soac.math.log1p(soac.math.exp(x))
>>> @softplus.defvjp
... def softplus_vjp(x, cotangent):  # σ(x), computed without overflow
...     return softplus(x), cotangent / (1.0 + soac.math.exp(-x))
>>> float(soac.grad(softplus)(np.float64(800.0)))  # exp(800) overflows
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlir import ir
from mlir.dialects import func

from . import tracing
from .array import Array, lift
from .jit import Function, trace_function
from .locations import user_location


class CustomDerivatives:
    """A function and the derivatives given for it (see the module doc)."""

    def __init__(self, fun: Callable[..., Any]):
        self.fun = fun
        self.vjp: Callable[..., Any] | None = None
        self.jvp: Callable[..., Any] | None = None
        self.__name__ = getattr(fun, "__name__", "custom")
        self.__doc__ = getattr(fun, "__doc__", None)
        self._compiled = Function(self)
        self._tracing_derivatives = False

    def defvjp(self, vjp: Callable[..., Any]) -> Callable[..., Any]:
        """Sets ``vjp(*args, *cotangents) -> (value, gradients...)``."""
        self.vjp = vjp
        return vjp

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Sets ``jvp(*args, *tangents) -> (value, tangent)``."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any) -> Any:
        if not tracing.active():
            return self._compiled(*args)
        arrays = [lift(a) for a in args]
        types = [a.value.type for a in arrays]
        module = tracing.current().module
        callee, structure, _ = trace_function(self.fun, types, module, private=True)
        # A derivative that calls the function itself (for its value) gets
        # the plain function: the derivatives are not its own.
        if not self._tracing_derivatives:
            results = list(ir.FunctionType(callee.function_type.value).results)
            float_types = [t for a, t in zip(arrays, types) if a.dtype.kind == "f"]
            self._tracing_derivatives = True
            try:
                if self.vjp is not None:
                    self._attach(callee, "soac.custom_vjp", self.vjp, types + results, module)
                if self.jvp is not None:
                    self._attach(callee, "soac.custom_jvp", self.jvp, types + float_types, module)
            finally:
                self._tracing_derivatives = False
        call = func.CallOp(callee, [a.value for a in arrays], loc=user_location())
        return tracing.rebuild([Array(r) for r in call.results], structure)

    @staticmethod
    def _attach(callee, attribute: str, derivative: Callable[..., Any], types: list[ir.Type], module: ir.Module) -> None:
        function, _, _ = trace_function(derivative, types, module, private=True)
        callee.attributes[attribute] = ir.FlatSymbolRefAttr.get(function.name.value)


def custom_vjp(fun: Callable[..., Any]) -> CustomDerivatives:
    """``fun`` with a vjp to be given by ``.defvjp`` (and a jvp by ``.defjvp``)."""
    return CustomDerivatives(fun)


def custom_jvp(fun: Callable[..., Any]) -> CustomDerivatives:
    """``fun`` with a jvp to be given by ``.defjvp`` (and a vjp by ``.defvjp``)."""
    return CustomDerivatives(fun)
