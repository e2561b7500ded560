"""GPU kernels checked without a GPU: convert-soac-to-gpu's kernels, run on
the CPU by soac-emulate-gpu-launches, compute what the reference interpreter
does.

Kernels whose threads never wait for each other (maps one thread per row,
folds of vector rows, scatters, histograms) run as loops over their blocks
and threads. Kernels whose threads synchronize (reductions and scans by
warp shuffles and workgroup memory, one block per row) run each block's
threads as an OpenMP team, barriers and shuffles between them: slower (256
threads on the machine's cores), so they run at fewer rows, and with at
most 2 folding blocks so that each block folds several tiles of rows.
"""

from __future__ import annotations

import importlib
import pathlib
import sys

import numpy as np
import pytest
from mlir import ir

import soac
from soac.compiler import lower, public_functions, signature
from soac.frontend import tracing
from soac.runtime import jit

from gpu_programs import CASES, SIZES, EmulatedGpu, assert_same_results, emulated, interpreted

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "adbench"))


# The cases whose kernels all have independent threads.
EMULATED = [
    "saxpy",
    "positive",
    "scatter",
    "histogram",
    "product_histogram",
    "batched_matvec",
    "weighted_gather_rows",
    "windows",
    "fold_rows_per_row",
    "insert_per_row",
    "matrix_per_row",
    "histogram_per_row",
    "summed_histograms_per_row",
    "component_products_per_row",
    "two_rows_of_one_map_per_row",
    "split_rows_per_row",
    "grad_rows_window",
    "sum_of_matrices",
    "histogram_of_rows",
    "sum_count_min_histogram",
    "mixture_per_row",
    "argmin_histogram",
]


# The cases with kernels whose threads synchronize, and the most rows each
# runs at (one block per row: a block of 256 threads emulated per row).
EMULATED_WITH_THREADS = {
    "sum": 1003,
    "sum_of_squares": 1003,
    "argmin": 1003,
    "cumsum": 1003,
    "recurrence": 1003,
    "gather_squares": 1003,
    "grad_sum_of_squares": 1003,
    "grad_gather_squares": 1003,
    "grad_matvec": 1003,
    "grad_matmul": 1003,
    "matmul": 1003,
    "matmul_wide": 200,
    "grad_mixture_per_row": 40,
    "matvec": 40,
    "row_cumsum": 40,
    "softmax_rows": 40,
    "normalise": 1003,
    "normalised_steps": 1003,
    "summed_rows": 1003,
}


@pytest.mark.parametrize("n", SIZES[:4])
@pytest.mark.parametrize("function", EMULATED)
def test_kernels_compute_what_the_interpreter_does(function, n):
    assert_emulated_as_interpreted(function, [n])


@pytest.mark.parametrize("function", sorted(EMULATED_WITH_THREADS))
def test_kernels_whose_threads_synchronize_compute_what_the_interpreter_does(function):
    """Reductions, scans, one block per row: barriers, shuffles and workgroup
    memory between concurrent threads; at n = 1003, 2 folding blocks fold
    about 500 rows each (the carry between tiles of a scan is checked at more
    rows, below)."""
    assert_emulated_as_interpreted(function, [0, 1, 7, EMULATED_WITH_THREADS[function]])


# Scatters and histograms with more than kOneBlockElements (4,096) values
# or bins: the copy of dest and the updates are two launches (the sizes of
# the tests above take one block that copies, waits, then updates).
@pytest.mark.parametrize("function", ["scatter", "histogram", "product_histogram", "histogram_of_rows"])
def test_large_scatters_and_histograms_compute_what_the_interpreter_does(function):
    assert_emulated_as_interpreted(function, [5000])


@pytest.mark.parametrize("function", ["cumsum", "recurrence"])
def test_scans_of_several_tiles_compute_what_the_interpreter_does(function):
    """A scan's rescan takes tiles of 4 x 256 rows (4 consecutive rows per
    thread): at 5,003 rows each of the 2 folding blocks rescans 3 tiles, the
    last one partial, carrying its offset between them (a sum, and a linear
    recurrence whose operator does not commute)."""
    assert_emulated_as_interpreted(function, [5003])


