"""``soac.jit``: trace a Python function into soac IR, compile it, cache it.

A function is traced once per signature: the dtype and rank of each argument
and its small inner sizes (the others are dynamic), so one compiled function
serves all sizes but those.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import func

from .. import compiler, gradient_cost
from ..autodiff import _fresh_name as fresh_name
from ..diagnostics import verify
from ..errors import Error
from ..runtime.abi import CompiledFunction
from . import tracing
from .array import Array, lift
from .locations import ConcretizationError, TraceError, user_location, without_soac_frames
from .tracing import ArgSpec

_log = logging.getLogger("soac")


def trace_function(fn: Callable, arg_types: Sequence[ir.Type], module: ir.Module, *, private: bool = False,
                   source: Callable | None = None, capturing: bool = False):
    """Traces ``fn`` into a new ``func.func`` of ``module`` taking ``arg_types``.

    ``private`` functions (callees of a soac.vjp) are not entry points.
    ``source`` (``fn`` by default) gives the function's name and location.
    With ``capturing``, values of the enclosing traces that ``fn`` uses
    become extra arguments after ``arg_types`` (see :class:`tracing.Trace`).
    Returns the function, how to rebuild ``fn``'s output from its results
    (see :func:`tracing.flatten`), and the enclosing trace's values to pass
    for the extra arguments.
    """
    source = source or fn
    code = getattr(source, "__code__", None)
    location = ir.Location.file(code.co_filename, code.co_firstlineno, 1) if code else user_location()
    # Helpers go first: soac-autodiff expands a soac.vjp of a function that
    # itself holds a soac.vjp only when the callee comes first in the module.
    where = ir.InsertionPoint.at_block_begin(module.body) if private else ir.InsertionPoint(module.body)
    with location, where:
        name = fresh_name(module, _symbol_name(getattr(source, "__name__", "")))
        function = func.FuncOp(name, (list(arg_types), []))
        if private:
            function.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = function.add_entry_block()
    with tracing.into(module, function, capturing=capturing) as trace, location, ir.InsertionPoint(block):
        values, structure = tracing.flatten(fn(*[Array(v) for v in block.arguments]))
        if not values:
            raise TraceError(f"traced function {function.name.value} returns nothing")
        results = [lift(v).value for v in values]
        func.ReturnOp(results)
    inputs = [argument.type for argument in block.arguments]  # the captured values' too
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [r.type for r in results]))
    return function, structure, [outer for outer, _ in trace.captures]


def _symbol_name(name: str) -> str:
    """A function name usable as a symbol of compiled code: ``<lambda>`` becomes
    ``lambda``, and a name the C library already defines (``exp``, ``free``)
    gets a suffix, since compiled code calling libm's ``exp`` would call the
    function itself instead."""
    name = re.sub(r"\W", "", name) or "traced"
    return f"{name}_traced" if hasattr(_PROCESS_SYMBOLS, name) else name


# The symbols of the process (libc, libm, ...): names a compiled function must not take.
_PROCESS_SYMBOLS = ctypes.CDLL(None)


@dataclass
class Traced:
    """One trace of a function: the module, the name of its entry point and
    the structure of its output; compiled on first call."""

    module: ir.Module
    name: str
    structure: tracing.Structure
    options: compiler.CpuOptions
    _compiled: CompiledFunction | None = field(default=None, repr=False)

    def mlir(self, *, debug_info: bool = False) -> str:
        """The traced IR (with Python source locations when ``debug_info``)."""
        return self.module.operation.get_asm(enable_debug_info=debug_info)

    def lower(self, target: str = "cpu") -> str:
        """The IR lowered for ``target``: the ``soac-lower-to-cpu`` pipeline
        with this function's options, or ``soac-lower-to-nvvm`` (``"gpu"``)."""
        if target not in compiler.TARGETS:
            raise Error(f"unknown target {target!r}; available: {', '.join(compiler.TARGETS)}")
        options = self.options if target == "cpu" else compiler.GpuOptions()
        return str(compiler.lower(self.module, options=options, only=self.name))

    def __call__(self, *args: Any) -> Any:
        if self._compiled is None:
            self._compiled = compiler.compile(self.module, self.name, options=self.options)
        results = self._compiled(*args)
        return tracing.rebuild(results if isinstance(results, tuple) else (results,), self.structure)


