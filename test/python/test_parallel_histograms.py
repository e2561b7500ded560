"""reduce_by_index folded in parallel on the CPU: when a top-level histogram
has many rows for its bins, chunks of its rows are folded on different
threads into bins of their own, which are then merged in chunk order. Checked
against numpy at 1, 2 and 3 threads, with indices out of range (ignored),
operators other than +, rows that are tensors, a tuple operator (argmin),
and bins too many for the chunked form (the sequential loop)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import soac

rng = np.random.default_rng(7)

HISTOGRAMS = """
func.func @squares(%h: tensor<?xf64>, %i: tensor<?xi64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %sq = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%x: f64):
    %s = arith.mulf %x, %x : f64
    soac.yield %s : f64
  }
  %r = soac.reduce_by_index dest(%h : tensor<?xf64>) indices(%i : tensor<?xi64>) ins(%sq : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}

func.func @minimum(%h: tensor<?xi32>, %i: tensor<?xindex>, %v: tensor<?xi32>) -> tensor<?xi32> {
  %top = arith.constant 2147483647 : i32
  %r = soac.reduce_by_index dest(%h : tensor<?xi32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xi32>) init(%top : i32) -> tensor<?xi32> {
  ^bb0(%a: i32, %b: i32):
    %m = arith.minsi %a, %b : i32
    soac.yield %m : i32
  }
  return %r : tensor<?xi32>
}

func.func @rows(%h: tensor<?x3xf64>, %i: tensor<?xindex>, %v: tensor<?x3xf64>) -> tensor<?x3xf64> {
  %zero = arith.constant 0.0 : f64
  %neutral = tensor.splat %zero : tensor<3xf64>
  %r = soac.reduce_by_index dest(%h : tensor<?x3xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?x3xf64>) init(%neutral : tensor<3xf64>) -> tensor<?x3xf64> {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %s = soac.map ins(%a, %b : tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%x: f64, %y: f64):
      %z = arith.addf %x, %y : f64
      soac.yield %z : f64
    }
    soac.yield %s : tensor<3xf64>
  }
  return %r : tensor<?x3xf64>
}

