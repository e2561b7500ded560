"""Compiled CPU code against the reference interpreter, op by op and nesting by
nesting, on random inputs of sizes 0, 1, odd and large."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from mlir import ir

import soac
import soac.numpy as snp
from soac.compiler import CpuOptions

rng = np.random.default_rng(1)
# examples/soacs.mlir: saxpy, sum, sum_of_squares, argmin, cumsum, recurrence,
# matvec, scatter, histogram, argmax_bins (the programs below add other types
# and nestings)
LIBRARY = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "soacs.mlir").read_text()
SIZES = [0, 1, 7, 1003]


def interpret(source: str, function: str, *args):
    with ir.Context():
        return soac.interpret(soac.parse(source), function, *args)


def assert_same(actual, expected):
    """Compiled and interpreted results agree: same dtypes and shapes, exact
    integers, floats up to reassociation of reductions."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        rtol = 1e-4 if expected.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(actual, expected)


def check(source: str, function: str, *args, options: CpuOptions = CpuOptions()):
    compiled = soac.compile(source, function, options=options)
    assert_same(compiled(*args), interpret(source, function, *args))


def floats(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


MAPS = """
func.func @two_results(%x: tensor<?xf64>, %k: tensor<?xi32>) -> (tensor<?xi64>, tensor<?xi1>, tensor<?xindex>) {
  %c0 = arith.constant 0 : i32
  %r:3 = soac.map ins(%x, %k : tensor<?xf64>, tensor<?xi32>) -> tensor<?xi64>, tensor<?xi1>, tensor<?xindex> {
  ^bb0(%a: f64, %b: i32):
    %t = arith.fptosi %a : f64 to i64
    %w = arith.extsi %b : i32 to i64
    %s = arith.muli %t, %w : i64
    %p = arith.cmpi sgt, %b, %c0 : i32
    %i = arith.index_cast %b : i32 to index
    soac.yield %s, %p, %i : i64, i1, index
  }
  return %r#0, %r#1, %r#2 : tensor<?xi64>, tensor<?xi1>, tensor<?xindex>
}

// map . map . map: fused into one loop; the middle one has a free tensor read
func.func @chain(%x: tensor<?xf64>, %table: tensor<4xf64>) -> tensor<?xf64> {
  %a = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %e = math.exp %v : f64
    soac.yield %e : f64
  }
  %b = soac.map ins(%a, %x : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64, %w: f64):
    %c3 = arith.constant 3 : index
    %p = arith.fptoui %w : f64 to i64
    %pi = arith.index_cast %p : i64 to index
    %i = arith.minui %pi, %c3 : index
    %t = tensor.extract %table[%i] : tensor<4xf64>
    %s = arith.addf %v, %t : f64
    soac.yield %s : f64
  }
  %c = soac.map ins(%b : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %s = math.sqrt %v : f64
    soac.yield %s : f64
  }
  return %c : tensor<?xf64>
}

// a map read by two consumers is computed once and kept
func.func @shared(%x: tensor<?xf64>) -> (tensor<?xf64>, f64) {
  %zero = arith.constant 0.0 : f64
  %sq = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %s = arith.mulf %v, %v : f64
    soac.yield %s : f64
  }
  %sum = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %sq, %sum : tensor<?xf64>, f64
}
"""


@pytest.mark.parametrize("n", SIZES)
def test_maps(n):
    check(LIBRARY, "saxpy", 1.5, floats(n, dtype=np.float32), floats(n, dtype=np.float32))
    check(MAPS, "two_results", floats(n) * 10, rng.integers(-9, 9, n).astype(np.int32))
    check(MAPS, "chain", np.abs(floats(n)) * 3, floats(4))
    check(MAPS, "shared", floats(n))


REDUCES = """
func.func @sum(%x: tensor<?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %s = soac.reduce ins(%x : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %r = arith.addf %a, %b : f64
    soac.yield %r : f64
  }
  return %s : f64
}

func.func @product_and_max(%x: tensor<?xi64>, %y: tensor<?xf32>) -> (i64, f32) {
  %one = arith.constant 1 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %p = soac.reduce ins(%x : tensor<?xi64>) init(%one : i64) -> i64 {
  ^bb0(%a: i64, %b: i64):
    %r = arith.muli %a, %b : i64
    soac.yield %r : i64
  }
  %m = soac.reduce ins(%y : tensor<?xf32>) init(%ninf : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    soac.yield %r : f32
  }
  return %p, %m : i64, f32
}

// a reduce over rows with a vector operator: column sums
func.func @column_sums(%m: tensor<?x3xf64>) -> tensor<3xf64> {
  %zero = arith.constant 0.0 : f64
  %zeros = tensor.splat %zero : tensor<3xf64>
  %r = soac.reduce ins(%m : tensor<?x3xf64>) init(%zeros : tensor<3xf64>) -> tensor<3xf64> {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %s = soac.map ins(%a, %b : tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.addf %x, %y : f64
      soac.yield %t : f64
    }
    soac.yield %s : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}

// two reduces over the results of one map, a scalar and a vector per row:
// the lowering merges them into one reduce (mixed scalar and tensor
// accumulators) that the map fuses into
func.func @total_and_column_squares(%x: tensor<?x?xf64>, %zeros: tensor<?xf64>) -> (f64, tensor<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %m:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64>, tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %s = soac.reduce ins(%row : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %sq = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%e: f64):
      %t = arith.mulf %e, %e : f64
      soac.yield %t : f64
    }
    soac.yield %s, %sq : f64, tensor<?xf64>
  }
  %total = soac.reduce ins(%m#0 : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %columns = soac.reduce ins(%m#1 : tensor<?x?xf64>) init(%zeros : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
    %t = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %w = arith.addf %u, %v : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  return %total, %columns : f64, tensor<?xf64>
}

// per row: the sines, and the sum of the cosines folded in the loop that
// computes the sines (the cosines are not stored)
func.func @sines_and_cosine_sums(%x: tensor<?x?xf64>, %zero: f64) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %r:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64>, tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %m:2 = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
    ^bb0(%e: f64):
      %s = math.sin %e : f64
      %c = math.cos %e : f64
      soac.yield %s, %c : f64, f64
    }
    %sum = soac.reduce ins(%m#1 : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %m#0, %sum : tensor<?xf64>, f64
  }
  return %r#0, %r#1 : tensor<?x?xf64>, tensor<?xf64>
}

// a cheap map read by a map and a reduce: each computes the rows it reads
func.func @scaled_sums_and_shifted_columns(%x: tensor<?x?xf64>, %g: tensor<?xf64>, %acc: tensor<?x?xf64>, %zero: tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %m:2 = soac.map ins(%x, %g : tensor<?x?xf64>, tensor<?xf64>) -> tensor<?x?xf64>, tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>, %s: f64):
    %p:2 = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
    ^bb0(%e: f64):
      %a = arith.mulf %e, %s : f64
      %b = arith.addf %e, %s : f64
      soac.yield %a, %b : f64, f64
    }
    soac.yield %p#0, %p#1 : tensor<?xf64>, tensor<?xf64>
  }
  %sum = soac.map ins(%acc, %m#0 : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%u: tensor<?xf64>, %v: tensor<?xf64>):
    %t = soac.map ins(%u, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%c: f64, %d: f64):
      %w = arith.addf %c, %d : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  %r = soac.reduce ins(%m#1 : tensor<?x?xf64>) init(%zero : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%p: tensor<?xf64>, %q: tensor<?xf64>):
    %t = soac.map ins(%p, %q : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%c: f64, %d: f64):
      %w = arith.addf %c, %d : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  return %sum, %r : tensor<?x?xf64>, tensor<?xf64>
}
"""


@pytest.mark.parametrize("n", SIZES)
def test_reduces(n):
    check(REDUCES, "sum", floats(n))
    check(REDUCES, "product_and_max", rng.integers(-3, 4, n), floats(n, dtype=np.float32))
    x = rng.integers(0, 5, n).astype(np.float32)  # many ties
    check(LIBRARY, "argmin", x)
    check(LIBRARY, "sum", floats(n, dtype=np.float32))
    check(LIBRARY, "sum_of_squares", floats(n, dtype=np.float32))
    check(REDUCES, "column_sums", floats(n, 3))
    # 20 columns: 1003 rows reach the parallel, chunked reduce
    check(REDUCES, "total_and_column_squares", floats(n, 20), np.zeros(20))
    check(REDUCES, "sines_and_cosine_sums", floats(n, 20), 0.0)
    check(REDUCES, "scaled_sums_and_shifted_columns", floats(n, 20), floats(n), floats(n, 20), np.zeros(20))


@pytest.mark.parametrize("chunks", [1, 3, 64])
def test_reduce_and_scan_for_any_chunk_count(chunks):
    options = CpuOptions(num_chunks=chunks)
    check(LIBRARY, "argmin", rng.integers(0, 5, 101).astype(np.float32), options=options)
    check(LIBRARY, "recurrence", floats(101), floats(101), options=options)


SCANS = """
func.func @cumsum(%x: tensor<?xi32>) -> tensor<?xi32> {
  %zero = arith.constant 0 : i32
  %r = soac.scan ins(%x : tensor<?xi32>) init(%zero : i32) -> tensor<?xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    soac.yield %s : i32
  }
  return %r : tensor<?xi32>
}

// scan . map, fused; static size
func.func @running_max_of_abs(%x: tensor<9xf32>) -> tensor<9xf32> {
  %zero = arith.constant 0.0 : f32
  %abs = soac.map ins(%x : tensor<9xf32>) -> tensor<9xf32> {
  ^bb0(%v: f32):
    %a = math.absf %v : f32
    soac.yield %a : f32
  }
  %r = soac.scan ins(%abs : tensor<9xf32>) init(%zero : f32) -> tensor<9xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    soac.yield %m : f32
  }
  return %r : tensor<9xf32>
}

// a scan over rows: running vector sums
func.func @row_prefix(%m: tensor<?x2xf64>, %zeros: tensor<2xf64>) -> tensor<?x2xf64> {
  %r = soac.scan ins(%m : tensor<?x2xf64>) init(%zeros : tensor<2xf64>) -> tensor<?x2xf64> {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>):
    %s = soac.map ins(%a, %b : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.addf %x, %y : f64
      soac.yield %t : f64
    }
    soac.yield %s : tensor<2xf64>
  }
  return %r : tensor<?x2xf64>
}
"""


@pytest.mark.parametrize("n", SIZES)
def test_scans(n):
    check(SCANS, "cumsum", rng.integers(-50, 50, n).astype(np.int32))
    check(LIBRARY, "recurrence", rng.uniform(0.5, 1.0, n), floats(n))
    check(LIBRARY, "cumsum", floats(n, dtype=np.float32))
    check(SCANS, "row_prefix", floats(n, 2), np.zeros(2))
    check(SCANS, "running_max_of_abs", floats(9, dtype=np.float32))


SCATTERS = """
func.func @scatter(%d: tensor<?xf32>, %i: tensor<?xi32>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.scatter dest(%d : tensor<?xf32>) indices(%i : tensor<?xi32>) ins(%v : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @scatter_rows(%d: tensor<5x3xf64>, %i: tensor<?xindex>, %v: tensor<?x3xf64>) -> tensor<5x3xf64> {
  %r = soac.scatter dest(%d : tensor<5x3xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?x3xf64>) -> tensor<5x3xf64>
  return %r : tensor<5x3xf64>
}

func.func @histogram(%h: tensor<?xf32>, %i: tensor<?xi64>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %sq = soac.map ins(%v : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%x: f32):
    %s = arith.mulf %x, %x : f32
    soac.yield %s : f32
  }
  %r = soac.reduce_by_index dest(%h : tensor<?xf32>) indices(%i : tensor<?xi64>) ins(%sq : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

"""


@pytest.mark.parametrize("n", SIZES)
def test_scatter_and_histograms(n):
    # unique in-range indices for scatter (duplicates are unspecified), plus
    # out-of-range ones that must be ignored
    m = 2 * n + 3
    targets = rng.permutation(m)[:n].astype(np.int32)
    targets[: n // 4] = rng.choice([-1, m, m + 5], n // 4)
    check(SCATTERS, "scatter", floats(m, dtype=np.float32), targets, floats(n, dtype=np.float32))
    rows = rng.permutation(7)[: min(n, 5)]
    rows = np.where(rows >= 5, -3, rows)  # some out of range
    check(SCATTERS, "scatter_rows", floats(5, 3), rows, floats(len(rows), 3))
    bins = rng.integers(-2, 12, n)
    check(SCATTERS, "histogram", floats(10, dtype=np.float32), bins, floats(n, dtype=np.float32))
    check(LIBRARY, "argmax_bins", np.full(3, -np.inf), np.full(3, -1), rng.integers(-1, 4, n), floats(n), np.arange(n))
    check(LIBRARY, "histogram", floats(7, dtype=np.float32), rng.integers(-2, 9, n), floats(n, dtype=np.float32))


NESTED = """
// map in map: an outer product (rows of rank 1 yielded by a map)
func.func @outer(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?x?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: f32):
    %row = soac.map ins(%y : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%b: f32):
      %m = arith.mulf %a, %b : f32
      soac.yield %m : f32
    }
    soac.yield %row : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// scan in map: row-wise cumulative sums
func.func @row_cumsum(%A: tensor<?x?xi64>) -> tensor<?x?xi64> {
  %zero = arith.constant 0 : i64
  %r = soac.map ins(%A : tensor<?x?xi64>) -> tensor<?x?xi64> {
  ^bb0(%row: tensor<?xi64>):
    %c = soac.scan ins(%row : tensor<?xi64>) init(%zero : i64) -> tensor<?xi64> {
    ^bb0(%a: i64, %b: i64):
      %s = arith.addi %a, %b : i64
      soac.yield %s : i64
    }
    soac.yield %c : tensor<?xi64>
  }
  return %r : tensor<?x?xi64>
}

// scatter and reduce_by_index in map: per-row histograms of per-row indices
func.func @row_histograms(%idx: tensor<?x?xindex>, %vals: tensor<?x?xf64>, %zeros: tensor<4xf64>) -> (tensor<?x4xf64>, tensor<?x4xf64>) {
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.map ins(%idx, %vals : tensor<?x?xindex>, tensor<?x?xf64>) -> tensor<?x4xf64>, tensor<?x4xf64> {
  ^bb0(%i: tensor<?xindex>, %v: tensor<?xf64>):
    %h = soac.reduce_by_index dest(%zeros : tensor<4xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<4xf64> {
    ^bb0(%a: f64, %b: f64):
      %s = arith.addf %a, %b : f64
      soac.yield %s : f64
    }
    %w = soac.scatter dest(%zeros : tensor<4xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) -> tensor<4xf64>
    soac.yield %h, %w : tensor<4xf64>, tensor<4xf64>
  }
  return %r#0, %r#1 : tensor<?x4xf64>, tensor<?x4xf64>
}

// SOACs in scf.for: k steps of x <- x / sum(x) + 1
func.func @iterate(%x: tensor<?xf64>, %k: index) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %r = scf.for %it = %c0 to %k step %c1 iter_args(%cur = %x) -> (tensor<?xf64>) {
    %s = soac.reduce ins(%cur : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %next = soac.map ins(%cur : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %q = arith.divf %v, %s : f64
      %p = arith.addf %q, %one : f64
      soac.yield %p : f64
    }
    scf.yield %next : tensor<?xf64>
  }
  return %r : tensor<?xf64>
}

// scf.for in map: each element squared k times, with an scf.if inside
func.func @per_element_loop(%x: tensor<?xf64>, %k: index) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cap = arith.constant 1.0e6 : f64
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %y = scf.for %it = %c0 to %k step %c1 iter_args(%acc = %v) -> (f64) {
      %sq = arith.mulf %acc, %acc : f64
      %big = arith.cmpf ogt, %sq, %cap : f64
      %n = scf.if %big -> (f64) {
        scf.yield %cap : f64
      } else {
        scf.yield %sq : f64
      }
      scf.yield %n : f64
    }
    soac.yield %y : f64
  }
  return %r : tensor<?xf64>
}

// a gather: x[idx[i]] with data-dependent indices, inside a static-size iota map
func.func @gather(%x: tensor<?xf32>, %idx: tensor<6xindex>) -> tensor<6xf32> {
  %i = soac.iota : tensor<6xindex>
  %r = soac.map ins(%i : tensor<6xindex>) -> tensor<6xf32> {
  ^bb0(%k: index):
    %j = tensor.extract %idx[%k] : tensor<6xindex>
    %v = tensor.extract %x[%j] : tensor<?xf32>
    soac.yield %v : f32
  }
  return %r : tensor<6xf32>
}
"""


@pytest.mark.parametrize("n", [0, 1, 5, 33])
def test_nested_parallelism(n):
    check(NESTED, "outer", floats(n, dtype=np.float32), floats(3, dtype=np.float32))
    check(NESTED, "outer", floats(3, dtype=np.float32), floats(n, dtype=np.float32))
    check(LIBRARY, "matvec", floats(n, 4), floats(4))
    check(LIBRARY, "matvec", floats(3, n), floats(n))
    check(NESTED, "row_cumsum", rng.integers(-9, 9, (n, 5)))
    check(NESTED, "row_histograms", rng.integers(-1, 5, (n, 6)), floats(n, 6), np.zeros(4))
    check(NESTED, "iterate", np.abs(floats(n)) + 0.1, 3)
    check(NESTED, "per_element_loop", floats(n) * 2, 4)


def test_gather_with_static_sizes():
    x = floats(10, dtype=np.float32)
    check(NESTED, "gather", x, rng.integers(0, 10, 6))


def test_large_inputs_against_numpy():
    n = 1_000_003
    x = floats(n, dtype=np.float32)
    np.testing.assert_allclose(soac.compile(LIBRARY, "sum_of_squares")(x), np.sum(x.astype(np.float64) ** 2), rtol=1e-4)
    ints = rng.integers(-100, 100, n).astype(np.int32)
    np.testing.assert_array_equal(soac.compile(SCANS, "cumsum")(ints), np.cumsum(ints, dtype=np.int32))
    bins = rng.integers(0, 1000, n)
    expected = np.bincount(bins, weights=x.astype(np.float64) ** 2, minlength=1000)
    hist = soac.compile(SCATTERS, "histogram")(np.zeros(1000, np.float32), bins, x)
    np.testing.assert_allclose(hist, expected, rtol=1e-3)


def test_one_thread_gives_the_same_results():
    x = rng.integers(0, 5, 10_001).astype(np.float32)
    # Tensor accumulators: one chunk per thread (the thread count is read at
    # run time), so each thread count folds the rows in its own order.
    rows = floats(2001, 20)
    threads = soac.get_num_threads()
    try:
        for count in (1, 2, 3):
            soac.set_num_threads(count)
            assert soac.get_num_threads() == count
            check(LIBRARY, "argmin", x)
            check(SCANS, "cumsum", x.astype(np.int32))
            check(REDUCES, "total_and_column_squares", rows, np.zeros(20))
    finally:
        soac.set_num_threads(threads)
    check(LIBRARY, "argmin", x, options=CpuOptions(openmp=False))
    check(REDUCES, "total_and_column_squares", rows, np.zeros(20), options=CpuOptions(openmp=False))


LIBRARY_NAMES = """
func.func @pow(%x: f64, %y: f64) -> f64 {
  %r = math.powf %x, %y : f64
  %s = arith.mulf %r, %y : f64
  return %s : f64
}
func.func @expf(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  return %r : tensor<?xf32>
}
func.func @malloc(%n: index) -> tensor<?xi64> {
  %r = soac.iota %n : tensor<?xi64>
  return %r : tensor<?xi64>
}
"""


@pytest.mark.parametrize("emit", ["jit", "shared-lib"])
def test_functions_named_like_the_c_library(emit, tmp_path):
    # A program's @pow must not take the calls its own math.powf makes to
    # libm's pow (it recursed until the stack overflowed), nor @malloc the
    # allocations'.
    def compiled(name):
        if emit == "jit":
            return soac.compile(LIBRARY_NAMES, name)
        written = soac.compile(LIBRARY_NAMES, name, emit="shared-lib", output=tmp_path / name)
        return getattr(written.load(), name)

    assert compiled("pow")(2.0, 3.0) == 24.0
    x = floats(100, dtype=np.float32)
    np.testing.assert_allclose(compiled("expf")(x), np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(compiled("malloc")(5), np.arange(5))


def test_the_jit_vectorizes_strided_accumulations_without_gathers_or_scatters(tmp_path):
    # The gradient of HAND's skinning accumulates each vertex's share into
    # 22 bones' 4 × 4 adjoints. LLVM's loop vectorizer vectorized that across
    # the bones, 16 doubles apart, with AVX-512 gathers and scatters (48 and
    # 64 in this function), which made HAND's gradient 1.3-1.6 times slower
    # than scalar code; the JIT tunes for the host without them.
    # (The test runs where AVX-512 has scatters: elsewhere there is none to avoid.)
    from soac import _soac, compiler
    from soac.runtime import aot, jit

    if "+avx512f" not in _soac.host_cpu()[1]:
        pytest.skip("this CPU has no AVX-512, hence no vectorized scatter to avoid")

    def loss(transforms, weights, vertices):
        def skin(w, v):
            return snp.sum(w @ soac.map(lambda t: t @ v, transforms))
        return snp.sum(soac.map(skin, weights, vertices))

    traced = soac.grad(loss).trace(np.ones((22, 4, 4)), np.ones((30, 22)), np.ones((30, 4)))
    function = next(op for op in traced.module.body.operations if op.name.value == traced.name)
    lowered = compiler.lower(traced.module, options=CpuOptions(), only=traced.name)
    jit.jit(lowered, [compiler.signature(traced.name, function)], openmp=True, object_file=str(tmp_path / "f.o"))
    assembly = aot._run([aot._tool("llvm", "llvm-objdump"), "-d", str(tmp_path / "f.o")])
    # The accumulation is there (in vector code since LLVM knows that the
    # adjoints' buffers overlap no other: soac-mark-allocation-functions).
    assert "vmulpd" in assembly or "vmulsd" in assembly
    assert "vscatter" not in assembly and "vgather" not in assembly
