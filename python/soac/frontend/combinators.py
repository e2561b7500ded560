"""The SOACs on traced arrays: Python callables become their bodies.

A body is traced once, on symbolic rows; arrays it uses from outside are free
values of the op. Operators of ``reduce``, ``scan`` and ``reduce_by_index``
take the k accumulated values then the k new ones (as in the IR).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir

from .. import builders
from . import tracing
from .array import Array, coerce, index, lift
from .locations import TraceError, located


@located
def map(fn: Callable[..., Any], *xs: Any, mixed_mode: bool | None = None) -> Any:  # noqa: A001  (soac.map, as the op)
    """``soac.map``: ``fn`` applied to the rows of ``xs`` (which share their
    outer size); returns an array, or a tuple when ``fn`` returns a tuple.

    ``mixed_mode=True`` has reverse mode differentiate this map (its body must
    map scalars to scalars) by forward-mode partials inside one fused adjoint
    loop, with no reverse sweep of the body; ``False`` keeps pure reverse mode.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x, y: soac.map(lambda a, b: a * b + 1.0, x, y))(np.arange(3.0), np.ones(3))
    array([1., 2., 3.])
    """
    arrays = _inputs("map", xs)
    structure = []

    def body(*rows: ir.Value) -> list[ir.Value]:
        values, shape = tracing.flatten(fn(*[Array(r) for r in rows]))
        structure.append(shape)
        return [lift(v).value for v in values]

    results = builders.map([a.value for a in arrays], _arity_checked(fn, len(arrays), "map", body))
    if mixed_mode is not None:
        op = (results if isinstance(results, ir.Value) else results[0]).owner
        op.attributes["soac.mixed_mode"] = ir.BoolAttr.get(mixed_mode)
    return _outputs(results, structure[0])


@located
def reduce(op: Callable[..., Any], xs: Any, init: Any) -> Any:
    """``soac.reduce``: folds the rows of ``xs`` (an array or a tuple of k
    arrays) with the associative ``op``, whose neutral element is ``init``.

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.reduce(lambda a, b: a + b, x, 0.0))(np.arange(4.0))
    np.float64(6.0)
    """
    arrays, inits, structure = _operator_operands("reduce", xs, init)
    results = builders.reduce([a.value for a in arrays], inits, _operator(op, inits, "reduce"))
    return _outputs(results, structure)


@located
def scan(op: Callable[..., Any], xs: Any, init: Any) -> Any:
    """Inclusive ``soac.scan`` of ``xs`` with ``op`` and its neutral element
    ``init`` (as :func:`reduce`).

    >>> import numpy as np, soac
    >>> soac.jit(lambda x: soac.scan(lambda a, b: a + b, x, 0.0))(np.arange(4.0))
    array([0., 1., 3., 6.])
    """
    arrays, inits, structure = _operator_operands("scan", xs, init)
    results = builders.scan([a.value for a in arrays], inits, _operator(op, inits, "scan"))
    return _outputs(results, structure)


@located
def scatter(dest: Any, indices: Any, values: Any) -> Array:
    """``soac.scatter``: ``dest`` with row ``indices[i]`` replaced by row i of
    ``values``; out-of-range indices are ignored.

    >>> import numpy as np, soac
    >>> soac.jit(soac.scatter)(np.zeros(4), np.array([3, 0, 9]), np.array([1.0, 2.0, 3.0]))
    array([2., 0., 0., 1.])
    """
    dest, values = lift(dest), lift(values)
    indices = _indices(indices, values)
    if dest.ndim == 0 or values.ndim == 0:
        raise TraceError("scatter writes rows: dest and values must be tensors")
    tracing.join(builders.row_type(dest.value.type), builders.row_type(values.value.type), "the rows of dest and values")
    return Array(builders.scatter(dest.value, indices.value, values.value))


@located
def reduce_by_index(op: Callable[..., Any], dest: Any, indices: Any, values: Any, init: Any) -> Any:
    """``soac.reduce_by_index`` (a generalized histogram): row i of ``values``
    is combined into row ``indices[i]`` of ``dest`` with ``op`` and its neutral
    element ``init``; out-of-range indices are ignored. ``dest``, ``values``
    and ``init`` may be tuples of k.

    >>> import numpy as np, soac
    >>> histogram = soac.jit(lambda d, i, v: soac.reduce_by_index(lambda a, b: a + b, d, i, v, 0.0))
    >>> histogram(np.zeros(3), np.array([0, 2, 2, 7]), np.array([1.0, 2.0, 3.0, 4.0]))
    array([1., 0., 5.])
    """
    value_arrays, inits, structure = _operator_operands("reduce_by_index", values, init)
    dests, dest_structure = tracing.flatten(dest)
    dests = [lift(d) for d in dests]
    if len(dests) != len(value_arrays):
        raise TraceError(f"reduce_by_index has {len(dests)} destinations for {len(value_arrays)} value arrays")
    indices = _indices(indices, value_arrays[0])
    results = builders.reduce_by_index(
        [d.value for d in dests], indices.value, [v.value for v in value_arrays], inits, _operator(op, inits, "reduce_by_index")
    )
    return _outputs(results, structure)


@located
def iota(n: Any, dtype: Any = np.int64) -> Array:
    """``soac.iota``: ``0 .. n-1`` of an integer ``dtype``; a Python int gives
    a static size, a traced integer a dynamic one.

    >>> import numpy as np, soac
    >>> soac.jit(lambda n: soac.iota(n) * 2)(4)
    array([0, 2, 4, 6])
    """
    element = tracing.element_type(np.dtype(dtype))
    if np.dtype(dtype).kind != "i":
        raise TraceError(f"iota makes integers, not {np.dtype(dtype)}; convert with .astype")
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        return Array(builders.iota(int(n), element))
    return Array(builders.iota(index(n), element))


def _inputs(what: str, xs: Sequence[Any]) -> list[Array]:
    if not xs:
        raise TraceError(f"{what} needs at least one input array")
    arrays = [lift(x) for x in xs]
    for a in arrays:
        if a.ndim == 0:
            raise TraceError(f"{what} iterates over the rows of arrays; got a scalar {a!r}")
    sizes = {a.static_shape[0] for a in arrays if a.static_shape[0] is not None}
    if len(sizes) > 1:
        raise TraceError(f"{what} inputs have different outer sizes {sorted(sizes)}")
    return arrays


def _operator_operands(what: str, xs: Any, init: Any) -> tuple[list[Array], list[ir.Value], tracing.Structure]:
    """The input arrays and the neutral elements (numbers take the type of the rows)."""
    inputs, structure = tracing.flatten(xs)
    arrays = _inputs(what, inputs)
    inits, init_structure = tracing.flatten(init)
    if len(inits) != len(inputs):
        raise TraceError(f"{what} has {len(arrays)} inputs but {len(inits)} neutral elements")
    rows = [builders.row_type(a.value.type) for a in arrays]
    return arrays, coerce(inits, rows, f"the neutral element of {what}"), structure


def _operator(op: Callable[..., Any], inits: list[ir.Value], what: str) -> Callable[..., list[ir.Value]]:
    types = [v.type for v in inits]

    def body(*args: ir.Value) -> list[ir.Value]:
        values, _ = tracing.flatten(op(*[Array(a) for a in args]))
        return coerce(values, types, f"the operator of {what}")

    return _arity_checked(op, 2 * len(inits), what, body)


def _arity_checked(fn: Callable, count: int, what: str, body: Callable) -> Callable:
    """``body``, after checking that ``fn`` accepts ``count`` positional arguments."""
    try:
        inspect.signature(fn).bind(*range(count))
    except TypeError:
        raise TraceError(f"the function given to {what} must take {count} arguments") from None
    except ValueError:  # builtins without a signature: let the call decide
        pass
    return body


def _indices(indices: Any, values: Array) -> Array:
    indices = lift(indices)
    if indices.ndim != 1 or indices.dtype.kind != "i":
        raise TraceError(f"indices must be a 1-D integer array, got {indices!r}")
    if indices.static_shape[0] is not None and values.static_shape[0] is not None and indices.static_shape[0] != values.static_shape[0]:
        raise TraceError(f"{indices.static_shape[0]} indices for {values.static_shape[0]} rows")
    return indices


def _outputs(results: Any, structure: tracing.Structure) -> Any:
    values = results if isinstance(results, list) else [results]
    return tracing.rebuild([Array(v) for v in values], structure)
