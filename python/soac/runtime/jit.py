"""Compiled code in this process, through MLIR's ExecutionEngine (LLVM ORC JIT)."""

from __future__ import annotations

import ctypes
import functools

from mlir import execution_engine, ir

from ..errors import Error
from . import native
from .abi import CheckedCalls, CompiledFunction, Signature, register_blas


# Tuning that LLVM's cost model does not give the host by default: a
# vectorized gather or scatter is slower than the scalar code it replaces
# when its lanes are a stride apart. LLVM's loop vectorizer vectorized the
# accumulation of HAND's gradient into its 22 bones' 4 × 4 adjoints across
# the bones, 16 doubles apart (16 gathers and 16 scatters per 8 bones):
# 65 % of the gradient's time on AMD Zen 4. Without gathers and scatters
# LLVM leaves that loop scalar, and the whole value-and-gradient call took
# 0.22 ms instead of 0.29 ms (HAND's large size: 0.63 instead of 1.03 ms).
_HOST_TUNING = ("+prefer-no-gather", "+prefer-no-scatter")

# LLVM's options for the code the JIT compiles (global to the process, set
# before its first compilation). The loop vectorizer vectorized a map over
# rows whose inner loop, of a size known at compile time, it had unrolled,
# by loading the rows' elements as interleaved groups: k-means' gradient
# with its 8 coordinates traced static (soac.jit's default for inner sizes
# up to 16) ran 1.6x slower that way, transposing 8 × 8 blocks of centroids
# with permutes, than with the inner loop vectorized; without interleaved
# groups it runs at the dynamic trace's time, and GMM's, HAND's, BA's and
# D-LSTM's gradients are unchanged (docs/benchmarks.md, "Static shapes
# against dynamic ones").
_LLVM_OPTIONS = ("-enable-interleaved-mem-accesses=false",)


def _tune_for_host(lowered: ir.Module) -> None:
    """Gives every function of ``lowered`` the host CPU and its features
    (what the ExecutionEngine compiles for) with ``_HOST_TUNING``: a
    function's own target features replace the engine's. Sets
    ``_LLVM_OPTIONS`` the first time."""
    _set_llvm_options()
    cpu, features = _host_cpu()
    with lowered.context:
        cpu_attribute = ir.StringAttr.get(cpu)
        listed = ", ".join(f'"{feature}"' for feature in (*features, *_HOST_TUNING))
        features_attribute = ir.Attribute.parse(f"#llvm.target_features<[{listed}]>")
        for operation in lowered.body.operations:
            if operation.operation.name == "llvm.func":
                operation.attributes["target_cpu"] = cpu_attribute
                operation.attributes["target_features"] = features_attribute


@functools.cache
def _set_llvm_options() -> None:
    from .. import _soac

    try:
        _soac.set_llvm_options(list(_LLVM_OPTIONS))
    except ValueError as error:
        raise Error(f"LLVM refused the JIT's options {' '.join(_LLVM_OPTIONS)}: {error}") from None


@functools.cache
def _host_cpu() -> tuple[str, list[str]]:
    from .. import _soac

    return _soac.host_cpu()


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
    _tune_for_host(lowered)
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
