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

import dataclasses
import logging
import os
import pathlib
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir, passmanager

from . import tiers
from .diagnostics import diagnostic_lines, parse
from .errors import Error, LoweringError
from .runtime import abi, aot, disk_cache, jit
from .runtime.flags import flag
from .runtime.abi import CompiledFunction, Signature, ValueSpec
from .types import numpy_dtype

# Compilations report their stages and times here (INFO for those over a second).
_log = logging.getLogger("soac")

TARGETS = ("cpu", "gpu")
EMITS = ("jit", "shared-lib")

_DEFAULT_JIT_CACHE_SIZE = 64


class _JitCache:
    """Compiled functions by (IR text, function, options), at most ``size``
    of them: compiling a program again returns the same code while it is
    cached, and the least recently compiled (or looked up) one is dropped
    first. A dropped function's code (its ExecutionEngine, about 1.6 MB)
    is released once no one else holds the function."""

    def __init__(self, size: int):
        self.size = _checked_size(size)
        self._entries: OrderedDict[tuple, CompiledFunction] = OrderedDict()
        self._lock = threading.Lock()  # compile may run on several threads

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple) -> CompiledFunction | None:
        """The function cached under ``key`` (now the most recent), or None."""
        with self._lock:
            compiled = self._entries.get(key)
            if compiled is not None:
                self._entries.move_to_end(key)
            return compiled

    def put(self, key: tuple, compiled: CompiledFunction) -> None:
        """Caches ``compiled`` as the most recent function."""
        with self._lock:
            self._entries[key] = compiled
            self._entries.move_to_end(key)
            self._evict()

    def resize(self, size: int) -> None:
        """Keeps at most ``size`` functions from now on."""
        with self._lock:
            self.size = _checked_size(size)
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _evict(self) -> None:
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


def _checked_size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise Error(f"the JIT cache size must be an integer >= 0, got {size!r}")
    return size


def _size_from_environment() -> int:
    """``SOAC_JIT_CACHE_SIZE``, or the default when it is not set."""
    text = os.environ.get("SOAC_JIT_CACHE_SIZE")
    if text is None:
        return _DEFAULT_JIT_CACHE_SIZE
    try:
        return _checked_size(int(text))
    except (ValueError, Error):
        raise Error(f"SOAC_JIT_CACHE_SIZE must be an integer >= 0, got {text!r}") from None


_jit_cache = _JitCache(_size_from_environment())


def set_jit_cache_size(size: int) -> None:
    """How many compiled functions ``compile(..., emit="jit")`` keeps (64 by
    default, or ``SOAC_JIT_CACHE_SIZE`` read at import; 0 caches nothing).
    Shrinking the cache drops its least recently used functions."""
    _jit_cache.resize(size)


def get_jit_cache_size() -> int:
    """How many compiled functions the JIT cache keeps."""
    return _jit_cache.size


def clear_jit_cache() -> None:
    """Drops every compiled function of the JIT cache (see :func:`soac.clear_caches`)."""
    _jit_cache.clear()


@dataclass(frozen=True)
class CpuOptions:
    """Options of the soac-lower-to-cpu pipeline. ``check_indices=False``
    drops the run-time checks of tensor accesses and of the sizes ops take
    on trust (soac-check-indices), for code that has proven its indices and
    sizes: an index out of range, or a reshape to sizes that do not fit,
    then reads or writes outside its buffer. ``vector_math=False`` computes
    exp, log and tanh of float64 and float32 by calls of the C library
    (libm) instead of soac's own float64 arithmetic, which vectorizes with
    the loops around it and is within 2 ulp of libm's for float64 (4 for
    tanh; docs/sharp_bits.md)."""

    TARGET: ClassVar[str] = "cpu"
    num_chunks: int = 64
    openmp: bool = True
    check_indices: bool = True
    vector_math: bool = True

    def pipeline(self) -> str:
        return (
            f"builtin.module(soac-lower-to-cpu{{num-chunks={self.num_chunks} openmp={_flag(self.openmp)} "
            f"check-indices={_flag(self.check_indices)} vector-math={_flag(self.vector_math)}}})"
        )


