"""Compiled code in this process, through MLIR's ExecutionEngine (LLVM ORC JIT)."""

from __future__ import annotations

import ctypes
import functools

from mlir import execution_engine, ir

from ..errors import Error
from . import native
from .abi import CheckedCalls, CompiledFunction, Signature, register_blas


@functools.cache
def _checked_calls() -> CheckedCalls:
    """Checked calls through the runtime library the JIT links to, whose
    matrix products call numpy's BLAS."""
    runtime = ctypes.CDLL(native.soac_runtime_library())
    register_blas(runtime)
    return CheckedCalls(runtime)


def jit(
    lowered: ir.Module,
    signatures: list[Signature],
    *,
    openmp: bool,
    object_file: str | None = None,
    opt_level: int = 3,
) -> dict[str, CompiledFunction]:
    """Compiles a module in the LLVM dialect (at -O3 unless told); returns
    its functions by name. With ``object_file``, the code is position
    independent and also written there, as an ELF object a shared library
    can be linked from (:func:`soac.runtime.aot.link_jit_object`)."""
    libraries = [native.soac_runtime_library()]
    if openmp:
        libraries.append(native.openmp_library())
    try:
        engine = execution_engine.ExecutionEngine(
            lowered, opt_level=opt_level, shared_libs=libraries, enable_pic=object_file is not None
        )
    except RuntimeError as error:
        raise Error(f"the JIT could not compile the lowered module: {error}") from None
    functions = {}
    for signature in signatures:
        # raw_lookup(n) finds the symbol "_mlir_" + n (the packed wrapper of
        # n): here the packed interface of the C interface
        # "_mlir_ciface_<name>", which every call goes through.
        packed = engine.raw_lookup("_mlir_ciface_" + signature.name)
        if not packed:
            raise Error(f"the JIT found no packed interface for @{signature.name}")
        functions[signature.name] = CompiledFunction(signature, packed, keepalive=engine, checked=_checked_calls())
    if object_file is not None:  # the engine compiles on the first lookup
        engine.dump_to_object_file(object_file)
    return functions
