"""soac.compile's runtime: argument checks, caching, memory ownership, errors,
shared libraries and their standalone loader, and soac-opt reproducing Python."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from mlir import ir

import soac

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
# @saxpy (and the rest of the library), plus a function with several results.
PROGRAMS = (EXAMPLES / "soacs.mlir").read_text() + """
func.func @stats(%m: tensor<4x?xf64>) -> (f64, tensor<4xf64>, i64) {
  %zero = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %rows = soac.map ins(%m : tensor<4x?xf64>) -> tensor<4xf64> {
  ^bb0(%row: tensor<?xf64>):
    %s = soac.reduce ins(%row : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  %total = soac.reduce ins(%rows : tensor<4xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %n = tensor.dim %m, %c1 : tensor<4x?xf64>
  %ni = arith.index_cast %n : index to i64
  return %total, %rows, %ni : f64, tensor<4xf64>, i64
}
"""


def test_several_results_scalars_and_tensors():
    stats = soac.compile(PROGRAMS, "stats")
    m = np.arange(12, dtype=np.float64).reshape(4, 3)
    total, rows, n = stats(m)
    assert total == 66.0 and n == 3 and isinstance(n, np.int64)
    np.testing.assert_array_equal(rows, m.sum(axis=1))


def test_arguments_are_checked():
    saxpy = soac.compile(PROGRAMS, "saxpy")
    x = np.ones(3, np.float32)
    with pytest.raises(soac.Error, match="saxpy takes 3 arguments, got 2"):
        saxpy(1.0, x)
    with pytest.raises(soac.Error, match=r"argument #1 of saxpy must be float32\[\?\]; got dtype float64"):
        saxpy(1.0, np.ones(3), x)
    with pytest.raises(soac.Error, match=r"must be float32\[\?\]; got shape \(3, 1\)"):
        saxpy(1.0, x.reshape(3, 1), x)
    with pytest.raises(soac.Error, match="argument #0 of saxpy is a scalar of dtype float32"):
        saxpy(x, x, x)
    stats = soac.compile(PROGRAMS, "stats")
    with pytest.raises(soac.Error, match=r"must be float64\[4, \?\]; got size 5 in dim 0"):
        stats(np.zeros((5, 3)))


def test_inputs_are_never_written_and_may_be_strided():
    saxpy = soac.compile(PROGRAMS, "saxpy")
    x = np.arange(10, dtype=np.float32)
    y = np.ones(5, np.float32)
    before = x.copy()
    result = saxpy(2.0, x[::2], y)  # a strided view is made contiguous
    np.testing.assert_array_equal(result, 2.0 * x[::2] + 1)
    np.testing.assert_array_equal(x, before)


def test_read_only_empty_and_broadcast_inputs():
    """Arrays numpy will not let ctypes write to (read-only, broadcast) and
    empty ones are passed by address too (the fast path takes writable ones)."""
    saxpy = soac.compile(PROGRAMS, "saxpy")
    x = np.arange(5, dtype=np.float32)
    x.flags.writeable = False
    y = np.broadcast_to(np.float32(1.0), (5,))
    np.testing.assert_array_equal(saxpy(2.0, x, y), 2.0 * x + 1)
    np.testing.assert_array_equal(saxpy(2.0, x, np.ones(5, np.float32)), 2.0 * x + 1)
    empty = np.zeros(0, np.float32)
    assert saxpy(2.0, empty, empty).shape == (0,)
    stats = soac.compile(PROGRAMS, "stats")
    total, rows, n = stats(np.zeros((4, 0)))
    assert total == 0.0 and n == 0
    np.testing.assert_array_equal(rows, np.zeros(4))


def test_operands_of_different_sizes_raise_an_error_naming_the_op():
    # Compiled code checks sizes that only run time knows; a mismatch stops
    # the call (not the process) before anything is read out of bounds, and
    # the next call is unaffected.
    saxpy = soac.compile(PROGRAMS, "saxpy")
    with pytest.raises(soac.runtime.abi.ExecutionError, match="-:10:8: 'soac.map': operands have different outer sizes"):
        saxpy(1.0, np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(soac.Error, match="saxpy: .*different outer sizes"):
        saxpy(1.0, np.ones(5, np.float32), np.ones(2, np.float32))
    np.testing.assert_array_equal(saxpy(2.0, np.ones(3, np.float32), np.ones(3, np.float32)), np.full(3, 3, np.float32))


@pytest.mark.parametrize("threads, rows", [(1, 5), (2, 100_000)])
def test_a_nested_size_mismatch_raises_too(threads, rows):
    @soac.jit
    def scale_rows(x, v):
        return soac.map(lambda row: soac.map(lambda a, b: a * b, row, v), x)

    previous = soac.get_num_threads()
    soac.set_num_threads(threads)
    try:
        with pytest.raises(soac.runtime.abi.ExecutionError, match="'soac.map': operands have different outer sizes"):
            scale_rows(np.ones((rows, 3)), np.ones(4))
        np.testing.assert_array_equal(scale_rows(np.ones((rows, 3)), np.full(3, 2.0)), np.full((rows, 3), 2.0))
    finally:
        soac.set_num_threads(previous)


def test_shared_library_reports_failed_checks(tmp_path):
    written = soac.compile(PROGRAMS, "saxpy", emit="shared-lib", output=tmp_path)
    assert "const char *soac_call_checked(void (*packed)(void **), void **args);" in written.header.read_text()
    library = soac.runtime.abi.load_library(str(written.library))
    with pytest.raises(soac.runtime.abi.ExecutionError, match="operands have different outer sizes"):
        library.saxpy(1.0, np.ones(3, np.float32), np.ones(4, np.float32))
    np.testing.assert_array_equal(library.saxpy(1.0, np.ones(2, np.float32), np.ones(2, np.float32)), [2, 2])


def test_compiled_code_is_cached_by_ir():
    assert soac.compile(PROGRAMS, "saxpy") is soac.compile(PROGRAMS, "saxpy")
    other = soac.compile(PROGRAMS, "saxpy", options=soac.compiler.CpuOptions(num_chunks=8))
    assert other is not soac.compile(PROGRAMS, "saxpy")


def test_results_own_their_memory_rss_stays_flat():
    saxpy = soac.compile(PROGRAMS, "saxpy")
    x = np.ones(100_000, np.float32)  # 400 kB per result: 4 GB if leaked

    def rss_mb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    for _ in range(200):
        saxpy(1.0, x, x)
    before = rss_mb()
    kept = None
    for i in range(10_000):
        result = saxpy(1.0, x, x)
        if i == 5000:
            kept = result[:10]  # a view keeps its buffer alive after the array is gone
    growth = rss_mb() - before
    assert growth < 50, f"RSS grew by {growth:.0f} MB over 10,000 calls"
    np.testing.assert_array_equal(kept, 2.0)


def test_calls_make_no_reference_cycles():
    """A result's buffer goes back as soon as the result is dropped: no call,
    of compiled code or of a jitted function taking and returning pytrees,
    leaves garbage that only Python's cyclic GC would collect (it held every
    result buffer until the GC ran)."""
    import gc

    import soac.numpy as jnp

    saxpy = soac.compile(PROGRAMS, "saxpy")
    x = np.ones(1000, np.float32)
    calls = {
        "compiled": lambda: saxpy(1.0, x, x),
        "jitted, pytrees": soac.jit(lambda p: {"a": p["w"] * 2, "b": (p["w"] + 1, jnp.sum(p["w"]))}),
        "value_and_grad": soac.jit(soac.value_and_grad(lambda p: jnp.sum(p["w"] * p["w"]))),
    }
    for name, call in calls.items():
        run = call if name == "compiled" else (lambda call=call: call({"w": x.astype(np.float64)}))
        run()  # traces and compiles
        # Compiles of earlier tests' functions that finish in the background
        # during the window would leave their own garbage (a failure seen
        # once in the whole suite, never alone).
        soac.wait_for_background_compiles()
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                run()
            assert gc.collect() == 0, name
        finally:
            gc.enable()


def test_lowering_errors_name_the_op_and_location():
    source = """
    func.func @f(%x: f32) -> f32 {
      %r = math.atan2 %x, %x : f32
      return %r : f32
    }
    func.func @g(%x: f32, %t: f32) -> f32 {
      %r:2 = soac.jvp @f(%x, %t) : (f32, f32) -> (f32, f32)
      return %r#1 : f32
    }"""
    with pytest.raises(soac.LoweringError, match=r"-:3:12: error: 'math.atan2' op has no forward-mode derivative rule"):
        soac.compile(source, "g")


def test_only_the_requested_function_and_its_callees_are_compiled():
    source = PROGRAMS + """
    func.func @twice(%x: tensor<?xf32>) -> tensor<?xf32> {
      %two = arith.constant 2.0 : f32
      %r = func.call @saxpy(%two, %x, %x) : (f32, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      return %r : tensor<?xf32>
    }
    func.func @not_lowerable(%x: f32, %s: f32) -> f32 {
      %r:2 = soac.jvp @f(%x, %s) : (f32, f32) -> (f32, f32)
      return %r#1 : f32
    }
    func.func @f(%x: f32) -> f32 {
      return %x : f32
    }"""
    twice = soac.compile(source, "twice")  # @not_lowerable is left out
    np.testing.assert_array_equal(twice(np.arange(3, dtype=np.float32)), [0.0, 3.0, 6.0])


def test_unsupported_argument_types_are_reported():
    source = "func.func @f(%x: tensor<?xcomplex<f32>>) -> tensor<?xcomplex<f32>> { return %x : tensor<?xcomplex<f32>> }"
    with pytest.raises(soac.Error, match=r"argument #0 of @f has type tensor<\?xcomplex<f32>>, which compiled functions cannot pass"):
        soac.compile(source, "f")


def test_bad_requests_are_errors():
    with pytest.raises(soac.Error, match=r"no public function @nope .* it has \['argmax_bins', 'argmin', "):
        soac.compile(PROGRAMS, "nope")
    with pytest.raises(soac.Error, match="unknown target 'tpu'"):
        soac.compile(PROGRAMS, "saxpy", target="tpu")
    with pytest.raises(soac.Error, match='emit="shared-lib" needs an output directory'):
        soac.compile(PROGRAMS, "saxpy", emit="shared-lib")
    with pytest.raises(soac.Error, match="number of threads must be at least 1"):
        soac.set_num_threads(0)


def test_soac_opt_reproduces_the_python_lowering(tmp_path):
    program = tmp_path / "programs.mlir"
    program.write_text(PROGRAMS)
    soac_opt = os.path.join(os.path.dirname(sys.executable), "soac-opt")
    by_tool = subprocess.run(
        [soac_opt, str(program), "--soac-lower-to-cpu=num-chunks=64 openmp=true"], capture_output=True, text=True, check=True
    )
    # A fresh process, as soac-opt is: MLIR numbers the assertion-message
    # globals it creates with a counter that lives as long as the process.
    script = f"import soac\nfrom mlir import ir\nwith ir.Context():\n    print(soac.lower(soac.parse_file({str(program)!r})))"
    by_python = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert by_tool.stdout.strip() == by_python.stdout.strip()


def test_shared_library_runs_without_mlir(tmp_path):
    written = soac.compile(PROGRAMS, "saxpy", emit="shared-lib", output=tmp_path)
    assert written.library.name == "libsaxpy.so" and written.header.exists()
    # Nothing it loads comes from MLIR or LLVM.
    for library in tmp_path.glob("*.so"):
        needed = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
        assert not any(name in needed for name in ("libmlir", "libMLIR", "libLLVM")), (library.name, needed)
    # A fresh interpreter in which importing mlir (or soac) fails.
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["mlir"] = None
        sys.modules["soac"] = None
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import soac_runtime
        lib = soac_runtime.load_library({str(written.library)!r})
        print(lib.saxpy(2.0, np.arange(4, dtype=np.float32), np.ones(4, np.float32)).tolist())
        try:
            lib.saxpy(2.0, np.arange(4), np.ones(4, np.float32))
        except soac_runtime.ArgumentError as error:
            print("ArgumentError:", error)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "[1.0, 3.0, 5.0, 7.0]",
        "ArgumentError: argument #1 of saxpy must be float32[?]; got dtype int64",
    ]


def test_c_program_calls_the_shared_library_through_its_header(tmp_path):
    written = soac.compile(PROGRAMS, "saxpy", emit="shared-lib", output=tmp_path)
    main = tmp_path / "main.c"
    main.write_text(
        textwrap.dedent(
            """
            #include <stdio.h>
            #include <stdlib.h>
            #include "saxpy.h"
            int main(void) {
              float x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
              soac_memref_1d_float32 xd = {x, x, 0, {3}, {1}}, yd = {y, y, 0, {3}, {1}};
              soac_saxpy_results out;
              _mlir_ciface_saxpy(&out, 2.0f, &xd, &yd);
              for (int i = 0; i < out.r0.sizes[0]; ++i) printf("%g ", out.r0.aligned[i]);
              free(out.r0.allocated);
              return 0;
            }
            """
        )
    )
    exe = tmp_path / "main"
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, str(main), "-I", str(tmp_path), str(written.library), f"-Wl,-rpath,{tmp_path}", "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split() == ["12", "24", "36"]


def test_lowered_module_is_a_copy():
    with ir.Context():
        module = soac.parse(PROGRAMS)
        lowered = soac.lower(module)
        assert "soac.map" in str(module) and "llvm.func @_mlir_ciface_saxpy" in str(lowered)


def test_a_buffer_returned_twice_is_freed_once():
    source = """
    func.func @twice(%x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
      %y = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%v: f64):
        %s = arith.mulf %v, %v : f64
        soac.yield %s : f64
      }
      return %y, %y : tensor<?xf64>, tensor<?xf64>
    }"""
    twice = soac.compile(source, "twice")
    for _ in range(50):  # a double free would abort the process
        a, b = twice(np.arange(4.0))
        np.testing.assert_array_equal(a, b)
        del a
        np.testing.assert_array_equal(b, [0.0, 1.0, 4.0, 9.0])


STRIDED = """
func.func @every_other_column(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %h = arith.divui %m, %c2 : index
  %s = tensor.extract_slice %x[0, 0] [%n, %h] [1, 2] : tensor<?x?xf32> to tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}
"""


def test_strided_copies_are_loops(tmp_path):
    # Returning a strided slice copies it into a new buffer: a loop nest
    # (soac-copies-to-loops), not a call of the generic memrefCopy, which
    # walked the strides element by element and took the buffers'
    # descriptors through memory (soac's runtime still defines it, for
    # copies the pass leaves).
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    expected = x[:, 0:6:2]
    np.testing.assert_array_equal(soac.compile(STRIDED, "every_other_column")(x), expected)
    written = soac.compile(STRIDED, "every_other_column", emit="shared-lib", output=tmp_path)
    symbols = subprocess.run(["nm", "-D", "--undefined-only", str(written.library)], capture_output=True, text=True).stdout
    assert "memrefCopy" not in symbols and "_mlir_memref_to_llvm_aligned_alloc" in symbols
    np.testing.assert_array_equal(written.load().every_other_column(x), expected)


def test_large_buffers_freed_by_compiled_code_are_reused():
    """A buffer of 64 KB or more that compiled code frees is kept for its next
    allocation of as much or up to half as much (glibc would give it back to
    the system, and the next call would fault in and zero every page again);
    smaller requests, larger ones and stricter alignments get new memory.
    An allocation takes the smallest kept buffer large enough."""
    import ctypes

    from soac.runtime import native

    runtime = ctypes.CDLL(native.soac_runtime_library())
    alloc, aligned, free = (runtime._mlir_memref_to_llvm_alloc, runtime._mlir_memref_to_llvm_aligned_alloc,
                            runtime._mlir_memref_to_llvm_free)
    alloc.restype = aligned.restype = ctypes.c_void_p
    alloc.argtypes, aligned.argtypes, free.argtypes = [ctypes.c_size_t], [ctypes.c_size_t] * 2, [ctypes.c_void_p]
    mb = 1 << 20

    big = alloc(32 * mb)
    ctypes.memset(big, 7, 32 * mb)
    free(big)
    again = alloc(20 * mb)
    assert again == big  # kept, and large enough
    free(again)
    others = [alloc(8 * mb), alloc(33 * mb)]  # under half of it, larger than it: new memory
    if big % 4096:
        others.append(aligned(4096, 32 * mb))  # a stricter alignment than it has
    assert big not in others
    reused = alloc(32 * mb)  # the kept one stayed kept
    assert reused == big
    for buffer in (reused, *others):
        free(buffer)


def test_an_allocation_takes_the_smallest_kept_buffer_large_enough():
    """In a new process, so that no buffer kept by earlier tests is a
    better fit: the larger buffer is kept first, so a first fit would give
    it to the smaller request, and the larger request would get new memory."""
    script = textwrap.dedent("""
        import ctypes
        from soac.runtime import native
        runtime = ctypes.CDLL(native.soac_runtime_library())
        alloc, free = runtime._mlir_memref_to_llvm_alloc, runtime._mlir_memref_to_llvm_free
        alloc.restype, alloc.argtypes, free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
        size = 40 << 20
        larger, smaller = alloc(size + (1 << 20)), alloc(size)
        free(larger)
        free(smaller)
        assert alloc(size) == smaller, "the smaller request took the larger buffer"
        assert alloc(size + (1 << 20)) == larger, "the larger request got new memory"
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


ROW_TEMPORARIES = """
func.func @rows(%x: tensor<?x3xf64>) -> tensor<?xf64> {
  %c2 = arith.constant 2 : index
  %r = soac.map ins(%x : tensor<?x3xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<3xf64>):
    %squares = soac.map ins(%row : tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%a: f64):
      %s = arith.mulf %a, %a : f64
      soac.yield %s : f64
    }
    %last = tensor.extract %squares[%c2] : tensor<3xf64>
    %sum = soac.reduce ins(%row : tensor<3xf64>) init(%last : f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %t = arith.addf %p, %q : f64
      soac.yield %t : f64
    }
    soac.yield %sum : f64
  }
  return %r : tensor<?xf64>
}
"""


def nested_ops(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner
                yield from nested_ops(inner.operation)


def test_temporaries_of_parallel_rows_are_on_the_stack():
    # Each row's 3-vector of squares is a temporary that the thread running
    # the row needs for itself: on the stack (soac-stack-temporaries), not a
    # malloc and free per row inside the parallel loop.
    lowered = soac.lower(ROW_TEMPORARIES, only="rows")
    loops = [op for op in nested_ops(lowered.operation) if op.operation.name == "omp.wsloop"]
    assert loops
    inside = [inner.operation for loop in loops for inner in nested_ops(loop.operation)]
    assert any(op.name == "llvm.alloca" for op in inside)
    assert not any(op.name == "llvm.call" and "alloc" in str(op.attributes["callee"]) for op in inside)
    x = np.random.default_rng(3).standard_normal((50_001, 3))
    expected = x[:, 2] ** 2 + x.sum(axis=1)
    before = soac.get_num_threads()
    try:
        for count in (1, 2):
            soac.set_num_threads(count)
            np.testing.assert_allclose(soac.compile(ROW_TEMPORARIES, "rows")(x), expected, rtol=1e-12, atol=1e-12)
    finally:
        soac.set_num_threads(before)