@dataclass(frozen=True)
class GpuOptions:
    """Options of the soac-lower-to-nvvm pipeline: the GPU architecture, the
    PTX version, and how kernels are embedded (``isa``: PTX, compiled by the
    CUDA driver when the code is loaded; ``bin``: cubin, needs ``ptxas``).
    ``device_memory=True`` makes host code read and write buffers by copies
    (soac-host-buffer-copies), so that the runtime may keep them in device
    memory (``soac_gpu_set_memory``, docs/gpu.md). ``flatten=True`` runs
    soac-flatten first, so that nested maps become kernels over the merged
    rows rather than one thread per outer row. ``tensor_cores`` runs float64
    matrix products on the tensor cores (mma.sync) where ``chip`` has them
    (sm_80 and later); ``False`` keeps them on the ordinary cores."""

    TARGET: ClassVar[str] = "gpu"
    chip: str = "sm_90"
    features: str = "+ptx80"
    format: str = "isa"
    opt_level: int = 3
    check_indices: bool = True
    device_memory: bool = False
    flatten: bool = False
    tensor_cores: bool = True

    def pipeline(self) -> str:
        return (
            f"builtin.module(soac-lower-to-nvvm{{chip={self.chip} features={self.features} "
            f"format={self.format} opt-level={self.opt_level} check-indices={_flag(self.check_indices)} "
            f"device-memory={_flag(self.device_memory)} flatten={_flag(self.flatten)} "
            f"tensor-cores={_flag(self.tensor_cores)}}})"
        )


def _flag(value: bool) -> str:
    return "true" if value else "false"


def timing_from_environment() -> bool:
    """Whether ``SOAC_TIMING`` asks for MLIR's pass timing of every compilation
    (set to anything but empty, ``0``, ``off``, ``false`` or ``no``)."""
    return flag("SOAC_TIMING", default=False)


def lower(
    module: ir.Module | str,
    *,
    options: CpuOptions | GpuOptions = CpuOptions(),
    only: str | None = None,
    timing: bool = False,
) -> ir.Module:
    """A copy of ``module`` lowered to the LLVM dialect by ``soac-lower-to-cpu``
    (``CpuOptions``) or ``soac-lower-to-nvvm`` (``GpuOptions``: host code with
    the kernels embedded as PTX or cubin).

    With ``only``, the copy keeps just that function and the functions it
    calls (the others become private and ``symbol-dce`` drops them).
    With ``timing`` (or ``SOAC_TIMING=1``), MLIR's pass timing report (the
    time of every pass, as ``soac-opt -mlir-timing`` prints it) goes to
    standard error when the pipeline is done.
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
            manager = passmanager.PassManager.parse(pipeline)
            # Verifying the IR after each of the pipeline's ~60 passes took
            # most of the compile time of deeply nested code (vector mode:
            # its dominance checks walk up every region of every use); the
            # result is verified once below. SOAC_VERIFY_EACH_PASS=1 (or
            # soac-opt) names the pass that broke it.
            manager.enable_verifier(flag("SOAC_VERIFY_EACH_PASS", default=False))
            if timing or timing_from_environment():
                manager.enable_timing()
            manager.run(lowered.operation)
            lowered.operation.verify()
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
    timing: bool = False,
) -> CompiledFunction | tiers.TieredFunction | aot.SharedLibrary:
    """Compiles ``@function`` of ``module`` (an ``ir.Module`` or MLIR text).

    ``target="cpu"`` (options: :class:`CpuOptions`) runs on all cores;
    ``target="gpu"`` (options: :class:`GpuOptions`) runs the SOACs as CUDA
    kernels: numpy arguments are copied into memory the GPU shares with the
    host, arrays already on the GPU (CuPy, PyTorch, JAX, Numba: through
    ``__cuda_array_interface__`` or DLPack) are passed by their pointer, and
    results are copied out to numpy arrays, or left on the GPU as
    :class:`soac.DeviceArray` with ``f(..., device_results=True)``; a call
    takes ``stream=``, and ``f.timed(...)`` also returns its time by CUDA
    events (docs/gpu.md, "Arrays on the GPU from Python"). GPU code is
    compiled here without a GPU; a call raises
    :class:`soac.runtime.abi.DeviceError` where no CUDA driver or device is
    found.

    Only ``@function`` and the functions it calls are compiled.
    ``emit="jit"`` returns a callable on numpy arrays (arguments are checked
    against the signature: dtype, rank and static sizes, and scalars are
    converted only where numpy keeps their value; tensors come back as numpy
    arrays that own their memory and share it with no other result).

    Compiled code is cached by IR text, function and options: compiling the
    same program again returns the same function. The cache keeps the most
    recently used functions, 64 by default (``SOAC_JIT_CACHE_SIZE`` at
    import, or :func:`set_jit_cache_size`); a function dropped from it stays
    usable, and its code is released once it is no longer referenced.
    :func:`soac.clear_caches` empties it.

    Compiled code is also kept on disk, where later processes load it
    instead of compiling again (``~/.cache/soac`` by default; ``SOAC_CACHE_DIR``
    moves it, ``SOAC_CACHE=off`` turns it off, ``SOAC_CACHE_MAX_SIZE`` bounds
    it: see :mod:`soac.runtime.disk_cache`).

    A large CPU function that is not in the disk cache starts on its
    sequential code, compiled before ``compile`` returns, while a background
    process compiles its parallel code, which later calls run and the disk
    cache keeps (:mod:`soac.tiers`; ``SOAC_TIERED=off`` compiles the
    parallel code at once, :func:`soac.wait_for_background_compiles` waits
    for it).

    ``timing=True`` (or ``SOAC_TIMING=1``) compiles even when the code is
    cached and prints MLIR's time of every pass of the pipeline to standard
    error. Compilations report their stages and times to the ``soac``
    logger, at INFO when they take over a second.

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
        timing = timing or timing_from_environment()
        key = (str(module), function, options)
        compiled = None if timing else _jit_cache.get(key)
        if compiled is None:
            compiled = _compile_or_load(module, function, entry, options, timing)
            _jit_cache.put(key, compiled)
        return compiled


