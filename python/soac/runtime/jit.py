"""Compiled code in this process: object code compiled by LLVM on several
threads (:func:`compile_objects`), linked by an ORC JIT (:func:`load_objects`)."""

from __future__ import annotations

import ctypes
import functools
import os

from mlir import ir

from .. import _soac
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


def compile_threads() -> int:
    """The threads LLVM compiles one module on: ``SOAC_COMPILE_THREADS``, or
    the cores this process may run on, at most 8 (a module is cut into at
    most that many parts, one per thread)."""
    setting = os.environ.get("SOAC_COMPILE_THREADS", "").strip()
    if setting:
        try:
            threads = int(setting)
        except ValueError:
            raise Error(f"SOAC_COMPILE_THREADS must be a positive integer, got {setting!r}") from None
        if threads < 1:
            raise Error(f"SOAC_COMPILE_THREADS must be a positive integer, got {setting!r}")
        return threads
    return max(1, min(8, len(os.sched_getaffinity(0))))


def compile_objects(lowered: ir.Module, signatures: list[Signature]) -> list[bytes]:
    """A module in the LLVM dialect as ELF objects of position-independent
    code for this machine's CPU, optimized at -O3 as MLIR's ExecutionEngine
    optimizes, with the packed interface ``_mlir__mlir_ciface_<name>`` of
    each signature's function; compiled in parts on :func:`compile_threads`
    threads. A shared library may be linked from them
    (:func:`soac.runtime.aot.link_jit_objects`)."""
    try:
        return _soac.compile_objects(lowered.operation, 3, compile_threads(),
                                     ["_mlir_ciface_" + s.name for s in signatures])
    except RuntimeError as error:
        raise Error(f"LLVM could not compile the lowered module: {error}") from None


def load_objects(objects: list[bytes], signatures: list[Signature], *, openmp: bool) -> dict[str, CompiledFunction]:
    """The functions of ``objects`` (:func:`compile_objects`) linked into
    this process against soac's runtime (and OpenMP's); by name."""
    libraries = [native.soac_runtime_library()]
    if openmp:
        libraries.append(native.openmp_library())
    try:
        engine = _soac.ObjectJit(objects, libraries)
        packed = {s.name: engine.lookup("_mlir__mlir_ciface_" + s.name) for s in signatures}
    except RuntimeError as error:
        raise Error(f"the JIT could not link the compiled code: {error}") from None
    return {
        s.name: CompiledFunction(s, packed[s.name], keepalive=engine, checked=_checked_calls())
        for s in signatures
    }


def jit(lowered: ir.Module, signatures: list[Signature], *, openmp: bool) -> dict[str, CompiledFunction]:
    """A module in the LLVM dialect compiled and linked into this process;
    its functions by name."""
    return load_objects(compile_objects(lowered, signatures), signatures, openmp=openmp)