class Function:
    """A jitted function: called on numpy arrays and numbers, it traces (once
    per signature), compiles and runs; called inside another trace, it is
    inlined there. Its traces keep their compiled code as long as the
    function lives, or until :func:`soac.clear_caches`.

    The signature is the dtype and rank of each argument, its inner sizes (all
    but the first) of at most ``static_inner_sizes_up_to``, all its sizes with
    ``static_shapes``, and the values of the arguments in ``static_argnums``,
    which reach the function as the Python values they are (not traced) and
    are not passed to the compiled code.

    A function that uses a size as a Python value (``range(x.shape[0])``,
    ``len(x)``, ``if x.shape[0] > 1:``) cannot be traced for every size: it
    is traced again, and from then on, for its arguments' shapes, as if
    jitted with ``static_shapes=True`` (as JAX always does).
    """

    def __init__(self, fn: Callable[..., Any], options: compiler.CpuOptions = compiler.CpuOptions(), *,
                 static_argnums: int | Sequence[int] = (), static_shapes: bool = False,
                 static_inner_sizes_up_to: int = tracing.SMALL_INNER_SIZE):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.options = options
        self.static_argnums = frozenset((static_argnums,) if isinstance(static_argnums, int) else static_argnums)
        self._static_positions = sorted(self.static_argnums)
        self.static_shapes = static_shapes  # also set once a size was needed as a Python value
        if isinstance(static_inner_sizes_up_to, bool) or not isinstance(static_inner_sizes_up_to, int) \
                or static_inner_sizes_up_to < 0:
            raise Error(f"static_inner_sizes_up_to must be an int of 0 or more, got {static_inner_sizes_up_to!r}")
        self.static_inner_sizes_up_to = static_inner_sizes_up_to
        self._traces: dict[tuple, Traced] = {}
        self._by_arguments: dict[tuple, Traced] = {}  # see _arguments_key
        self._last: Traced | None = None
        self._context: ir.Context | None = None
        _functions.add(self)

    def __call__(self, *args: Any) -> Any:
        if tracing.active():
            return self.fn(*args)
        try:
            leaves, tree = tracing.flatten(self._dynamic(args))
            return self._trace_for(args, leaves, tree)(*leaves)
        except Error as error:  # a mistake of the user's: show the user's frames only
            raise without_soac_frames(error) from None

    def trace(self, *args: Any) -> Traced:
        """The trace for the signature of ``args`` (pytrees of arrays, numbers
        or :class:`ArgSpec`), traced and verified the first time."""
        return self._trace_for(args, *tracing.flatten(self._dynamic(args)))

    def _trace_for(self, args: tuple, leaves: list[Any], tree: tracing.Structure) -> Traced:
        """``trace(*args)``, given the leaves and structure of ``args``' dynamic arguments."""
        arguments_key = self._arguments_key(args, leaves, tree)
        traced = self._by_arguments.get(arguments_key) if arguments_key is not None else None
        if traced is None:
            traced = self._trace_for_signature(args, leaves, tree)
            if arguments_key is not None:
                if len(self._by_arguments) >= _MAX_ARGUMENT_KEYS:
                    self._by_arguments.clear()
                self._by_arguments[arguments_key] = traced
        self._last = traced
        return traced

    def _arguments_key(self, args: tuple, leaves: list[Any], tree: tracing.Structure) -> tuple | None:
        """A key of ``args`` that is cheap to make and determines their
        signature: each array's dtype and shape, each number's type, the
        static arguments' values. None for anything else (the signature
        itself is then the key). Making the signature took a call on small
        arrays (ADBench's HAND) 30 µs of its 300."""
        key: list[Any] = [tree]
        for leaf in leaves:
            kind = type(leaf)
            if kind is np.ndarray:
                key.append((leaf.dtype, leaf.shape))
            elif kind is float or kind is bool or (kind is int and _INT64_MIN <= leaf <= _INT64_MAX):
                key.append(kind)
            else:
                return None
        try:
            arguments_key = (*key, *[args[i] for i in self._static_positions])
            hash(arguments_key)
        except (IndexError, TypeError):  # _static raises the errors users see
            return None
        return arguments_key

    def _trace_for_signature(self, args: tuple, leaves: list[Any], tree: tracing.Structure) -> Traced:
        static = self._static(args)
        dynamic = [ArgSpec.of(a, self.static_shapes, self.static_inner_sizes_up_to) for a in leaves]
        key = (tuple(dynamic), tree, tuple(static.items()))
        if key not in self._traces:
            try:
                self._traces[key] = self._trace(args, static, tree, dynamic)
            except ConcretizationError as error:
                if self.static_shapes:
                    raise
                _log.info("%s uses a size as a Python value (%s); tracing it for its arguments' shapes",
                          self.__name__, str(error).split(": ")[0])
                self.static_shapes = True
                self._by_arguments.clear()
                return self._trace_for_signature(args, leaves, tree)
        return self._traces[key]

    def _trace(self, args: tuple, static: dict[int, Any], tree: Any, dynamic: list[ArgSpec]) -> Traced:
        self._context = self._context or ir.Context()

        def with_static_arguments(*arrays: Array) -> Any:
            traced = iter(tracing.rebuild(arrays, tree))
            return self.fn(*[static[i] if i in static else next(traced) for i in range(len(args))])

        with self._context, ir.Location.unknown():
            module = ir.Module.create()
            function, structure, _ = trace_function(
                with_static_arguments, [spec.ir_type() for spec in dynamic], module, source=self.fn
            )
            verify(module)
        return Traced(module, function.name.value, structure, self.options)

    def _static(self, args: tuple) -> dict[int, Any]:
        for position in self.static_argnums:
            if position >= len(args):
                raise TraceError(f"static_argnums names argument {position}, but {self.__name__} got {len(args)} arguments")
        static = {i: args[i] for i in sorted(self.static_argnums)}
        for i, value in static.items():
            try:
                hash(value)
            except TypeError:
                raise TraceError(f"static argument {i} of {self.__name__} must be hashable (it keys the compiled code), "
                                 f"got a {type(value).__name__}") from None
        return static

    def _dynamic(self, args: tuple) -> tuple[Any, ...]:
        return tuple(a for i, a in enumerate(args) if i not in self.static_argnums)

    def mlir(self, *args: Any, debug_info: bool = False) -> str:
        """The IR traced for ``args``' signature (the last one traced when no argument is given)."""
        return self._latest(args).mlir(debug_info=debug_info)

    def lower(self, target: str = "cpu", *, args: tuple = ()) -> str:
        """The lowered IR for ``args``' signature (the last one traced by default)."""
        return self._latest(args).lower(target)

    def gradient_cost(self, *args: Any) -> list:
        """The work and memory of every gradient in the trace for ``args``'
        signature against its primal's, and what grows faster than the
        primal (:class:`soac.mlir.GradientCost`), e.g.
        ``soac.grad(f).gradient_cost(x)``."""
        return gradient_cost.report(self._latest(args).module)

    def _latest(self, args: tuple) -> Traced:
        if args:
            return self.trace(*args)
        if self._last is None:
            raise Error(f"{self.__name__} has not been traced yet: call it, or pass example arguments")
        return self._last


