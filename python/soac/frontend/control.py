"""Sequential control flow on traced values: ``scf.for``, ``scf.while`` and
``scf.if``. Loop-carried values and branch results are an array or a tuple of
arrays (Python numbers become constants)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf

from . import tracing
from .array import Array, coerce, index, lift
from .locations import TraceError, located


@located
def fori_loop(lower: Any, upper: Any, body: Callable[[Array, Any], Any], init: Any, *, checkpoint_levels: int | None = None) -> Any:
    """``body(i, carry)`` for ``i`` in ``lower .. upper-1`` (an ``scf.for``),
    starting from ``init``; returns the last carry. The reverse sweep keeps one
    checkpoint per iteration, or about k·N^(1/k) with ``checkpoint_levels=k``.

    >>> import numpy as np, soac
    >>> power = soac.jit(lambda x, n: soac.fori_loop(0, n, lambda i, acc: acc * x, 1.0))
    >>> power(np.float64(2.0), 10)
    np.float64(1024.0)
    """
    carry, structure = _carry(init)
    types = [c.value.type for c in carry]
    loop = scf.ForOp(index(lower), index(upper), arith.constant(ir.IndexType.get(), 1), [c.value for c in carry])
    _set_checkpoint_levels(loop, checkpoint_levels)
    with ir.InsertionPoint(loop.body):
        i = Array(arith.index_cast(ir.IntegerType.get_signless(64), loop.induction_variable))
        state = tracing.rebuild([Array(v) for v in loop.inner_iter_args], structure)
        values, _ = tracing.flatten(body(i, state))
        scf.YieldOp(coerce(values, types, "the body of fori_loop"))
    return tracing.rebuild([Array(r) for r in loop.results], structure)


@located
def while_loop(cond: Callable[[Any], Any], body: Callable[[Any], Any], init: Any, *, checkpoint_levels: int | None = None) -> Any:
    """``carry = body(carry)`` while ``cond(carry)`` (an ``scf.while``),
    starting from ``init``; returns the last carry.

    >>> import numpy as np, soac
    >>> halve = soac.jit(lambda x: soac.while_loop(lambda v: v > 1.0, lambda v: v / 2.0, x))
    >>> halve(np.float64(20.0))
    np.float64(0.625)
    """
    carry, structure = _carry(init)
    types = [c.value.type for c in carry]
    loop = scf.WhileOp(types, [c.value for c in carry])
    _set_checkpoint_levels(loop, checkpoint_levels)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        test = lift(cond(tracing.rebuild([Array(v) for v in before.arguments], structure)))
        if test.ndim != 0 or test.dtype != np.bool_:
            raise TraceError(f"the condition of while_loop must return a bool scalar, got {test!r}")
        scf.ConditionOp(test.value, list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        values, _ = tracing.flatten(body(tracing.rebuild([Array(v) for v in after.arguments], structure)))
        scf.YieldOp(coerce(values, types, "the body of while_loop"))
    return tracing.rebuild([Array(r) for r in loop.results], structure)


@located
def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], *operands: Any) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (an
    ``scf.if``); both branches must return the same dtypes and ranks.

    >>> import numpy as np, soac
    >>> relu = soac.jit(lambda x: soac.cond(x > 0.0, lambda v: v, lambda v: 0.0 * v, x))
    >>> relu(np.float64(-3.0)), relu(np.float64(2.0))
    (np.float64(-0.0), np.float64(2.0))
    """
    if isinstance(pred, (bool, np.bool_)):  # known while tracing: no branch in the IR
        return (true_fn if pred else false_fn)(*operands)
    pred = lift(pred)
    if pred.ndim != 0 or pred.dtype != np.bool_:
        raise TraceError(f"the predicate of cond must be a bool scalar, got {pred!r}")
    # The result types are known once both branches are traced: trace them into
    # a placeholder, join their types, then move the blocks into the real op.
    placeholder = scf.IfOp(pred.value, [], has_else=True)
    branches = []
    for fn, region in ((true_fn, placeholder.then_block), (false_fn, placeholder.else_block)):
        with ir.InsertionPoint(region):
            values, structure = tracing.flatten(fn(*operands))
            branches.append(([lift(v).value for v in values], structure, region))
    (true_values, structure, _), (false_values, false_structure, _) = branches
    if len(true_values) != len(false_values):
        raise TraceError("the branches of cond return different numbers of values")
    types = [tracing.join(t.type, f.type, "the branches of cond return") for t, f in zip(true_values, false_values)]
    result = ir.Operation.create("scf.if", results=types, operands=[pred.value], regions=2)
    for (values, _, block), region in zip(branches, result.regions):
        with ir.InsertionPoint(block):
            scf.YieldOp(coerce([Array(v) for v in values], types, "a branch of cond"))
        block.append_to(region)
    placeholder.operation.erase()
    return tracing.rebuild([Array(r) for r in result.results], structure)


def _carry(init: Any) -> tuple[list[Array], tracing.Structure]:
    values, structure = tracing.flatten(init)
    return [lift(v) for v in values], structure


def _set_checkpoint_levels(loop: ir.OpView, levels: int | None) -> None:
    if levels is not None:
        loop.operation.attributes["soac.checkpoint_levels"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), levels)
