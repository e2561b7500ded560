"""Derivatives of traced Python functions, with JAX's conventions: ``grad``,
``value_and_grad``, ``vjp``, ``jvp``, ``hvp``, ``jacfwd``, ``jacrev`` and
``hessian``, with ``argnums`` (0 by default) and ``has_aux``, on pytrees of
arrays (a dict of parameters gets a dict of gradients).

Each traces the function into a private ``func.func`` of the current module
and emits a ``soac.vjp`` (reverse mode, by :func:`soac.autodiff.emit_vjp`)
or ``soac.jvp`` (forward mode) of it: inside another trace that is nested
IR (``grad(grad(f))``, ``jvp(grad(f))``, ``grad`` inside ``soac.map``),
outside one it is compiled by the CPU pipeline, whose ``soac-autodiff``
expands it. The transforms that return functions return jitted ones;
``vjp`` and ``jvp``, which JAX evaluates at once, run compiled code when
called outside a trace.

These take Python functions only: the derivatives of a function written
in MLIR (a module or its text, and a function name) are :mod:`soac.mlir`'s.

>>> import numpy as np, soac
>>> soac.grad(lambda x: soac.numpy.sum(x * x))(np.array([1.0, 2.0, 3.0]))
array([2., 4., 6.])
>>> params = {"w": np.array([1.0, 2.0]), "b": np.float64(0.5)}
>>> soac.grad(lambda p, x: soac.numpy.sum(p["w"] * x) + p["b"])(params, np.array([3.0, 4.0]))
{'b': np.float64(1.0), 'w': array([3., 4.])}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir

from .. import autodiff, builders
from ..compiler import CpuOptions
from . import combinators, tracing
from .array import Array, coerce, lift
from .jit import Function, trace_function
from .locations import TraceError
from .pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._numpy.manipulation import reshape, transpose

Argnums = int | Sequence[int]


def grad(fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *,
         options: CpuOptions = CpuOptions()) -> Function:
    """``grad(fun, argnums=0, has_aux=False)``: the gradient of ``fun`` (which
    returns one float scalar, or ``(scalar, aux)`` with ``has_aux``) with
    respect to argument ``argnums`` (a tuple of gradients for a tuple of
    argnums), each shaped as its argument (a pytree of float arrays). With
    ``has_aux``, returns ``(gradient, aux)``."""
    _check_callable(fun, "grad")

    def gradient(*args: Any) -> Any:
        traced = _trace(fun, args, argnums, has_aux=has_aux, scalar=True)
        gradients = autodiff.emit_vjp(traced.loss, traced.operands, traced.positions, scalar_seed=True)
        result = traced.gradient_tree([Array(g) for g in gradients])
        return (result, traced.aux()) if has_aux else result

    return _jitted(gradient, "grad", fun, options)


def value_and_grad(fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *,
                   options: CpuOptions = CpuOptions()) -> Function:
    """As :func:`grad`, returning ``(value, gradient)``, or ``((value, aux), gradient)`` with ``has_aux``.

    >>> import numpy as np, soac
    >>> soac.value_and_grad(lambda x, y: x * y, argnums=(0, 1))(np.float64(3.0), np.float64(4.0))
    (np.float64(12.0), (np.float64(4.0), np.float64(3.0)))
    """
    _check_callable(fun, "value_and_grad")

    def value_and_gradient(*args: Any) -> Any:
        traced = _trace(fun, args, argnums, has_aux=has_aux, scalar=True)
        seed = lift(1.0, like=_results(traced.loss)[0])
        value, *gradients = autodiff.emit_vjp(
            traced.loss, traced.operands + [seed.value], traced.positions, scalar_seed=False
        )
        result = traced.gradient_tree([Array(g) for g in gradients])
        return ((Array(value), traced.aux()) if has_aux else Array(value)), result

    return _jitted(value_and_gradient, "value_and_grad", fun, options)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``vjp(fun, *primals)`` as in JAX: ``(fun(*primals), vjp_fn)``, where
    ``vjp_fn(cotangent)`` (a cotangent shaped as the output) returns a tuple
    with one gradient per primal (``None`` for an integer one). With
    ``has_aux``, ``(out, vjp_fn, aux)``.

    >>> import numpy as np, soac
    >>> y, pullback = soac.vjp(soac.math.sin, np.array([0.0, np.pi / 2]))
    >>> pullback(np.array([1.0, 2.0]))
    (array([1.0000000e+00, 1.2246468e-16]),)
    """
    _check_callable(fun, "vjp")
    positions_all = tuple(range(len(primals)))

    def primal_out(*args: Any) -> Any:
        out = fun(*args)
        return out if not has_aux else tuple(out)

    def pullback_in_trace(args: tuple, cotangent: Any) -> Any:
        traced = _trace(fun, args, positions_all, has_aux=has_aux, scalar=False)
        cotangents, tree = tree_flatten(cotangent)
        if tree.num_leaves != len(_results(traced.loss)):
            raise TraceError(f"the cotangent of {_name(fun)} has {tree.num_leaves} leaves for {len(_results(traced.loss))} results")
        cotangents = coerce(cotangents, _results(traced.loss), f"the cotangent of {_name(fun)}")
        values = autodiff.emit_vjp(traced.loss, traced.operands + cotangents, traced.positions, scalar_seed=False)
        return traced.gradient_tree([Array(v) for v in values[len(cotangents):]])

    if tracing.active():
        out = primal_out(*primals)
        pullback = lambda cotangent: pullback_in_trace(primals, cotangent)  # noqa: E731
    else:
        out = Function(primal_out)(*primals)
        compiled = _jitted(lambda args, cotangent: pullback_in_trace(args, cotangent), "vjp", fun, CpuOptions())
        pullback = lambda cotangent: compiled(primals, cotangent)  # noqa: E731
    if has_aux:
        return out[0], pullback, out[1]
    return out, pullback


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> Any:
    """``jvp(fun, primals, tangents)`` as in JAX (forward mode): ``primals``
    and ``tangents`` are tuples with one entry per argument, and the result
    is ``(fun(*primals), tangent of the output)``. Integer arguments take no
    tangent part (give anything, e.g. 0).

    >>> import numpy as np, soac
    >>> soac.jvp(lambda x: x * x, (np.array([1.0, 3.0]),), (np.array([1.0, 0.5]),))
    (array([1., 9.]), array([2., 3.]))
    """
    _check_callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(fun, primals, tangents): primals and tangents are tuples, one entry per argument")
    if len(primals) != len(tangents):
        raise TraceError(f"jvp of {_name(fun)}: {len(primals)} primals but {len(tangents)} tangents")

    def push_forward(primals: tuple, tangents: tuple) -> Any:
        traced = _trace(fun, primals, tuple(range(len(primals))), has_aux=has_aux, scalar=False)
        leaves, tree = tree_flatten(tangents)
        if tree.num_leaves != len(traced.arrays):
            raise TraceError(f"the tangents of {_name(fun)} have {tree.num_leaves} leaves for {len(traced.arrays)} argument leaves")
        tangent_values = coerce([leaves[i] for i in traced.positions], [traced.arrays[i].value.type for i in traced.positions],
                                f"the tangents of {_name(fun)}")
        values = builders.jvp(traced.loss, traced.operands + tangent_values, wrt=traced.positions)
        values = values if isinstance(values, list) else [values]
        count = len(values) // 2
        out = tracing.rebuild([Array(v) for v in values[:count]], traced.out_tree)
        tangent = tracing.rebuild([Array(v) for v in values[count:]], traced.out_tree)
        return (out, tangent, traced.aux()) if has_aux else (out, tangent)

    if tracing.active():
        return push_forward(tuple(primals), tuple(tangents))
    return _jitted(push_forward, "jvp", fun, CpuOptions())(tuple(primals), tuple(tangents))


def hvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """``hvp(fun, primals, tangents)``: the Hessian of ``fun`` (one float scalar
    out) at ``primals`` times ``tangents``, forward over reverse as JAX's
    cookbook defines it (``jvp(grad(fun, argnums=all), primals, tangents)[1]``):
    a tuple with one product per argument.

    >>> import numpy as np, soac
    >>> soac.hvp(lambda x: soac.numpy.sum(x * x * x), (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    (array([ 6., 12.]),)
    """
    _check_callable(fun, "hvp")
    argnums = tuple(range(len(primals)))
    return jvp(grad(fun, argnums), tuple(primals), tuple(tangents))[1]


def jacrev(fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *,
           options: CpuOptions = CpuOptions()) -> Function:
    """The Jacobian of ``fun`` with respect to argument ``argnums``, by rows:
    one vjp per output element, all inside one ``soac.map`` over the
    output's elements. Each block's shape is the output's, then the
    argument's; as in JAX, a tuple of ``argnums`` gives a tuple of
    Jacobians, and pytree arguments and outputs give blocks in their
    structure (the output's outside, the argument's inside).

    >>> import numpy as np, soac
    >>> soac.jacrev(lambda x: x[1:] * x[:-1])(np.array([1.0, 2.0, 3.0]))
    array([[2., 1., 0.],
           [0., 3., 2.]])
    """
    _check_callable(fun, "jacrev")
    return _jacobian(fun, argnums, has_aux, options, reverse=True)


