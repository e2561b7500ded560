"""Run-time checks of compiled CPU code: no index or size, however wrong,
makes a call read or write outside its buffers, crash or leak. A failed check
raises a soac.Error naming the op's location (and, for an index, the index
and the size), on the calling thread and inside parallel loops alike, and the
call frees everything it had allocated."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

import soac
from soac.runtime.abi import ExecutionError, IndexOutOfRangeError, OutOfMemoryError

PROGRAMS = """
func.func @gather(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> tensor<?xf64> {
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    soac.yield %v : f64
  }
  return %r : tensor<?xf64>
}

func.func @gather_rows(%x: tensor<?x?xf64>, %idx: tensor<?xindex>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i, %c0] : tensor<?x?xf64>
    soac.yield %v : f64
  }
  return %r : tensor<?xf64>
}

func.func @window(%x: tensor<?xf64>, %offset: index, %size: index) -> tensor<?xf64> {
  %w = tensor.extract_slice %x[%offset] [%size] [1] : tensor<?xf64> to tensor<?xf64>
  return %w : tensor<?xf64>
}

func.func @set(%x: tensor<?xf64>, %i: index, %v: f64) -> tensor<?xf64> {
  %r = tensor.insert %v into %x[%i] : tensor<?xf64>
  return %r : tensor<?xf64>
}

func.func @count(%n: index) -> tensor<?xindex> {
  %r = soac.iota %n : tensor<?xindex>
  return %r : tensor<?xindex>
}

func.func @outer(%n: index, %m: index) -> tensor<?x?xf32> {
  %one = arith.constant 1.0 : f32
  %r = tensor.splat %one[%n, %m] : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @matvec(%a: tensor<?x?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%a : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %p = soac.map ins(%row, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%x: f64, %y: f64):
      %m = arith.mulf %x, %y : f64
      soac.yield %m : f64
    }
    %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%acc: f64, %e: f64):
      %t = arith.addf %acc, %e : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}

func.func @argmax_bins(%best: tensor<?xf64>, %where: tensor<?xi64>, %idx: tensor<?xi64>, %x: tensor<?xf64>, %pos: tensor<?xi64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %none = arith.constant -1 : i64
  %r:2 = soac.reduce_by_index dest(%best, %where : tensor<?xf64>, tensor<?xi64>) indices(%idx : tensor<?xi64>) ins(%x, %pos : tensor<?xf64>, tensor<?xi64>) init(%ninf, %none : f64, i64) -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%a: f64, %ai: i64, %b: f64, %bi: i64):
    %gt = arith.cmpf ogt, %b, %a : f64
    %m = arith.select %gt, %b, %a : f64
    %mi = arith.select %gt, %bi, %ai : i64
    soac.yield %m, %mi : f64, i64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi64>
}

func.func @row_histogram(%bins: tensor<?x?xf64>, %idx: tensor<?xindex>, %rows: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %m = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %width = tensor.dim %bins, %c1 : tensor<?x?xf64>
  %init = tensor.splat %zero[%width] : tensor<?xf64>
  %r = soac.reduce_by_index dest(%bins : tensor<?x?xf64>) indices(%idx : tensor<?xindex>) ins(%rows : tensor<?x?xf64>) init(%init : tensor<?xf64>) -> tensor<?x?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
    %s = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %t = arith.addf %u, %v : f64
      soac.yield %t : f64
    }
    soac.yield %s : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// Row i is iota(sizes[i]): rows of data-dependent sizes, which arrays
// cannot hold.
func.func @ragged(%sizes: tensor<?xindex>) -> tensor<?x?xindex> {
  %r = soac.map ins(%sizes : tensor<?xindex>) -> tensor<?x?xindex> {
  ^bb0(%n: index):
    %row = soac.iota %n : tensor<?xindex>
    soac.yield %row : tensor<?xindex>
  }
  return %r : tensor<?x?xindex>
}

