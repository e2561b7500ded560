"""GPU code: every SOAC and nesting lowers to kernels whose PTX assembles
(here, without a GPU), shared libraries need nothing but the CUDA driver, and
(where a GPU is) compiled code computes what the reference interpreter does,
derivatives included."""

from __future__ import annotations

import ctypes
import functools
import importlib
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from mlir import ir, passmanager

import soac
from soac import ptx
from soac.frontend import tracing
from soac.compiler import GpuOptions, lower, public_functions
from soac.runtime import abi, native

from gpu_programs import CASES, LIBRARY, ROWS, SCALARS, SIZES, TO_KERNELS, assert_same_results, interpreted

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "adbench"))
sys.path.insert(0, str(ROOT / "tools" / "gpu_bundle"))

from host_accesses import host_buffer_accesses  # noqa: E402


@functools.cache
def gpu_status() -> str:
    library = ctypes.CDLL(native.soac_cuda_runtime_library())
    library.soac_gpu_status.restype = ctypes.c_char_p
    return library.soac_gpu_status().decode()


needs_ptxas = pytest.mark.skipif(ptx.ptxas_path() is None, reason="ptxas (CUDA toolkit) is not installed")
needs_gpu = pytest.mark.skipif(gpu_status() != "ready", reason=f"no GPU to run on: {gpu_status()}")


@functools.cache
def kernels_of(function: str) -> dict[str, str]:
    """The PTX of each kernel of a suite program, by kernel name."""
    source, _ = CASES[function]
    with ir.Context():
        return ptx.kernels(lower(soac.parse(source), options=GpuOptions(), only=function))


@needs_ptxas
@pytest.mark.parametrize("function", sorted(CASES))
def test_every_kernel_assembles(function):
    kernels = kernels_of(function)
    assert kernels, "no kernel was generated"
    for name, text in kernels.items():
        assert ".target sm_90" in text, name
        assert ptx.assemble(text, "sm_90"), name


@pytest.mark.parametrize("function", sorted(CASES))
def test_no_kernel_traps_on_a_failed_check(function):
    """Every check in the suite's kernels records its failure for the host to
    report after the launch (soac-lower-kernel-checks): none is left to trap
    the kernel, which would leave the CUDA context unusable."""
    for name, text in kernels_of(function).items():
        assert "__assertfail" not in text and "trap;" not in text, name


def test_kernels_record_failed_checks_for_the_runtime():
    """A gather's kernel takes the thread's failure record and claims it with
    a compare-and-swap; after the launch the host hands it to the runtime,
    which reports it once the kernel is done (the host never reads it)."""
    source, _ = CASES["gather_squares"]
    with ir.Context():
        lowered = str(lower(soac.parse(source), options=GpuOptions(), only="gather_squares"))
    assert "llvm.call @soac_failure_record()" in lowered
    assert "llvm.call @soac_check_kernel_failures()" in lowered
    assert any("atom" in line and "cas.b64" in line for text in kernels_of("gather_squares").values()
               for line in text.splitlines())


@needs_ptxas
@pytest.mark.parametrize("program", [f"{name}{kind}" for name in ("gmm", "kmeans", "ba", "hand", "lstm") for kind in ("", " gradient")])
def test_benchmark_programs_assemble(program):
    """The ADBench objectives and gradients (bench/adbench), traced by the frontend."""
    name, _, derivative = program.partition(" ")
    module = importlib.import_module(name)
    function, args = module.soac_version(*module.inputs(**module.TINY))
    jitted = soac.value_and_grad(function, argnums=tuple(module.WRT)) if derivative else soac.jit(function)
    traced = jitted.trace(*args)
    kernels = ptx.kernels(lower(traced.module, options=GpuOptions(), only=traced.name))
    assert kernels, "no kernel was generated"
    for kernel, text in kernels.items():
        assert ptx.assemble(text, "sm_90"), kernel


