"""soac: differentiable second-order array combinators on MLIR.

Importing soac registers the soac dialect with the upstream MLIR Python
bindings, so every ``mlir.ir.Context`` created afterwards knows it; contexts
created before the import get it from :func:`register_dialect`.

>>> import soac
>>> from mlir import ir
>>> with ir.Context():
...     module = soac.parse('''
...       func.func @iota8() -> tensor<8xindex> {
...         %i = soac.iota : tensor<8xindex>
...         return %i : tensor<8xindex>
...       }''')
...     print(module.body.operations[0].body.blocks[0].operations[0])
%0 = soac.iota : tensor<8xindex>
"""

from __future__ import annotations

from mlir import ir as _ir  # loads the MLIR libraries the extension links against
from mlir._mlir_libs import get_dialect_registry as _global_registry
from mlir.dialects._ods_common import _cext

from . import _soac, builders, dialect
from .runtime.abi import ArgumentError, DeviceArray, ExecutionError, IndexOutOfRangeError, OutOfMemoryError, load_library
from .runtime.native import get_num_threads, set_num_threads
from .diagnostics import parse, parse_file, verify
from .autodiff import Derivative
from .forward import Jacobian
from .compiler import compile, get_jit_cache_size, lower, set_jit_cache_size
from .tiers import wait_for_background_compiles
from .errors import BuildError, Error, InterpretError, LoweringError, ParseError, VerificationError
from .interp import interpret

# The transforms of Python functions; soac.mlir has those of functions written in MLIR.
from .frontend import (
    ArgSpec, Array, CustomDerivatives, TraceError, cond, custom_jvp, custom_vjp, fori_loop, grad, hessian, hvp, iota,
    jacfwd, jacrev, jit, jvp, register_dataclass, register_pytree_node, vmap,
    map, reduce, reduce_by_index, scan, scatter, value_and_grad, vjp, while_loop,
)
from .frontend.jit import forget_compiled_code as _forget_compiled_code
from . import compiler, interop, lax, math, mlir, numpy, tree_util  # noqa: E402  (namespaces)

__all__ = [
    "ArgSpec",
    "ArgumentError",
    "Array",
    "BuildError",
    "CustomDerivatives",
    "Derivative",
    "DeviceArray",
    "Error",
    "ExecutionError",
    "IndexOutOfRangeError",
    "InterpretError",
    "Jacobian",
    "LoweringError",
    "OutOfMemoryError",
    "ParseError",
    "TraceError",
    "VerificationError",
    "builders",
    "clear_caches",
    "compile",
    "cond",
    "custom_jvp",
    "custom_vjp",
    "dialect",
    "fori_loop",
    "get_jit_cache_size",
    "get_num_threads",
    "grad",
    "hessian",
    "hvp",
    "interpret",
    "iota",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "load_library",
    "lower",
    "map",
    "register_dataclass",
    "register_pytree_node",
    "math",
    "mlir",
    "numpy",
    "parse",
    "parse_file",
    "reduce",
    "reduce_by_index",
    "register_dialect",
    "scan",
    "scatter",
    "set_jit_cache_size",
    "set_num_threads",
    "value_and_grad",
    "verify",
    "vjp",
    "vmap",
    "wait_for_background_compiles",
    "while_loop",
]


def clear_caches() -> None:
    """Drops all compiled code soac caches, as ``jax.clear_caches`` does: the
    JIT cache of :func:`soac.compile` and the code of every :func:`soac.jit`
    function's traces (they compile again on their next call). Functions
    returned by ``soac.compile`` stay usable."""
    compiler.clear_jit_cache()
    _forget_compiled_code()


def register_dialect(context: _ir.Context | None = None) -> None:
    """Registers and loads the soac dialect in ``context`` (default: the current one)."""
    _soac.load_dialects(context or _ir.Context.current)


_soac.register_dialects(_global_registry())
# Operations of the soac dialect get their classes (soac.dialect.MapOp, ...),
# and the bindings stop trying to import `mlir.dialects.soac` for each one.
_cext.globals.append_dialect_search_prefix("soac._dialects")