@pytest.mark.parametrize("function", ["matmul", "matmul_wide", "grad_matmul"])
def test_products_on_the_tensor_cores_compute_what_the_interpreter_does(function):
    """Products of float64 by mma.sync m8n8k4 (convert-soac-to-gpu's
    tensor-cores, on by default for sm_80 and later), each warp's
    fragments staged and read back in PTX's layout, which the emulation
    follows: tiles cut at the edges (n or 70 columns of 64), an inner size
    (37) not a multiple of the 4 values of k a product takes, each operand
    read transposed in one of the gradient's products, and the gradient's
    dB (6 x 4 summed over n rows) split among blocks (4 splits at 200 rows).
    The float32 product stays on the ordinary cores."""
    assert_emulated_as_interpreted(function, [0, 1, 7, 200], EmulatedGpu(tensor_cores=True))


@pytest.mark.parametrize("name", ["mlp", "attention"])
def test_adbench_products_on_the_tensor_cores_compute_what_the_cpu_build_does(name):
    """MLP's and attention's gradients, whose products (and the products of
    their adjoints) run on the tensor cores."""
    module = importlib.import_module(name)
    function, args = module.soac_version(*module.inputs(**EMULATED_ADBENCH_SIZES[name]))
    gradient = soac.value_and_grad(function, argnums=tuple(module.WRT))
    jitted = soac.jit(gradient, static_inner_sizes_up_to=tracing.GPU_SMALL_INNER_SIZE)
    assert_emulated_as_on_cpu(jitted, args, True, EmulatedGpu(tensor_cores=True))


def test_sizes_the_host_computes_for_no_rows_do_not_trap():
    """A width divided out of each row's size is computed on the host before
    the launch, also when no row runs it: with no rows and zero parts, the
    host divides by one instead of trapping, and the result has no rows."""
    source, _ = CASES["split_rows_per_row"]
    result = emulated(source, "split_rows_per_row")(np.zeros((0, 12)), 0)
    assert np.asarray(result).shape[0] == 0


def test_fold_blocks_must_be_positive():
    source, _ = CASES["sum"]

    class NoBlocks(EmulatedGpu):
        def pipeline(self) -> str:
            return super().pipeline().replace("fold-blocks=2", "fold-blocks=0")

    with ir.Context(), pytest.raises(soac.LoweringError, match="fold-blocks must be at least 1, not 0"):
        lower(soac.parse(source), options=NoBlocks(), only="sum")


@pytest.mark.parametrize(
    "bound", [tracing.GPU_SMALL_INNER_SIZE, tracing.SMALL_INNER_SIZE], ids=["dynamic-lanes", "static-lanes"]
)
@pytest.mark.parametrize("derivative", [False, True], ids=["primal", "gradient"])
def test_time_loops_compute_what_the_cpu_build_does(derivative, bound):
    """D-LSTM's time loop through the GPU pipeline, emulated: per step,
    reduces folded by one block, the softmax normaliser read by the kernels
    that use it, the running loss carried in a buffer a one-thread kernel
    updates (soac-sink-scalar-reads). Five lanes, dynamic as at ADBench's 14
    in the GPU bundle's traces, and static (the default bound): their splats
    of zeros filled on the GPU."""
    lstm = importlib.import_module("lstm")
    function, args = lstm.soac_version(*lstm.inputs(layers=2, c=6, b=5))
    traced_function = soac.value_and_grad(function, argnums=tuple(lstm.WRT)) if derivative else function
    assert_emulated_as_on_cpu(soac.jit(traced_function, static_inner_sizes_up_to=bound), args, derivative)


def test_gmm_gradient_computes_what_the_cpu_build_does():
    """GMM's gradient through the GPU pipeline, emulated: one thread per
    point whose components (a scalar and a row of products each, read by
    several SOACs) are computed once into scratch memory, and a thread per
    component adding its icf adjoint's stacked reads (flattened rows) into
    one histogram."""
    gmm = importlib.import_module("gmm")
    function, args = gmm.soac_version(*gmm.inputs(d=5, K=3, n=37))
    gradient = soac.value_and_grad(function, argnums=tuple(gmm.WRT))
    assert_emulated_as_on_cpu(soac.jit(gradient, static_inner_sizes_up_to=tracing.GPU_SMALL_INNER_SIZE), args, True)