@pytest.mark.parametrize("program", [f"{name}{kind}" for name in ("gmm", "kmeans", "ba", "hand", "lstm") for kind in ("", " gradient")])
def test_benchmark_programs_run_in_device_memory(program):
    """With device_memory=True host code touches buffers only through the
    runtime's copies (soac-host-buffer-copies), so the program may keep its
    buffers in device memory. The runtime's record of failed kernel checks
    (managed memory) does not count; run-time checks must not keep host
    scratch in device memory (the allocation checks once did, by reading
    the address of the deallocation helper's arrays). HAND's gradient
    copies a strided slice between buffers (soac_gpu_copy_strided)."""
    name, _, derivative = program.partition(" ")
    module = importlib.import_module(name)
    function, args = module.soac_version(*module.inputs(**module.TINY))
    jitted = soac.value_and_grad(function, argnums=tuple(module.WRT)) if derivative else soac.jit(function)
    traced = jitted.trace(*args)
    accesses = host_buffer_accesses(lower(traced.module, options=GpuOptions(device_memory=True), only=traced.name))
    assert accesses == [], accesses


def test_scalars_only_kernels_read_stay_on_the_gpu():
    """In device memory each host read of a buffer is a copy that waits for
    the stream. A reduce's total that only later kernels use (through host
    arithmetic: log(total + 2)) is loaded by those kernels instead, and a
    total a loop carries and adds such totals to is carried in a buffer
    that a one-thread kernel updates (soac-sink-scalar-reads): no host read
    is left inside a time loop, in the suite's loop and in D-LSTM's primal
    and gradient; each reads its loss once, after its loop."""

    def host_reads_in_loops(module: ir.Module, name: str) -> int:
        copy = ir.Module.parse(str(module), module.context)
        passmanager.PassManager.parse(f"builtin.module({TO_KERNELS})", module.context).run(copy.operation)
        reads = []

        def visit(op):
            op = op.operation
            if op.name == "gpu.launch":
                return
            if op.name == "memref.load" and any(p.name == "scf.for" for p in parents(op)):
                reads.append(op)
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        visit(inner)

        def parents(op):
            while op.parent is not None and op.parent.name != "func.func":
                op = op.parent
                yield op

        for function in copy.body.operations:
            if ir.StringAttr(function.attributes["sym_name"]).value == name:
                visit(function)
        return len(reads)

    def waits(module: ir.Module, name: str) -> int:
        lowered = str(lower(module, options=GpuOptions(device_memory=True), only=name))
        return lowered.count("llvm.call @soac_gpu_copy(")

    with ir.Context():
        module = soac.parse(SCALARS)
        assert waits(module, "normalise") == 0
        assert waits(module, "normalised_steps") == 1  # after the loop
        assert host_reads_in_loops(module, "normalised_steps") == 0
    lstm = importlib.import_module("lstm")
    function, args = lstm.soac_version(*lstm.inputs(**lstm.SIZES["small"]))
    # Its 14 lanes dynamic (the GPU bundle's traces) and static (the
    # default): a static splat of zeros is filled on the GPU too, not a host
    # constant copied to the device at each use.
    for bound in (tracing.GPU_SMALL_INNER_SIZE, tracing.SMALL_INNER_SIZE):
        for traced_function in (function, soac.value_and_grad(function, argnums=tuple(lstm.WRT))):
            traced = soac.jit(traced_function, static_inner_sizes_up_to=bound).trace(*args)
            assert waits(traced.module, traced.name) == 1, bound
            with traced.module.context:
                assert host_reads_in_loops(traced.module, traced.name) == 0


def test_launches_give_their_stack_back():
    """Each launch's argument array is an alloca where the launch is: in
    D-LSTM's time loop it grew the stack on every step until the host
    process overflowed it (on an H200, a segfault). Every launch is now
    bracketed by stacksave / stackrestore (soac-scope-launch-stack)."""
    module = importlib.import_module("lstm")
    function, args = module.soac_version(*module.inputs(**module.TINY))
    traced = soac.value_and_grad(function, argnums=tuple(module.WRT)).trace(*args)
    lines = str(lower(traced.module, options=GpuOptions(device_memory=True), only=traced.name)).splitlines()
    launches = [i for i, line in enumerate(lines) if "gpu.launch_func" in line]
    assert len(launches) > 10
    for i in launches:
        assert "llvm.intr.stacksave" in lines[i - 1] and "llvm.intr.stackrestore" in lines[i + 1], lines[i]