func.func @argmin(%best: tensor<?xf64>, %at: tensor<?xi64>, %i: tensor<?xindex>, %v: tensor<?xf64>, %k: tensor<?xi64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %none = arith.constant 9223372036854775807 : i64
  %r:2 = soac.reduce_by_index dest(%best, %at : tensor<?xf64>, tensor<?xi64>) indices(%i : tensor<?xindex>) ins(%v, %k : tensor<?xf64>, tensor<?xi64>) init(%inf, %none : f64, i64) -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%a: f64, %ka: i64, %b: f64, %kb: i64):
    %less = arith.cmpf olt, %b, %a : f64
    %same = arith.cmpf oeq, %b, %a : f64
    %earlier = arith.cmpi slt, %kb, %ka : i64
    %tie = arith.andi %same, %earlier : i1
    %take = arith.ori %less, %tie : i1
    %m = arith.select %take, %b, %a : f64
    %km = arith.select %take, %kb, %ka : i64
    soac.yield %m, %km : f64, i64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi64>
}
"""

# Enough rows for a parallel region (kMinParallelWork is 2^14) and for every
# chunk's bins; some indices out of range on both sides.
N = 60_001


def indices(n: int, bins: int, dtype=np.int64) -> np.ndarray:
    index = rng.integers(-3, bins + 3, n)
    return index.astype(dtype)


def in_range(index: np.ndarray, bins: int) -> np.ndarray:
    return (index >= 0) & (index < bins)


@pytest.fixture(params=[1, 2, 3], ids=lambda count: f"{count}-threads")
def threads(request):
    before = soac.get_num_threads()
    soac.set_num_threads(request.param)
    yield request.param
    soac.set_num_threads(before)


@pytest.mark.parametrize("bins", [1, 1000, N])
def test_sums_match_numpy(threads, bins):
    index = indices(N, bins)
    # Integers: every order of the additions gives the same sums.
    values = rng.integers(-50, 50, N).astype(np.float64)
    dest = rng.integers(-5, 5, bins).astype(np.float64)
    expected = dest + np.bincount(index[in_range(index, bins)], weights=values[in_range(index, bins)] ** 2, minlength=bins)
    got = soac.compile(HISTOGRAMS, "squares")(dest, index, values)
    np.testing.assert_array_equal(got, expected)


def test_float_sums_match_numpy(threads):
    index = indices(N, 257)
    values = rng.standard_normal(N)
    dest = rng.standard_normal(257)
    keep = in_range(index, 257)
    expected = dest + np.bincount(index[keep], weights=values[keep] ** 2, minlength=257)
    got = soac.compile(HISTOGRAMS, "squares")(dest, index, values)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("bins", [7, 2000])
def test_minimum_matches_numpy(threads, bins):
    index = indices(N, bins)
    values = rng.integers(-10**6, 10**6, N).astype(np.int32)
    dest = rng.integers(-10**5, 10**6, bins).astype(np.int32)
    keep = in_range(index, bins)
    expected = dest.copy()
    np.minimum.at(expected, index[keep], values[keep])
    got = soac.compile(HISTOGRAMS, "minimum")(dest, index.astype(np.intp), values)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bins", [5, 100])
def test_rows_match_numpy(threads, bins):
    index = indices(N, bins)
    values = rng.integers(-9, 9, (N, 3)).astype(np.float64)
    dest = rng.integers(-9, 9, (bins, 3)).astype(np.float64)
    keep = in_range(index, bins)
    expected = dest.copy()
    np.add.at(expected, index[keep], values[keep])
    got = soac.compile(HISTOGRAMS, "rows")(dest, index.astype(np.intp), values)
    np.testing.assert_array_equal(got, expected)


def test_argmin_keeps_the_first_of_ties(threads):
    bins = 50
    index = indices(N, bins)
    # Few distinct values: many ties, which the operator breaks by position.
    values = rng.integers(0, 4, N).astype(np.float64)
    positions = np.arange(N, dtype=np.int64)
    best = np.full(bins, np.inf)
    at = np.full(bins, np.iinfo(np.int64).max)
    for i in np.flatnonzero(in_range(index, bins)):
        b = index[i]
        if values[i] < best[b] or (values[i] == best[b] and i < at[b]):
            best[b], at[b] = values[i], i
    got_best, got_at = soac.compile(HISTOGRAMS, "argmin")(
        np.full(bins, np.inf), np.full(bins, np.iinfo(np.int64).max), index.astype(np.intp), values, positions
    )
    np.testing.assert_array_equal(got_best, best)
    np.testing.assert_array_equal(got_at, at)


def test_few_rows_and_no_rows(threads):
    for n in (0, 1, 5):
        index = indices(n, 4)
        values = rng.standard_normal(n)
        keep = in_range(index, 4)
        expected = np.bincount(index[keep], weights=values[keep] ** 2, minlength=4)
        got = soac.compile(HISTOGRAMS, "squares")(np.zeros(4), index, values)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_the_top_level_histogram_has_a_parallel_form():
    lowered = str(soac.lower(HISTOGRAMS, only="squares"))
    # The chunks' folds and the merge over the bins.
    assert len(re.findall(r"omp\.parallel", lowered)) == 2


def test_a_histogram_per_row_of_a_map_stays_sequential():
    source = """
func.func @per_row(%i: tensor<?x?xindex>, %v: tensor<?x?xf64>) -> tensor<?x4xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%i, %v : tensor<?x?xindex>, tensor<?x?xf64>) -> tensor<?x4xf64> {
  ^bb0(%is: tensor<?xindex>, %vs: tensor<?xf64>):
    %h0 = tensor.splat %zero : tensor<4xf64>
    %h = soac.reduce_by_index dest(%h0 : tensor<4xf64>) indices(%is : tensor<?xindex>) ins(%vs : tensor<?xf64>) init(%zero : f64) -> tensor<4xf64> {
    ^bb0(%a: f64, %b: f64):
      %s = arith.addf %a, %b : f64
      soac.yield %s : f64
    }
    soac.yield %h : tensor<4xf64>
  }
  return %r : tensor<?x4xf64>
}
"""
    lowered = str(soac.lower(source, only="per_row"))
    # The map's own loop is the one parallel region.
    assert len(re.findall(r"omp\.parallel", lowered)) == 1
    index = rng.integers(-1, 5, (300, 70)).astype(np.intp)
    values = rng.integers(-9, 9, (300, 70)).astype(np.float64)
    expected = np.zeros((300, 4))
    for row in range(300):
        keep = in_range(index[row], 4)
        np.add.at(expected[row], index[row][keep], values[row][keep])
    np.testing.assert_array_equal(soac.compile(source, "per_row")(index, values), expected)