def clear_disk_cache() -> None:
    """Removes every entry of the disk cache (where ``SOAC_CACHE_DIR`` or the
    default says it is; nothing when ``SOAC_CACHE=off``)."""
    cache = disk_cache.open_from_environment()
    if cache is not None:
        cache.clear()


def _compile_or_load(
    module: ir.Module, function: str, entry: Signature, options: CpuOptions | GpuOptions, timing: bool
) -> CompiledFunction | tiers.TieredFunction:
    """``@function`` of ``module`` loaded from the disk cache, or compiled
    (and stored there); for the CPU with OpenMP, maybe in two tiers
    (:mod:`soac.tiers`)."""
    cache = disk_cache.open_from_environment()
    text = module.operation.get_asm(enable_debug_info=True)  # run-time errors name its locations
    key = _key(cache, text, function, options)
    compiled = None if timing else _load(cache, key, function)
    if compiled is not None:
        return compiled
    if timing or options.TARGET != "cpu" or not options.openmp or not tiers.enabled():
        return _compile(module, function, entry, options, timing, cache, key)
    # The first tier: sequential code, and LLVM at -O0 (its own key), which
    # compiles 2-4 times faster and runs 1.0-2.8 times slower (docs/benchmarks.md).
    sequential = dataclasses.replace(options, openmp=False)
    first_tier = tiers.FIRST_TIER_OPT_LEVEL
    first_tier_key = _key(cache, text, function, sequential, first_tier)
    compiled = _load(cache, first_tier_key, function)
    compiling = compiled is None
    if compiling:
        start = time.perf_counter()
        lowered = lower(module, options=sequential, only=function)
        if not tiers.worth_tiering(str(lowered)):
            return _compile(module, function, entry, options, False, cache, key)
        compiled = _compile(module, function, entry, sequential, False, cache, first_tier_key, (lowered, start),
                            first_tier)

    def store(directory: pathlib.Path) -> None:
        if cache is not None:
            cache.store(key, lambda entry: _copy_files(directory, entry))

    def compile_here() -> CompiledFunction:
        # The child failed (no C compiler to link with, an embedded Python):
        # what SOAC_TIERED=off would have compiled, in this process.
        return _compile(module, function, entry, options, False, cache, key)

    _log.log(logging.INFO if compiling else logging.DEBUG,
             "@%s runs sequential code while its parallel code compiles in the background", function)
    parallel = tiers.compile_in_background(text, function, options, store)
    return tiers.TieredFunction(compiled, parallel, compile_here)


