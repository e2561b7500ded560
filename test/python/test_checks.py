"""Run-time checks of compiled CPU code: no index or size, however wrong,
makes a call read or write outside its buffers, crash or leak. A failed check
raises a soac.Error naming the op's location (and, for an index, the index
and the size), on the calling thread and inside parallel loops alike, and the
call frees everything it had allocated."""

from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
import pytest
from mlir import ir

import soac
import soac.numpy as snp
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

// A map computed in the slice it is inserted into (sliceComputedIn): a slice
// of another size than the map's must fail before any row is written.
func.func @exp_into(%x: tensor<?xf64>, %dest: tensor<?xf64>, %offset: index, %size: index) -> tensor<?xf64> {
  %m = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %e = math.exp %a : f64
    soac.yield %e : f64
  }
  %r = tensor.insert_slice %m into %dest[%offset] [%size] [1] : tensor<?xf64> into tensor<?xf64>
  return %r : tensor<?xf64>
}
"""

# Ops that take sizes on trust: soac-check-indices checks them.
SIZES = """
func.func @split(%x: tensor<?xf64>, %a: index, %b: index) -> tensor<?x?xf64> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%a, %b] : tensor<?xf64> into tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

func.func @fixed(%x: tensor<?xf64>) -> tensor<4xf64> {
  %r = tensor.cast %x : tensor<?xf64> to tensor<4xf64>
  return %r : tensor<4xf64>
}