@pytest.mark.parametrize("size", [dict(n=11, K=5, d=6), dict(n=70, K=3, d=2)], ids=["one-warp", "three-warps"])
def test_rows_a_sum_reads_are_summed_per_warp(size):
    """k-means' gradient: a thread per point yields a K x d row (the
    adjoint of the centroids) and its distance, which reduces (+) sum over
    the points. Each warp sums its lanes' rows by shuffles and writes one
    row (lanes past the last point add zeros); the reduces fold ceil(n /
    32) rows. At 70 points the last of 3 warps has 6 points; at 11, one
    warp has 21 lanes past the last point."""
    kmeans = importlib.import_module("kmeans")
    function, args = kmeans.soac_version(*kmeans.inputs(**size))
    gradient = soac.value_and_grad(function, argnums=tuple(kmeans.WRT))
    assert_emulated_as_on_cpu(soac.jit(gradient, static_inner_sizes_up_to=tracing.GPU_SMALL_INNER_SIZE), args, True)


@pytest.mark.parametrize("function", sorted(CASES))
def test_flattened_kernels_compute_what_the_interpreter_does(function):
    """Every GPU program of the suite with nested parallelism flattened
    first (GpuOptions(flatten=True)), at a few rows."""
    assert_emulated_as_interpreted(function, [0, 1, 7], EmulatedGpu(flatten=True))


# ADBench's programs at sizes the emulation runs quickly, their inner sizes
# over the bound of static ones (dynamic, as in the GPU bundle's traces).
EMULATED_ADBENCH_SIZES = {
    "gmm": dict(d=5, K=6, n=37),
    "lstm": dict(layers=2, c=6, b=5),
    "ba": dict(n=3, m=5, p=9),
    "hand": dict(npts=7, nverts=9),
    "kmeans": dict(n=11, K=5, d=6),
    "mlp": dict(batch=5, inputs=6, hidden=7, outputs=5),
    "attention": dict(n=6, d=5),
}


@pytest.mark.parametrize("derivative", [False, True], ids=["primal", "gradient"])
@pytest.mark.parametrize("name", sorted(EMULATED_ADBENCH_SIZES))
def test_flattened_adbench_computes_what_the_cpu_build_does(name, derivative):
    """Each ADBench program with nested parallelism flattened first
    (GpuOptions(flatten=True), as ``build.py --flatten`` compiles them).
    GMM's gradient has reduces combining matrices, whose operators
    soac-flatten leaves for the lowering to combine element by element, and
    a per-point body it distributes across per-point matrices of dynamic
    inner size (x - mu_k)."""
    module = importlib.import_module(name)
    function, args = module.soac_version(*module.inputs(**EMULATED_ADBENCH_SIZES[name]))
    traced_function = soac.value_and_grad(function, argnums=tuple(module.WRT)) if derivative else function
    jitted = soac.jit(traced_function, static_inner_sizes_up_to=tracing.GPU_SMALL_INNER_SIZE)
    assert_emulated_as_on_cpu(jitted, args, derivative, EmulatedGpu(flatten=True))


def assert_emulated_as_interpreted(function: str, sizes: list[int], options: EmulatedGpu | None = None) -> None:
    """The suite program ``function``, emulated, at each of ``sizes`` rows,
    against the reference interpreter."""
    source, make_args = CASES[function]
    compiled = emulated(source, function, options)
    for n in sizes:
        args = make_args(n)
        assert_same_results(compiled(*args), interpreted(source, function, args), n)


def assert_emulated_as_on_cpu(jitted, args, derivative: bool, options: EmulatedGpu | None = None) -> None:
    expected = jitted(*args)
    expected = (expected[0], *expected[1]) if derivative else (expected,)
    traced = jitted.trace(*args)
    with traced.module.context:
        entry = signature(traced.name, public_functions(traced.module)[traced.name])
        lowered = lower(traced.module, options=options or EmulatedGpu(), only=traced.name)
        actual = jit.jit(lowered, [entry], openmp=True)[traced.name](*args)
    actual = actual if isinstance(actual, tuple) else (actual,)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-15)