def jacfwd(fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *,
           options: CpuOptions = CpuOptions()) -> Function:
    """The Jacobian of ``fun`` with respect to argument ``argnums``, by
    columns: one jvp per element of the argument, inside one ``soac.map``.
    Shapes and structure as :func:`jacrev`'s."""
    _check_callable(fun, "jacfwd")
    return _jacobian(fun, argnums, has_aux, options, reverse=False)


def hessian(fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *,
            options: CpuOptions = CpuOptions()) -> Function:
    """The Hessian of ``fun`` (one float scalar out): ``jacfwd(jacrev(fun))``,
    as in JAX (nested tuples for a tuple of ``argnums``, nested pytrees for
    pytree arguments).

    >>> import numpy as np, soac
    >>> soac.hessian(lambda x: soac.numpy.sum(x * x * x))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    _check_callable(fun, "hessian")
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux, options=options)


def _jacobian(fun: Callable[..., Any], argnums: Argnums, has_aux: bool, options: CpuOptions, *, reverse: bool) -> Function:
    def jacobian(*args: Any) -> Any:
        value = fun(*args)
        out, aux = (value[0], value[1]) if has_aux else (value, None)
        out_leaves, out_tree = tree_flatten(out)

        def block(o: int, position: int, leaves: list[Any], structure: PyTreeDef, i: int) -> Array:
            """d out_leaves[o] / d leaves[i], ``leaves`` (in ``structure``) those of argument ``position``."""
            x = lift(leaves[i])
            if x.dtype.kind != "f":
                raise TraceError(f"the Jacobian needs float arguments; argument {position} holds {x!r}")
            y = lift(out_leaves[o])

            def output(v: Array) -> Array:
                tree = tree_unflatten(structure, [v if j == i else leaf for j, leaf in enumerate(leaves)])
                return lift(tree_flatten(_first(fun(*_replace(args, position, tree)), has_aux))[0][o])

            if reverse:
                def row(k: Array) -> Array:
                    seed = reshape((combinators.iota(y.size) == k).astype(y.dtype), y.shape)
                    return vjp(output, x)[1](seed)[0]

                flat = combinators.map(row, combinators.iota(y.size))
            else:
                def column(k: Array) -> Array:
                    basis = reshape((combinators.iota(x.size) == k).astype(x.dtype), x.shape)
                    return jvp(output, (x,), (basis,))[1]

                columns = combinators.map(column, combinators.iota(x.size))  # (x.size, *y.shape)
                flat = transpose(reshape(columns, (x.size, y.size)))
            return reshape(flat, (*y.shape, *x.shape))

        def for_output(o: int) -> Any:
            per_argument = []
            for position in _as_tuple(argnums):
                leaves, tree = tree_flatten(args[position])
                per_argument.append(tree_unflatten(tree, [block(o, position, leaves, tree, i) for i in range(len(leaves))]))
            return per_argument[0] if isinstance(argnums, int) else tuple(per_argument)

        result = tree_unflatten(out_tree, [for_output(o) for o in range(len(out_leaves))])
        return (result, aux) if has_aux else result

    return _jitted(jacobian, "jacrev" if reverse else "jacfwd", fun, options)


def _first(value: Any, has_aux: bool) -> Any:
    return value[0] if has_aux else value


def _replace(args: tuple, position: int, value: Any) -> tuple:
    return tuple(value if i == position else a for i, a in enumerate(args))


@dataclass
class _Traced:
    """A function traced for differentiation: its argument leaves as arrays,
    the private function computing the differentiated output (``loss``), the
    positions of the leaves differentiated, and how to rebuild gradients."""

    fun: Callable[..., Any]
    args: tuple
    arrays: list[Array]
    captured: list[ir.Value]  # values of the current trace the function uses, passed after its arguments
    loss: Any
    out_tree: PyTreeDef
    positions: list[int]
    argnums: Argnums
    arg_trees: list[PyTreeDef]
    offsets: list[int]

    @property
    def operands(self) -> list[ir.Value]:
        """The arguments of ``loss``: the leaves, then the captured values."""
        return [a.value for a in self.arrays] + self.captured

    def gradient_tree(self, gradients: list[Array]) -> Any:
        """The gradients (one per differentiated leaf) in the structure of the arguments in ``argnums``."""
        by_leaf = dict(zip(self.positions, gradients))
        trees = []
        for number in _as_tuple(self.argnums):
            start = self.offsets[number]
            leaves = [by_leaf.get(start + k) for k in range(self.arg_trees[number].num_leaves)]
            trees.append(tree_unflatten(self.arg_trees[number], leaves))
        return trees[0] if isinstance(self.argnums, int) else tuple(trees)

    def aux(self) -> Any:
        """The auxiliary output, computed in the current trace."""
        return self.fun(*self.args)[1]


def _trace(fun: Callable[..., Any], args: tuple, argnums: Argnums, *, has_aux: bool, scalar: bool) -> _Traced:
    """Traces ``fun`` on the leaves of ``args`` into a private function of the
    current module (returning its output, or with ``has_aux`` only its first
    part) and finds the leaves of the arguments in ``argnums``."""
    if not tracing.active():
        raise TraceError("derivatives are traced inside a traced function")
    numbers = _as_tuple(argnums)
    for number in numbers:
        if not -len(args) <= number < len(args):
            raise TraceError(f"argnums {number} is out of range for {_name(fun)}, called with {len(args)} arguments")
    numbers = tuple(n % len(args) for n in numbers)
    argnums = numbers[0] if isinstance(argnums, int) else numbers
    leaves, tree = tree_flatten(tuple(args))
    arrays = [lift(leaf) for leaf in leaves]
    arg_trees = list(tree.children)
    offsets = [0]
    for child in arg_trees:
        offsets.append(offsets[-1] + child.num_leaves)

    def flat(*leaf_arrays: Array) -> Any:
        out = fun(*tracing.rebuild(leaf_arrays, tree))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TraceError(f"{_name(fun)} has has_aux=True, so it must return a pair (output, aux)")
            return out[0]
        return out

    loss, out_tree, captured = trace_function(flat, [a.value.type for a in arrays], tracing.current().module, private=True,
                                              source=fun, capturing=True)
    results = _results(loss)
    if scalar and (len(results) != 1 or not isinstance(results[0], ir.FloatType)):
        returned = ", ".join(tracing.describe(r) for r in results)
        raise TraceError(f"grad needs {_name(fun)} to return one float scalar; it returns ({returned})")
    positions = []
    for number in numbers:
        for leaf in range(offsets[number], offsets[number + 1]):
            if arrays[leaf].dtype.kind == "f":
                positions.append(leaf)
            elif scalar:
                raise TraceError(f"grad of {_name(fun)}: argument {number} holds {arrays[leaf]!r}; "
                                 "only float arguments are differentiated (pass integers at other argnums)")
    return _Traced(fun, tuple(args), arrays, captured, loss, out_tree, positions, argnums, arg_trees, offsets)


def _as_tuple(argnums: Argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _jitted(body: Callable[..., Any], kind: str, fun: Callable[..., Any], options: CpuOptions) -> Function:
    body.__name__ = f"{kind}_{_name(fun)}"
    body.__qualname__ = body.__name__
    return Function(body, options)


def _results(callee) -> list[ir.Type]:
    return list(ir.FunctionType(callee.function_type.value).results)


def _check_callable(fun: Any, transform: str) -> None:
    """Refuses what is not a Python function, pointing MLIR to :mod:`soac.mlir`."""
    if isinstance(fun, (ir.Module, str)):
        raise TypeError(f"soac.{transform} takes a Python function; for a function in an MLIR module, "
                        f"use soac.mlir.{transform}(module, function_name, ...)")
    if not callable(fun):
        raise TypeError(f"soac.{transform} takes a Python function, got {type(fun).__name__}")


def _name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)
