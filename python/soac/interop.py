"""soac functions inside PyTorch and JAX programs: a traced function and its
vjp (compiled by soac, on the CPU) as a ``torch.autograd.Function``, or as a
``jax.custom_vjp`` function that runs under ``jax.jit`` through
``jax.pure_callback``.

Both take a Python function that soac can trace (array arguments, one array
or a tuple of arrays out). Arrays cross without a copy where DLPack allows
(PyTorch CPU tensors); JAX's callback hands numpy arrays over. Neither peer
is imported until its adapter is called.

>>> import numpy as np, soac, soac.numpy as snp
>>> import torch  # doctest: +SKIP
>>> f = soac.interop.to_torch(lambda x, w: snp.tanh(x @ w))  # doctest: +SKIP
>>> x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)  # doctest: +SKIP
>>> torch.autograd.gradcheck(f, (x, torch.randn(3, dtype=torch.float64, requires_grad=True)))  # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .frontend.jit import Function
from .frontend.transforms import vjp
from .runtime.abi import as_array

__all__ = ["to_jax", "to_torch"]


def _pullback(fun: Callable[..., Any], args: list[np.ndarray], cotangents: Any) -> tuple[np.ndarray, ...]:
    """The gradients of ``fun`` at ``args`` for ``cotangents`` (zeros for integer arguments)."""
    _, pullback = vjp(fun, *args)
    gradients = pullback(cotangents)
    return tuple(np.zeros(np.shape(a)) if g is None else np.asarray(g) for a, g in zip(args, gradients))


def to_torch(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` as a function of torch tensors that ``torch.autograd``
    differentiates by soac's vjp (``torch.autograd.gradcheck`` passes on it).
    Tensors go to the CPU for the call; results come back as tensors on the
    device and of the dtype soac computed."""
    import torch

    primal = Function(fun)

    def to_numpy(tensor: Any) -> np.ndarray:
        return as_array(tensor.detach().cpu()) if isinstance(tensor, torch.Tensor) else np.asarray(tensor)

    class SoacFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *tensors: Any) -> Any:
            ctx.save_for_backward(*[t for t in tensors if isinstance(t, torch.Tensor)])
            ctx.arguments = tensors
            out = primal(*[to_numpy(t) for t in tensors])
            device = next((t.device for t in tensors if isinstance(t, torch.Tensor)), None)
            if isinstance(out, tuple):
                return tuple(torch.from_numpy(np.asarray(o)).to(device) for o in out)
            return torch.from_numpy(np.asarray(out)).to(device)

        @staticmethod
        def backward(ctx, *cotangents: Any) -> Any:
            args = [to_numpy(t) for t in ctx.arguments]
            cts = tuple(to_numpy(c) for c in cotangents)
            gradients = _pullback(fun, args, cts if len(cts) > 1 else cts[0])
            return tuple(
                torch.from_numpy(g).to(t.device) if isinstance(t, torch.Tensor) and t.dtype.is_floating_point else None
                for g, t in zip(gradients, ctx.arguments)
            )

    def apply(*tensors: Any) -> Any:
        return SoacFunction.apply(*tensors)

    apply.__name__ = f"torch_{getattr(fun, '__name__', 'function')}"
    return apply


def to_jax(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` as a JAX function with a custom vjp (soac's), usable under
    ``jax.jit`` and ``jax.grad``: the primal and the vjp run as
    ``jax.pure_callback``s of soac's compiled code. The shapes and dtypes of
    the result are found by calling ``fun`` once on zeros of the arguments'
    shapes (per new set of shapes)."""
    import jax

    primal = Function(fun)
    shapes: dict[tuple, Any] = {}

    def result_shape(args: tuple) -> Any:
        key = tuple((tuple(a.shape), np.dtype(a.dtype).str) for a in args)
        if key not in shapes:
            out = primal(*[np.zeros(a.shape, a.dtype) for a in args])
            shapes[key] = jax.tree_util.tree_map(lambda o: jax.ShapeDtypeStruct(np.shape(o), np.asarray(o).dtype), out)
        return shapes[key]

    @jax.custom_vjp
    def call(*args: Any) -> Any:
        return jax.pure_callback(lambda *a: primal(*[np.asarray(x) for x in a]), result_shape(args), *args)

    def forward(*args: Any) -> Any:
        return call(*args), args

    def backward(args: tuple, cotangent: Any) -> tuple:
        gradient_shapes = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args)

        def pullback(*values: Any) -> tuple:
            arrays, cts = [np.asarray(v) for v in values[: len(args)]], values[len(args):]
            cts = tuple(np.asarray(c) for c in cts)
            gradients = _pullback(fun, arrays, cts if len(cts) > 1 else cts[0])
            return tuple(g.astype(a.dtype) for g, a in zip(gradients, arrays))

        leaves = jax.tree_util.tree_leaves(cotangent)
        return jax.pure_callback(pullback, gradient_shapes, *args, *leaves)

    call.defvjp(forward, backward)
    return call
