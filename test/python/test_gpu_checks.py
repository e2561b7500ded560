"""Run-time checks inside GPU kernels, checked without a GPU: the kernels of
the GPU pipeline, their checks lowered as for the GPU
(soac-lower-kernel-checks) and their launches emulated on the CPU. A thread
whose check fails records it and skips what the check guards; the call
stops after the launch with the same error a CPU call raises (the index, the
size, the op's location), and the next call runs as if nothing happened.
Kernels whose threads synchronize (reductions, one block per row) must not
hang when some of their threads fail. GPU calls go through the runtime's
checked calls like CPU calls: a failed host check, or a failure of the CUDA
driver (here a stand-in whose launches fail), raises and frees the call's
buffers instead of aborting the process.

What the GPU pipeline itself emits for them (the failure record passed to
the kernel, the report after the launch) is checked by test_compile_gpu.py
and the lit tests of the pass; the GPU bundle runs the same programs on a
GPU (tools/gpu_bundle: the programs ``failure/*``, the runs of
gpu_programs.checked_runs, which are checked here too)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from soac.runtime.abi import IndexOutOfRangeError

from gpu_programs import CHECKED_GATHERS, checked_runs, emulated
from conftest import run_on_stand_in_driver

rng = np.random.default_rng(3)


@pytest.fixture(scope="module")
def compiled():
    return {name: emulated(CHECKED_GATHERS, name) for name in ("gather", "gathered_sum", "gathered_row_sums", "gathered_summed_rows")}


@pytest.mark.parametrize("bad", [10, 11, 2**40, -1])
def test_a_thread_kernel_stops_the_call_with_the_index_and_the_size(compiled, bad):
    x = rng.random(10)
    idx = rng.integers(0, 10, 1000)
    idx[700] = bad
    shown = bad if bad >= 0 else 2**64 + bad  # an index is unsigned
    with pytest.raises(IndexOutOfRangeError, match=rf"gather: .*'tensor.extract' dimension 0: index (-1|{shown}) is out of range for size 10"):
        compiled["gather"](x, idx)
    idx[700] = 3
    np.testing.assert_array_equal(compiled["gather"](x, idx), x[idx] ** 2)


def test_the_first_failure_is_reported_and_the_next_call_is_clean(compiled):
    """Many threads fail at once: one failure is reported (its index is one
    of theirs), and the record is cleared for the next call."""
    x = rng.random(10)
    idx = np.full(5000, 12)
    idx[::2] = 13
    with pytest.raises(IndexOutOfRangeError, match=r"index 1[23] is out of range for size 10"):
        compiled["gather"](x, idx)
    good = rng.integers(0, 10, 5000)
    np.testing.assert_array_equal(compiled["gather"](x, good), x[good] ** 2)


@pytest.mark.parametrize("n", [1, 300, 1003])
def test_a_reduction_whose_threads_synchronize_stops_without_hanging(compiled, n):
    """The gather is fused into the reduction's kernel, whose threads meet at
    barriers and shuffles: a thread that failed skips its read, not them."""
    x = rng.random(50)
    idx = rng.integers(0, 50, n)
    np.testing.assert_allclose(compiled["gathered_sum"](x, idx), x[idx].sum(), rtol=1e-12)
    idx[n // 2] = 50
    with pytest.raises(IndexOutOfRangeError, match=r"index 50 is out of range for size 50"):
        compiled["gathered_sum"](x, idx)


def test_a_block_per_row_kernel_stops_without_hanging(compiled):
    x = rng.random(30)
    idx = rng.integers(0, 30, (40, 300))
    np.testing.assert_allclose(compiled["gathered_row_sums"](x, idx), x[idx].sum(axis=1), rtol=1e-12)
    idx[17, 123] = 31
    with pytest.raises(IndexOutOfRangeError, match=r"index 31 is out of range for size 30"):
        compiled["gathered_row_sums"](x, idx)
    idx[17, 123] = 0
    np.testing.assert_allclose(compiled["gathered_row_sums"](x, idx), x[idx].sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 70, 1003])
def test_a_thread_kernel_whose_rows_a_sum_reads_stops_without_hanging(compiled, n):
    """Rows a sum reads are summed per warp by shuffles only in kernels
    without checks: here the gather is checked, so a thread whose index is
    out of range records it and skips its row, and no warp waits for it."""
    x = rng.random(50)
    idx = rng.integers(0, 50, n)
    expected = np.outer(x[:3], x[3:7]) * x[idx].sum()
    np.testing.assert_allclose(compiled["gathered_summed_rows"](x, idx), expected, rtol=1e-12)
    idx[n // 2] = 50
    with pytest.raises(IndexOutOfRangeError, match=r"index 50 is out of range for size 50"):
        compiled["gathered_summed_rows"](x, idx)


@pytest.mark.parametrize("function", ["gather", "gathered_sum", "gathered_row_sums"])
def test_the_bundles_failing_runs(compiled, function):
    """What the GPU bundle expects of these programs on a GPU, here."""
    for label, args, error in checked_runs(function):
        if error is None:
            compiled[function](*args)
            continue
        with pytest.raises(IndexOutOfRangeError, match=error):
            compiled[function](*args)


# A child process against the stand-in driver (host memory; every launch
# fails): GPU code's host checks and the driver's failures raise, the next
# call runs, and 3,000 failed calls leak nothing (their buffers are freed
# through the runtime's soac_gpu_free; MALLOC_CHECK_ catches a double free).
STAND_IN_CALLS = textwrap.dedent('''
    import resource
    import numpy as np
    import soac
    from soac.compiler import GpuOptions
    from soac.runtime.abi import DeviceError, IndexOutOfRangeError

    SOURCE = """
    func.func @pick(%x: tensor<?xf32>, %i: index) -> f32 {
      %v = tensor.extract %x[%i] : tensor<?xf32>
      return %v : f32
    }
    func.func @doubled(%x: tensor<?xf32>) -> tensor<?xf32> {
      %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%v: f32):
        %w = arith.addf %v, %v : f32
        soac.yield %w : f32
      }
      return %r : tensor<?xf32>
    }
    """

    def rss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    x = np.arange(5, dtype=np.float32)
    for device_memory in (False, True):
        options = GpuOptions(device_memory=device_memory)
        pick = soac.compile(SOURCE, "pick", target="gpu", options=options)
        doubled = soac.compile(SOURCE, "doubled", target="gpu", options=options)
        assert pick(x, 3) == 3.0
        try:
            pick(x, 7)
        except IndexOutOfRangeError as error:
            assert "'tensor.extract' dimension 0: index 7 is out of range for size 5" in str(error), error
        else:
            raise AssertionError("pick(x, 7) returned")
        try:
            doubled(x)
        except DeviceError as error:
            assert "cuLaunchKernel failed: CUDA_ERROR_NOT_SUPPORTED" in str(error), error
        else:
            raise AssertionError("a failed launch returned")
        assert pick(x, 4) == 4.0
        big = np.ones(100_000, np.float32)  # 400 KB of result per failed call
        for _ in range(200):
            try:
                doubled(big)
            except DeviceError:
                pass
        before = rss_mb()
        for _ in range(3000):
            try:
                doubled(big)
            except DeviceError:
                pass
        grown = rss_mb() - before
        assert grown < 64, f"RSS grew by {grown:.0f} MB over 3,000 failed calls"
    print("failures passed")
''')


def test_gpu_calls_raise_and_free_instead_of_aborting(fake_cuda_driver, tmp_path):
    run_on_stand_in_driver(fake_cuda_driver, tmp_path, STAND_IN_CALLS, "failures passed")