func.func @shaped(%x: tensor<?x?xf64>, %shape: tensor<2xindex>) -> tensor<?x?xf64> {
  %r = tensor.reshape %x(%shape) : (tensor<?x?xf64>, tensor<2xindex>) -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

func.func @put_row(%dest: tensor<?x?xf64>, %row: tensor<?xf64>, %i: index) -> tensor<?x?xf64> {
  %c1 = arith.constant 1 : index
  %m = tensor.dim %dest, %c1 : tensor<?x?xf64>
  %r = tensor.insert_slice %row into %dest[%i, 0] [1, %m] [1, 1] : tensor<?xf64> into tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

func.func @joined(%x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<6xf64> {
  %r = tensor.concat dim(0) %x, %y : (tensor<?xf64>, tensor<?xf64>) -> tensor<6xf64>
  return %r : tensor<6xf64>
}

// Each row cast to 2 elements: a check per row, in a parallel loop for
// many rows.
func.func @pairs(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %pair = tensor.cast %row : tensor<?xf64> to tensor<2xf64>
    %s = soac.reduce ins(%pair : tensor<2xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
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


@pytest.mark.parametrize(("n", "offset", "size"), [(20_000, 3, 20_000), (20_000, 3, 5), (20_000, 3, 20_005), (20_000, 50, 20_000)])
def test_a_map_computed_in_its_slice_fits_it(threads, n, offset, size):
    """Large enough for the parallel loop too: both write into the slice."""
    exp_into = compiled("exp_into")
    x, dest = np.linspace(-1.0, 1.0, n), np.full(n + 10, 7.0)
    if offset + size <= dest.size and size == n:
        expected = dest.copy()
        expected[offset : offset + size] = np.exp(x)
        np.testing.assert_allclose(exp_into(x, dest, offset, size), expected)
        np.testing.assert_array_equal(dest, 7.0)  # the argument is not written
        return
    with pytest.raises(soac.Error, match="tensor.insert_slice"):
        exp_into(x, dest, offset, size)


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
    # Rows too small for threads, then enough rows for the parallel loop;
    # a row far longer than its slot (2^40) was written past it there.
    for sizes in ([2, 3], [2, 1], [0, 2**40], [1] * 70_000 + [2], [1] * 70_000 + [2**40]):
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


def sized(name: str, **options) -> soac.runtime.abi.CompiledFunction:
    return soac.compile(SIZES, name, options=soac.compiler.CpuOptions(**options))


def interpreted(name: str, *args):
    with ir.Context():
        return soac.interpret(soac.parse(SIZES), name, *args)


def raises_as_compiled_and_interpreted(name: str, args: tuple, message: str) -> None:
    """The compiled function raises an ExecutionError (not an index error)
    whose message names the op and the sizes, and the interpreter raises a
    soac.Error with the same message."""
    with pytest.raises(ExecutionError, match=rf"^{name}: -:\d+:\d+: {message}$") as raised:
        sized(name)(*args)
    assert type(raised.value) is ExecutionError
    with pytest.raises(soac.Error, match=rf"^-:\d+:\d+: {message}$"):
        interpreted(name, *args)


TWELVE = np.arange(12.0)


@pytest.mark.parametrize(("a", "b"), [(3, 4), (12, 1), (1, 12)])
def test_expand_shape_sizes_that_fit_give_numpys_reshape(a, b):
    np.testing.assert_array_equal(sized("split")(TWELVE, a, b), TWELVE.reshape(a, b))
    np.testing.assert_array_equal(interpreted("split", TWELVE, a, b), TWELVE.reshape(a, b))


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (5, 4, "the sizes of group 0 multiply to 20, but the source has 12"),
        (3, 3, "the sizes of group 0 multiply to 9, but the source has 12"),
        (0, 5, "the sizes of group 0 multiply to 0, but the source has 12"),
        (-3, -4, "one of the sizes of group 0 is negative, or their product overflows"),
        (-1, 12, "one of the sizes of group 0 is negative, or their product overflows"),
        (2**62, 4, "one of the sizes of group 0 is negative, or their product overflows"),
        (2**32, 2**32 + 12, "one of the sizes of group 0 is negative, or their product overflows"),
    ],
)
def test_expand_shape_sizes_that_do_not_fit_raise(a, b, message):
    raises_as_compiled_and_interpreted("split", (TWELVE, a, b), rf"'tensor\.expand_shape': {message}")


def test_empty_tensors_expand_into_any_empty_shape():
    # A map without rows has rows of size 0: soac's own code expands such
    # tensors into empty shapes of other sizes, as numpy reshapes them.
    for a, b in [(0, 5), (7, 0), (0, 0)]:
        assert sized("split")(np.zeros(0), a, b).shape == (a, b)
        assert interpreted("split", np.zeros(0), a, b).shape == (a, b)
    raises_as_compiled_and_interpreted("split", (np.zeros(0), 2, 3), r"'tensor\.expand_shape': the sizes of group 0 multiply to 6, but the source has 0")


@pytest.mark.parametrize("n", [3, 5, 0])
def test_a_cast_to_a_static_size_must_have_it(n):
    np.testing.assert_array_equal(sized("fixed")(np.arange(4.0)), np.arange(4.0))
    raises_as_compiled_and_interpreted(
        "fixed", (np.arange(float(n)),), rf"'tensor\.cast': dimension 0 of the source has size {n}, but the result type has 4"
    )


def test_a_cast_in_a_parallel_loop_raises(threads):
    pairs = sized("pairs")
    np.testing.assert_array_equal(pairs(np.ones((2**16, 2))), np.full(2**16, 2.0))
    with pytest.raises(ExecutionError, match="'tensor.cast': dimension 0 of the source has size 3, but the result type has 2"):
        pairs(np.ones((2**16, 3)))
    assert pairs(np.ones((0, 3))).shape == (0,)  # no rows, nothing read


def test_a_reshape_must_keep_the_number_of_elements():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(sized("shaped")(x, np.array([2, 6], np.intp)), x.reshape(2, 6))
    np.testing.assert_array_equal(interpreted("shaped", x, np.array([2, 6], np.intp)), x.reshape(2, 6))
    raises_as_compiled_and_interpreted(
        "shaped", (x, np.array([5, 3], np.intp)), r"'tensor\.reshape': the shape's sizes multiply to 15, but the source has 12 elements"
    )
    raises_as_compiled_and_interpreted(
        "shaped", (x, np.array([-2, -6], np.intp)), r"'tensor\.reshape': one of the shape's sizes is negative, or their product overflows"
    )


def test_a_slice_written_must_have_the_sources_sizes():
    dest = np.zeros((3, 4))
    expected = dest.copy()
    expected[1] = np.arange(4.0)
    np.testing.assert_array_equal(sized("put_row")(dest, np.arange(4.0), 1), expected)
    for size in (6, 2):
        raises_as_compiled_and_interpreted(
            "put_row", (dest, np.arange(float(size)), 1),
            rf"'tensor\.insert_slice': dimension 0 of the source has size {size}, but the slice has 4",
        )


def test_concatenated_inputs_must_add_up_to_the_static_size():
    np.testing.assert_array_equal(sized("joined")(np.arange(2.0), np.arange(4.0)), [0, 1, 0, 1, 2, 3])
    np.testing.assert_array_equal(interpreted("joined", np.arange(2.0), np.arange(4.0)), [0, 1, 0, 1, 2, 3])
    raises_as_compiled_and_interpreted(
        "joined", (np.arange(3.0), np.arange(5.0)), r"'tensor\.concat': the inputs' sizes in dimension 0 add up to 8, but the result has 6"
    )


SIZE_CHECKS = re.compile(r"'tensor\.\w+': (one of|the sizes|the shape|dimension \d+ of the|input \d+|the inputs)")


def test_the_size_checks_can_be_left_out():
    checked = str(soac.lower(SIZES, options=soac.compiler.CpuOptions(), only="split"))
    unchecked = str(soac.lower(SIZES, options=soac.compiler.CpuOptions(check_indices=False), only="split"))
    assert SIZE_CHECKS.search(checked)
    assert not SIZE_CHECKS.search(unchecked)
    np.testing.assert_array_equal(sized("split", check_indices=False)(TWELVE, 4, 3), TWELVE.reshape(4, 3))


def _gmm_gradient():
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "adbench"))
    import gmm

    function, args = gmm.soac_version(*gmm.inputs(**gmm.TINY))
    return soac.value_and_grad(function, argnums=tuple(gmm.WRT)), args


@pytest.mark.parametrize(
    "program",
    [
        pytest.param(lambda: (soac.grad(lambda x: snp.reshape(x, (3, -1)).sum()), (TWELVE,)), id="reshape"),
        pytest.param(lambda: (soac.grad(lambda x: (x.sum(axis=2) ** 2).sum()), (np.ones((2, 3, 4)),)), id="sum over an inner axis"),
        pytest.param(lambda: (soac.grad(lambda x: (snp.expand_dims(x, 1) * 2).sum()), (np.ones((2, 3)),)), id="expand_dims"),
        pytest.param(lambda: (soac.grad(lambda x: (x[:, None, :] * x[None, :, :]).sum()), (np.ones((2, 3)),)), id="None"),
        pytest.param(lambda: (soac.grad(lambda x: snp.squeeze(x[:, 0:1]).sum()), (np.ones((2, 3)),)), id="squeeze"),
        pytest.param(lambda: (soac.grad(lambda x: soac.vmap(lambda r: snp.reshape(r, (2, 2)).sum(axis=0))(x).sum()), (np.ones((3, 4)),)),
                     id="vmap of reshape"),
        pytest.param(_gmm_gradient, id="GMM gradient"),
    ],
)
def test_soacs_own_reshapes_need_no_size_checks(program):
    """What soac generates is consistent by construction: its reshapes and
    their derivatives leave no size check in the lowered code (each would be
    a compare and a branch per run of the op)."""
    function, args = program()
    function(*args)
    assert not SIZE_CHECKS.search(function.lower())


def test_the_interpreter_runs_size_checks_of_checked_ir():
    checked = """
    func.func @f(%n: index) -> index {
      %c4 = arith.constant 4 : index
      %same = arith.cmpi eq, %n, %c4 : index
      soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index
      return %n : index
    }
    """
    with ir.Context():
        module = soac.parse(checked)
        assert soac.interpret(module, "f", 4) == 4
        with pytest.raises(soac.Error, match=r"^-:\d+:\d+: 'tensor\.cast': dimension 0 of the source has size 3, but the result type has 4$"):
            soac.interpret(module, "f", 3)


STACKED_BATCH = """
func.func @stacked(%h: tensor<?xf64>, %starts: tensor<?xindex>, %is: tensor<?xindex>, %vs: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %reads:2 = soac.map ins(%starts : tensor<?xindex>) -> tensor<?x?xindex>, tensor<?x?xf64> {
  ^bb0(%s: index):
    soac.yield %is, %vs : tensor<?xindex>, tensor<?xf64>
  }
  %i = tensor.collapse_shape %reads#0 [[0, 1]] : tensor<?x?xindex> into tensor<?xindex>
  %v = tensor.collapse_shape %reads#1 [[0, 1]] : tensor<?x?xf64> into tensor<?xf64>
  %r = soac.reduce_by_index dest(%h : tensor<?xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}
"""


def test_stacked_batches_need_as_many_values_as_indices():
    """A reduce_by_index of a map's stacked rows reads each row's indices and
    values together: fewer values than indices must not be read past."""
    stacked = soac.compile(STACKED_BATCH, "stacked")
    h, starts = np.zeros(4), np.arange(3, dtype=np.intp)
    np.testing.assert_array_equal(stacked(h, starts, np.array([0, 2], np.intp), np.array([1.0, 2.0])), [3.0, 0, 6.0, 0])
    with pytest.raises(soac.Error, match=r"^stacked: -:10:\d+: 'soac.reduce_by_index': operands have different outer sizes$"):
        stacked(h, starts, np.array([0, 2, 3], np.intp), np.array([1.0, 2.0]))
