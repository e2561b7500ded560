"""Compile soac programs for the CPU and NVIDIA GPUs: lowering, JIT and
shared libraries.

Lowering runs the named pipeline ``soac-lower-to-cpu`` or
``soac-lower-to-nvvm`` (the ones ``soac-opt --soac-lower-to-cpu`` and
``soac-opt --soac-lower-to-nvvm`` run), so every compilation is reproducible
from the command line.

>>> import numpy as np, soac
>>> saxpy = soac.compile('''
...   func.func @saxpy(%a: f32, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
...     %r = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
...     ^bb0(%xi: f32, %yi: f32):
...       %m = arith.mulf %a, %xi : f32
...       %s = arith.addf %m, %yi : f32
...       soac.yield %s : f32
...     }
...     return %r : tensor<?xf32>
...   }''', "saxpy")
>>> saxpy(2.0, np.ones(3, np.float32), np.arange(3, dtype=np.float32))
array([2., 3., 4.], dtype=float32)
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir, passmanager

from .diagnostics import diagnostic_lines, parse
from .errors import Error, LoweringError
from .runtime import aot, jit
from .runtime.abi import CompiledFunction, Signature, ValueSpec
from .types import numpy_dtype

TARGETS = ("cpu", "gpu")
EMITS = ("jit", "shared-lib")

# Compiled functions by (IR text, function, options): compiling the same
# program twice returns the same code.
_jit_cache: dict[tuple, CompiledFunction] = {}


@dataclass(frozen=True)
class CpuOptions:
    """Options of the soac-lower-to-cpu pipeline."""

    TARGET: ClassVar[str] = "cpu"
    num_chunks: int = 64
    openmp: bool = True

    def pipeline(self) -> str:
        openmp = "true" if self.openmp else "false"
        return f"builtin.module(soac-lower-to-cpu{{num-chunks={self.num_chunks} openmp={openmp}}})"


@dataclass(frozen=True)
class GpuOptions:
    """Options of the soac-lower-to-nvvm pipeline: the GPU architecture, the
    PTX version, and how kernels are embedded (``isa``: PTX, compiled by the
    CUDA driver when the code is loaded; ``bin``: cubin, needs ``ptxas``)."""

    TARGET: ClassVar[str] = "gpu"
    chip: str = "sm_90"
    features: str = "+ptx80"
    format: str = "isa"
    opt_level: int = 3

    def pipeline(self) -> str:
        return (
            f"builtin.module(soac-lower-to-nvvm{{chip={self.chip} features={self.features} "
            f"format={self.format} opt-level={self.opt_level}}})"
        )


def lower(
    module: ir.Module | str, *, options: CpuOptions | GpuOptions = CpuOptions(), only: str | None = None
) -> ir.Module:
    """A copy of ``module`` lowered to the LLVM dialect by ``soac-lower-to-cpu``
    (``CpuOptions``) or ``soac-lower-to-nvvm`` (``GpuOptions``: host code with
    the kernels embedded as PTX or cubin).

    With ``only``, the copy keeps just that function and the functions it
    calls (the others become private and ``symbol-dce`` drops them).
    Raises :class:`soac.LoweringError` naming the op that could not be lowered.
    """
    module = as_module(module)
    with module.context:
        # A copy that keeps the source locations, for the diagnostics.
        lowered = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        pipeline = options.pipeline()
        if only is not None:
            for op in lowered.body.operations:
                if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value != only:
                    op.attributes["sym_visibility"] = ir.StringAttr.get("private")
            pipeline = pipeline.replace("builtin.module(", "builtin.module(symbol-dce,", 1)
        try:
            passmanager.PassManager.parse(pipeline).run(lowered.operation)
        except ir.MLIRError as error:
            name = "soac-lower-to-nvvm" if options.TARGET == "gpu" else "soac-lower-to-cpu"
            raise LoweringError(f"{name} failed", diagnostic_lines(error)) from None
    return lowered


def public_functions(module: ir.Module) -> dict[str, ir.OpView]:
    """The public ``func.func`` ops of ``module`` that have a body, by name."""
    functions = {}
    for op in module.body.operations:
        if op.operation.name != "func.func" or len(op.regions[0].blocks) == 0:
            continue
        if "sym_visibility" in op.attributes and ir.StringAttr(op.attributes["sym_visibility"]).value != "public":
            continue
        functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return functions


def signature(name: str, function: ir.OpView) -> Signature:
    """The C-ABI signature of a ``func.func``; a soac.Error for types it cannot pass."""
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    args = tuple(_spec(name, f"argument #{i}", t) for i, t in enumerate(function_type.inputs))
    results = tuple(_spec(name, f"result #{i}", t) for i, t in enumerate(function_type.results))
    return Signature(name, args, results)


def compile(  # noqa: A001  (the natural name, as in jax.jit / torch.compile)
    module: ir.Module | str,
    function: str,
    *,
    target: str = "cpu",
    emit: str = "jit",
    output: str | os.PathLike | None = None,
    options: CpuOptions | GpuOptions | None = None,
) -> CompiledFunction | aot.SharedLibrary:
    """Compiles ``@function`` of ``module`` (an ``ir.Module`` or MLIR text).

    ``target="cpu"`` (options: :class:`CpuOptions`) runs on all cores;
    ``target="gpu"`` (options: :class:`GpuOptions`) runs the SOACs as CUDA
    kernels: tensor arguments are copied into memory the GPU shares with the
    host and results copied out. GPU code is compiled here without a GPU; a
    call raises :class:`soac.runtime.abi.DeviceError` where no CUDA driver
    or device is found.

    Only ``@function`` and the functions it calls are compiled.
    ``emit="jit"`` returns a callable on numpy arrays (arguments are checked
    against the signature: dtype, rank and static sizes; tensors come back as
    numpy arrays that own their memory). Compiled code is cached by IR.

    ``emit="shared-lib"`` writes ``lib<function>.so``, a C header, the
    signatures and a standalone ctypes loader into the directory ``output``
    and returns their paths (see :mod:`soac.runtime.aot`).
    """
    if target not in TARGETS:
        raise Error(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
    if emit not in EMITS:
        raise Error(f"unknown emit {emit!r}; available: {', '.join(EMITS)}")
    expected = GpuOptions if target == "gpu" else CpuOptions
    options = expected() if options is None else options
    if not isinstance(options, expected):
        raise Error(f"target {target!r} takes {expected.__name__}, got {type(options).__name__}")
    module = as_module(module)
    with module.context:
        available = public_functions(module)
        if function not in available:
            raise Error(f"no public function @{function} with a body in the module; it has {sorted(available)}")
        entry = signature(function, available[function])
        if emit == "shared-lib":
            if output is None:
                raise Error('emit="shared-lib" needs an output directory')
            return aot.write_shared_library(lower(module, options=options, only=function), [entry], output, options)
        key = (str(module), function, options)
        if key not in _jit_cache:
            lowered = lower(module, options=options, only=function)
            if target == "gpu":
                # GPU code runs from a shared library, the way it runs where
                # MLIR is not installed.
                library = aot.write_shared_library(lowered, [entry], tempfile.mkdtemp(prefix="soac-gpu-"), options)
                _jit_cache[key] = library.load().functions[function]
            else:
                _jit_cache[key] = jit.jit(lowered, [entry], openmp=options.openmp)[function]
        return _jit_cache[key]


def as_module(module: ir.Module | str) -> ir.Module:
    """``module`` itself, or MLIR text parsed into a module of a new context."""
    if isinstance(module, ir.Module):
        return module
    if isinstance(module, str):
        with ir.Context():
            return parse(module)
    raise Error(f"expected an mlir.ir.Module or MLIR text, got {type(module).__name__}")


def _spec(function: str, where: str, type_: ir.Type) -> ValueSpec:
    element = type_.element_type if isinstance(type_, ir.RankedTensorType) else type_
    dtype = numpy_dtype(element)
    if dtype is None or isinstance(type_, ir.ShapedType) and not isinstance(type_, ir.RankedTensorType):
        raise Error(f"{where} of @{function} has type {type_}, which compiled functions cannot pass")
    if not isinstance(type_, ir.RankedTensorType):
        return ValueSpec(dtype.name)
    dynamic = ir.ShapedType.get_dynamic_size()
    return ValueSpec(dtype.name, tuple(None if d == dynamic else d for d in type_.shape))