# The most argument keys a jitted function remembers (Function._arguments_key):
# one per set of argument shapes, which may be unbounded.
_MAX_ARGUMENT_KEYS = 256
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# Every live jitted function, for forget_compiled_code.
_functions: weakref.WeakSet[Function] = weakref.WeakSet()


def forget_compiled_code() -> None:
    """Drops the compiled code of every live jitted function's traces: the
    next call compiles again (the traces stay)."""
    for function in list(_functions):
        for traced in function._traces.values():
            traced._compiled = None


def jit(fn: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (), static_shapes: bool = False,
        static_inner_sizes_up_to: int = tracing.SMALL_INNER_SIZE,
        options: compiler.CpuOptions = compiler.CpuOptions()) -> Any:
    """Traces ``fn`` into soac IR and compiles it for the CPU (usable as
    ``@soac.jit`` or ``@soac.jit(options=...)``).

    Sizes are dynamic by default, so one compiled function serves arrays of
    any size (``x.shape`` holds traced values), except the inner sizes (all
    but an array's first) of at most ``static_inner_sizes_up_to`` (16): the 3
    of an (n, 3) array of points, the 4s of 4 × 4 transforms, the 10 of
    (n, 10) samples. Those are compiled into the code, which is traced again
    for another such size: LLVM then knows the trip counts of the short loops
    over them, and small-matrix code runs faster
    (``static_inner_sizes_up_to=0`` makes every size dynamic).
    ``static_shapes=True`` traces and compiles once per set of argument
    shapes instead, as JAX does: sizes are Python ints (``len(x)`` works)
    and the compiled code may be faster for them. ``static_argnums`` (as in ``jax.jit``) names the
    arguments passed as Python values (ints, floats, strings, tuples: any
    hashable value), compiled once per value.

    >>> import numpy as np, soac
    >>> @soac.jit
    ... def saxpy(a, x, y):
    ...     return a * x + y
    >>> saxpy(2.0, np.arange(3.0), np.ones(3))
    array([1., 3., 5.])
    >>> print(saxpy.mlir().splitlines()[1])
      func.func @saxpy(%arg0: f64, %arg1: tensor<?xf64>, %arg2: tensor<?xf64>) -> tensor<?xf64> {
    """
    if fn is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_shapes=static_shapes,
                             static_inner_sizes_up_to=static_inner_sizes_up_to, options=options)
    return Function(fn, options, static_argnums=static_argnums, static_shapes=static_shapes,
                    static_inner_sizes_up_to=static_inner_sizes_up_to)