func.func @gather_sum(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> f64 {
  %g = call @gather(%x, %idx) : (tensor<?xf64>, tensor<?xindex>) -> tensor<?xf64>
  %zero = arith.constant 0.0 : f64
  %s = soac.reduce ins(%g : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %s : f64
}

func.func @gather_grad(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> tensor<?xf64> {
  %one = arith.constant 1.0 : f64
  %r:2 = soac.vjp @gather_sum(%x, %idx, %one) wrt [0]
      : (tensor<?xf64>, tensor<?xindex>, f64) -> (f64, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}
"""

X = np.arange(10.0)


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    previous = soac.get_num_threads()
    soac.set_num_threads(request.param)
    yield request.param
    soac.set_num_threads(previous)


def compiled(name: str, **options) -> soac.runtime.abi.CompiledFunction:
    return soac.compile(PROGRAMS, name, options=soac.compiler.CpuOptions(**options))


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


@pytest.mark.parametrize("bad", [10, 11, 2**30, 2**62, -1, -(2**40)])
def test_a_gather_out_of_range_raises_with_the_index_and_the_size(bad):
    gather = compiled("gather")
    np.testing.assert_array_equal(gather(X, np.array([0, 9, 3], np.intp)), [0, 9, 3])
    with pytest.raises(IndexOutOfRangeError, match=rf"-:5:10: 'tensor.extract' dimension 0: index {bad} is out of range for size 10"):
        gather(X, np.array([1, bad, 2], np.intp))


def test_a_gather_out_of_range_in_a_parallel_loop_raises(threads):
    # 2^20 rows: the map runs as a parallel loop on two threads; the
    # worker that fails records it, skips the read, and the call stops after.
    gather = compiled("gather")
    idx = np.zeros(2**20, np.intp)
    idx[777_777] = 12
    with pytest.raises(IndexOutOfRangeError, match="index 12 is out of range for size 10"):
        gather(X, idx)
    idx[777_777] = 9
    assert gather(X, idx).sum() == 9


def test_without_openmp_a_parallel_loop_stops_the_call_too():
    gather = compiled("gather", openmp=False)
    idx = np.zeros(2**16, np.intp)
    idx[5] = -3
    with pytest.raises(IndexOutOfRangeError, match="index -3 is out of range for size 10"):
        gather(X, idx)


def test_every_dimension_of_a_gather_is_checked():
    gather_rows = compiled("gather_rows")
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(gather_rows(x, np.array([2, 0], np.intp)), [4, 0])
    with pytest.raises(IndexOutOfRangeError, match="'tensor.extract' dimension 0: index 3 is out of range for size 3"):
        gather_rows(x, np.array([3], np.intp))
    with pytest.raises(IndexOutOfRangeError, match="'tensor.extract' dimension 1: index 0 is out of range for size 0"):
        gather_rows(np.zeros((3, 0)), np.array([0], np.intp))


@pytest.mark.parametrize(
    ("offset", "size", "fits"),
    [(0, 10, True), (10, 0, True), (3, 7, True), (3, 8, False), (11, 0, False), (-1, 2, False), (2, -1, False), (2**62, 2, False)],
)
def test_slices_must_fit(offset, size, fits):
    window = compiled("window")
    if fits:
        np.testing.assert_array_equal(window(X, offset, size), X[offset : offset + size])
        return
    with pytest.raises(IndexOutOfRangeError, match="'tensor.extract_slice' dimension 0 \\(the offsets at which the slice fits\\)"):
        window(X, offset, size)


def test_writes_are_checked():
    set_ = compiled("set")
    np.testing.assert_array_equal(set_(X, 9, -1.0), [*range(9), -1.0])
    with pytest.raises(IndexOutOfRangeError, match="'tensor.insert' dimension 0: index 10 is out of range for size 10"):
        set_(X, 10, -1.0)


def test_the_gradient_of_a_gather_is_checked():
    grad = compiled("gather_grad")
    np.testing.assert_array_equal(grad(X, np.array([1, 1, 4], np.intp)), [0, 2, 0, 0, 1, 0, 0, 0, 0, 0])
    with pytest.raises(IndexOutOfRangeError, match="index 10 is out of range for size 10"):
        grad(X, np.array([1, 10], np.intp))


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("count", (2**61 + 1,), "its size in bytes overflows"),
        ("count", (-1,), "its size in bytes overflows"),
        ("count", (2**40,), r"\(8796093022208 bytes\): out of memory"),
        ("outer", (2**33, 2**31), "its size in bytes overflows"),
    ],
)
def test_sizes_too_large_to_allocate_raise_memory_errors(name, args, message):
    function = compiled(name)
    with pytest.raises(OutOfMemoryError, match=f"cannot allocate memref<[?x]*(index|f32)>:? ?{message}") as raised:
        function(*args)
    assert isinstance(raised.value, MemoryError)
    np.testing.assert_array_equal(compiled("count")(3), [0, 1, 2])


def test_a_size_mismatch_inside_a_parallel_loop_raises(threads):
    matvec = compiled("matvec")
    with pytest.raises(ExecutionError, match="-:51:10: 'soac.reduce': operands have different outer sizes"):
        matvec(np.ones((256, 4)), np.ones(3))
    np.testing.assert_array_equal(matvec(np.ones((256, 4)), np.ones(4)), np.full(256, 4.0))


def test_failed_calls_leak_nothing(threads):
    """10,000 failing calls: before checked calls freed what they allocated,
    each leaked its temporaries (about 96 KB for this matvec)."""
    matvec, gather = compiled("matvec"), compiled("gather")
    a, v = np.ones((512, 16)), np.ones(15)
    idx = np.zeros(4096, np.intp)
    idx[-1] = 10

    def fail_many(count: int) -> None:
        for k in range(count):
            with pytest.raises(ExecutionError):
                matvec(a, v) if k % 2 else gather(X, idx)

    fail_many(1_000)
    before = rss_mb()
    fail_many(10_000)
    assert rss_mb() - before < 16


def test_histogram_destinations_of_different_sizes_raise():
    argmax_bins = compiled("argmax_bins")
    idx, x, pos = np.array([4, 4, 3]), np.array([1.0, 2.0, 3.0]), np.array([0, 1, 2])
    best, where = argmax_bins(np.full(5, -np.inf), np.full(5, -1), idx, x, pos)
    np.testing.assert_array_equal(where, [-1, -1, -1, 2, 1])
    with pytest.raises(ExecutionError, match="destinations have different outer sizes"):
        argmax_bins(np.zeros(5), np.zeros(2, np.int64), idx, x, pos)


def test_rows_must_fit_the_rows_of_their_destination(threads):
    row_histogram = compiled("row_histogram")
    bins = row_histogram(np.zeros((3, 2)), np.array([2, 2], np.intp), np.ones((2, 2)))
    np.testing.assert_array_equal(bins, [[0, 0], [0, 0], [2, 2]])
    with pytest.raises(ExecutionError, match="operands have different outer sizes|rows of different sizes"):
        row_histogram(np.zeros((3, 2)), np.array([2, 2], np.intp), np.ones((2, 5)))
    ragged = compiled("ragged")
    np.testing.assert_array_equal(ragged(np.array([2, 2], np.intp)), [[0, 1], [0, 1]])
    for sizes in ([2, 3], [2, 1], [0, 2**40], [1] * 70_000 + [2]):
        with pytest.raises(ExecutionError, match="rows of different sizes"):
            ragged(np.array(sizes, np.intp))


def test_the_checks_can_be_left_out():
    checked = soac.lower(PROGRAMS, options=soac.compiler.CpuOptions(), only="gather")
    unchecked = soac.lower(PROGRAMS, options=soac.compiler.CpuOptions(check_indices=False), only="gather")
    assert "out of range" in str(checked)
    assert "out of range" not in str(unchecked)
    np.testing.assert_array_equal(compiled("gather", check_indices=False)(X, np.array([2], np.intp)), [2])


def test_shared_libraries_raise_the_same_errors(tmp_path):
    written = soac.compile(PROGRAMS, "gather", emit="shared-lib", output=tmp_path)
    library = soac.runtime.abi.load_library(str(written.library))
    with pytest.raises(IndexOutOfRangeError, match="index 10 is out of range for size 10"):
        library.gather(X, np.array([10], np.intp))
    np.testing.assert_array_equal(library.gather(X, np.array([4], np.intp)), [4])


def test_traced_gathers_name_the_users_line():
    @soac.jit
    def pick(x, idx):
        return soac.map(lambda i: x[i], idx)

    np.testing.assert_array_equal(pick(X, np.array([3, 1], np.intp)), [3, 1])
    with pytest.raises(IndexOutOfRangeError, match=r"test_checks\.py:\d+:\d+: .*index 10 is out of range for size 10"):
        pick(X, np.array([3, 10], np.intp))


def test_the_interpreter_agrees():
    with ir.Context():
        module = soac.parse(PROGRAMS)
        with pytest.raises(soac.Error, match=r"index \[10\] out of bounds for shape \[10\]"):
            soac.interpret(module, "gather", X, np.array([10], np.intp))