def test_reductions_use_warp_shuffles_and_histograms_atomics():
    with ir.Context():
        reduce_ptx = "".join(ptx.kernels(lower(soac.parse(LIBRARY), options=GpuOptions(), only="sum")).values())
        histogram_ptx = "".join(ptx.kernels(lower(soac.parse(LIBRARY), options=GpuOptions(), only="histogram")).values())
        cas_ptx = "".join(ptx.kernels(lower(soac.parse(ROWS), options=GpuOptions(), only="product_histogram")).values())
    assert "shfl.sync.bfly" in reduce_ptx and "bar.sync" in reduce_ptx
    assert "atom.global.add.f32" in histogram_ptx
    assert "atom.cas.b32" in cas_ptx or "atom.acq_rel.sys.cas.b32" in cas_ptx


def test_shared_library_needs_only_the_driver(tmp_path):
    library = soac.compile(LIBRARY, "cumsum", target="gpu", emit="shared-lib", output=tmp_path)
    needed = subprocess.run(["readelf", "-d", str(library.library)], capture_output=True, text=True, check=True).stdout
    libraries = {line.split("[")[1].rstrip("]") for line in needed.splitlines() if "(NEEDED)" in line}
    assert libraries <= {"libsoac_cuda_runtime.so", "libc.so.6", "libm.so.6"}, libraries
    runtime = subprocess.run(
        ["readelf", "-d", str(tmp_path / "libsoac_cuda_runtime.so")], capture_output=True, text=True, check=True
    ).stdout
    assert "libcuda" not in runtime  # opened at run time, so the library loads anywhere
    assert "soac_gpu_alloc" in library.header.read_text()
    loaded = library.load()
    assert loaded.target == "gpu"
    if gpu_status() != "ready":
        with pytest.raises(abi.DeviceError, match="cannot run here"):
            loaded.cumsum(np.ones(3, np.float32))


NESTED_SCAN = """
func.func @scan_per_matrix_row(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%x : tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%m: tensor<?x?xf32>):
    %s = soac.map ins(%m : tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb1(%row: tensor<?xf32>):
      %c = soac.scan ins(%row : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
      ^bb2(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        soac.yield %t : f32
      }
      soac.yield %c : tensor<?xf32>
    }
    soac.yield %s : tensor<?x?xf32>
  }
  return %r : tensor<?x?x?xf32>
}
"""


def test_unsupported_constructs_are_errors_at_their_location(tmp_path):
    (tmp_path / "nested_scan.mlir").write_text(NESTED_SCAN)
    with pytest.raises(soac.LoweringError, match=r"nested_scan.mlir:6:10: error: 'soac.map' op is not supported by the GPU lowering"):
        with ir.Context():
            module = soac.parse_file(tmp_path / "nested_scan.mlir")
            lower(module, options=GpuOptions(), only="scan_per_matrix_row")


def test_every_example_lowers_for_the_gpu():
    """examples/soacs.mlir, argmax_bins too: its operator mixes its two
    destinations, which a lock per bin updates (it was an error before)."""
    with ir.Context():
        module = soac.parse_file(ROOT / "examples" / "soacs.mlir")
        for function in public_functions(module):
            lower(soac.parse_file(ROOT / "examples" / "soacs.mlir"), options=GpuOptions(), only=function)
        kernels = "".join(ptx.kernels(lower(module, options=GpuOptions(), only="argmax_bins")).values())
    assert "atom.acquire.gpu.cas.b32" in kernels and "st.release.gpu" in kernels


def test_options_must_fit_the_target():
    with pytest.raises(soac.Error, match="takes GpuOptions"):
        soac.compile(LIBRARY, "sum", target="gpu", options=soac.compiler.CpuOptions())


@needs_gpu
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("function", sorted(CASES))
def test_runs_like_the_interpreter(function, n):
    source, make_args = CASES[function]
    args = make_args(n)
    compiled = soac.compile(source, function, target="gpu")
    assert_same_results(compiled(*args), interpreted(source, function, args), n)