def _key(
    cache: disk_cache.DiskCache | None, text: str, function: str, options: CpuOptions | GpuOptions, opt_level: int = 3
) -> str:
    """The disk-cache key of ``@function`` of ``text`` compiled with
    ``options`` (LLVM at ``opt_level``); empty without a cache."""
    if cache is None:
        return ""
    parts = [text, function, repr(options)]
    return disk_cache.key(parts if opt_level == 3 else [*parts, f"llvm-opt-level={opt_level}"])


def _load(cache: disk_cache.DiskCache | None, key: str, function: str) -> CompiledFunction | None:
    """``@function`` from the disk cache's entry ``key``, or None."""
    if cache is None:
        return None
    start = time.perf_counter()
    directory = cache.lookup(key)
    if directory is None:
        return None
    try:
        compiled = abi.load_library(str(directory / f"lib{function}.so")).functions[function]
    except (OSError, KeyError, ValueError) as error:
        _log.warning("soac: could not load @%s from the disk cache entry %s (%s); compiling again",
                     function, directory, error)
        return None
    _log.debug("loaded @%s from the disk cache in %.3f s (%s)", function, time.perf_counter() - start, directory)
    return compiled


def _copy_files(source: pathlib.Path, target: pathlib.Path) -> None:
    for path in source.iterdir():
        shutil.copy2(path, target / path.name)


def _compile(
    module: ir.Module,
    function: str,
    entry: Signature,
    options: CpuOptions | GpuOptions,
    timing: bool,
    cache: disk_cache.DiskCache | None,
    key: str,
    lowered_since: tuple[ir.Module, float] | None = None,
    opt_level: int = 3,
) -> CompiledFunction:
    """``@function`` of ``module`` compiled into this process (LLVM at
    ``opt_level``; the GPU's is in ``options``), and stored in ``cache``
    unless it is None; the stages' times go to the ``soac`` logger (INFO
    when the whole takes over a second). ``lowered_since``: the caller
    lowered it already, starting at that ``time.perf_counter()``."""
    if lowered_since is None:
        start = time.perf_counter()
        lowered = lower(module, options=options, only=function, timing=timing)
    else:
        lowered, start = lowered_since
    lowering = time.perf_counter() - start
    if options.TARGET == "gpu":
        # GPU code runs from a shared library, the way it runs where MLIR is
        # not installed; it is written into the cache's entry directly.
        def write(directory: pathlib.Path) -> None:
            aot.write_shared_library(lowered, [entry], directory, options)

        directory = cache.store(key, write) if cache is not None else None
        if directory is None:
            directory = pathlib.Path(tempfile.mkdtemp(prefix="soac-gpu-"))
            write(directory)
        compiled = abi.load_library(str(directory / f"lib{function}.so")).functions[function]
        llvm = time.perf_counter() - start - lowering
        storing = 0.0
    elif cache is None:
        compiled = jit.jit(lowered, [entry], openmp=options.openmp, opt_level=opt_level)[function]
        llvm = time.perf_counter() - start - lowering
        storing = 0.0
    else:
        with tempfile.TemporaryDirectory(prefix="soac-object-") as scratch:
            object_file = os.path.join(scratch, f"{function}.o")
            compiled = jit.jit(lowered, [entry], openmp=options.openmp, object_file=object_file,
                               opt_level=opt_level)[function]
            llvm = time.perf_counter() - start - lowering
            cache.store(key, lambda directory: aot.link_jit_object(object_file, [entry], directory, options))
        storing = time.perf_counter() - start - lowering - llvm
    total = time.perf_counter() - start
    pipeline = "soac-lower-to-nvvm" if options.TARGET == "gpu" else "soac-lower-to-cpu"
    _log.log(logging.INFO if total > 1.0 else logging.DEBUG,
             "compiled @%s for the %s in %.2f s (%s %.2f s, LLVM %.2f s, storing in the disk cache %.2f s)",
             function, options.TARGET.upper(), total, pipeline, lowering, llvm, storing)
    return compiled


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
