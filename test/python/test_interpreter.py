"""The reference interpreter against numpy, op by op, and its errors."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from mlir import ir

import soac

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
LIBRARY = (EXAMPLES / "soacs.mlir").read_text()
rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def ctx():
    with ir.Context() as context:
        yield context


def run(source: str, function: str, *args):
    return soac.interpret(soac.parse(source), function, *args)


def test_softmax_matvec_example_matches_numpy():
    module = soac.parse_file(EXAMPLES / "softmax_matvec.mlir")
    A = rng.standard_normal((5, 3)).astype(np.float32)
    x = rng.standard_normal(3).astype(np.float32)
    scores = A @ x
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    result = soac.interpret(module, "softmax_matvec", A, x)
    assert result.dtype == np.float32 and result.shape == (5,)
    np.testing.assert_allclose(result, expected, rtol=1e-5)


MAP_TWO_RESULTS = """
func.func @f(%x: tensor<?xf64>, %k: tensor<?xi32>, %s: f64) -> (tensor<?xf64>, tensor<?xi1>) {
  %c0 = arith.constant 0 : i32
  %r:2 = soac.map ins(%x, %k : tensor<?xf64>, tensor<?xi32>) -> tensor<?xf64>, tensor<?xi1> {
  ^bb0(%a: f64, %b: i32):
    %bf = arith.sitofp %b : i32 to f64
    %m = arith.mulf %a, %s : f64
    %t = arith.addf %m, %bf : f64
    %p = arith.cmpi sgt, %b, %c0 : i32
    soac.yield %t, %p : f64, i1
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi1>
}
"""


@pytest.mark.parametrize("n", [0, 1, 7])
def test_map_with_two_results_and_a_free_scalar(n):
    x = rng.standard_normal(n)
    k = rng.integers(-5, 5, n).astype(np.int32)
    values, positive = run(MAP_TWO_RESULTS, "f", x, k, 2.5)
    np.testing.assert_allclose(values, x * 2.5 + k)
    np.testing.assert_array_equal(positive, k > 0)
    assert values.shape == (n,) and positive.dtype == np.bool_




@pytest.mark.parametrize("shape", [(0, 3), (4, 0), (3, 5)])
def test_nested_map_and_reduce(shape):
    A = rng.standard_normal(shape)
    v = rng.standard_normal(shape[1])
    np.testing.assert_allclose(run(LIBRARY, "matvec", A, v), A @ v)


def test_map_yielding_rows_stacks_them():
    source = """
    func.func @outer(%x: tensor<?xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
      %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?x3xf32> {
      ^bb0(%a: f32):
        %row = soac.map ins(%y : tensor<3xf32>) -> tensor<3xf32> {
        ^bb0(%b: f32):
          %m = arith.mulf %a, %b : f32
          soac.yield %m : f32
        }
        soac.yield %row : tensor<3xf32>
      }
      return %r : tensor<?x3xf32>
    }"""
    x, y = rng.standard_normal(4).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(run(source, "outer", x, y), np.outer(x, y), rtol=1e-6)
    assert run(source, "outer", x[:0], y).shape == (0, 3)




def test_tuple_reduce_finds_first_argmin():
    x = np.array([3.0, 1.0, 2.0, 1.0], dtype=np.float32)
    value, position = run(LIBRARY, "argmin", x)
    assert (value, position) == (1.0, 1)
    value, position = run(LIBRARY, "argmin", x[:0])
    assert value == np.inf and position == 0  # the neutral elements


SCANS = """
func.func @cumsum(%x: tensor<?xi64>) -> tensor<?xi64> {
  %zero = arith.constant 0 : i64
  %r = soac.scan ins(%x : tensor<?xi64>) init(%zero : i64) -> tensor<?xi64> {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    soac.yield %s : i64
  }
  return %r : tensor<?xi64>
}

"""


@pytest.mark.parametrize("n", [0, 1, 9])
def test_scans(n):
    x = rng.integers(-100, 100, n)
    np.testing.assert_array_equal(run(SCANS, "cumsum", x), np.cumsum(x))
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    expected, y = [], 0.0
    for ai, bi in zip(a, b):
        y = ai * y + bi
        expected.append(y)
    np.testing.assert_allclose(run(LIBRARY, "recurrence", a, b)[1], np.array(expected).reshape(n))


SCATTER_AND_HISTOGRAMS = """
func.func @scatter(%d: tensor<?x2xf32>, %i: tensor<?xi32>, %v: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %r = soac.scatter dest(%d : tensor<?x2xf32>) indices(%i : tensor<?xi32>) ins(%v : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

func.func @histogram(%h: tensor<5xf64>, %i: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<5xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.reduce_by_index dest(%h : tensor<5xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<5xf64> {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %r : tensor<5xf64>
}

"""


def test_scatter_ignores_out_of_range_indices():
    dest = np.zeros((4, 2), dtype=np.float32)
    indices = np.array([2, -1, 4, 0], dtype=np.int32)
    values = np.arange(8, dtype=np.float32).reshape(4, 2)
    expected = dest.copy()
    expected[2], expected[0] = values[0], values[3]
    result = run(SCATTER_AND_HISTOGRAMS, "scatter", dest, indices, values)
    np.testing.assert_array_equal(result, expected)
    assert not dest.any()  # value semantics: the argument is untouched


def test_histogram_matches_numpy_add_at():
    indices = rng.integers(-2, 7, 50)
    values = rng.standard_normal(50)
    start = rng.standard_normal(5)
    keep = (indices >= 0) & (indices < 5)
    expected = start.copy()
    np.add.at(expected, indices[keep], values[keep])
    np.testing.assert_allclose(run(SCATTER_AND_HISTOGRAMS, "histogram", start, indices, values), expected)
    np.testing.assert_array_equal(run(SCATTER_AND_HISTOGRAMS, "histogram", start, indices[:0], values[:0]), start)


def test_tuple_histogram_tracks_argmax():
    indices = np.array([0, 2, 0, 2, 1, 5])
    values = np.array([1.0, 4.0, 3.0, -1.0, 2.0, 9.0])
    positions = np.arange(6)
    start, start_i = np.full(3, -np.inf), np.full(3, -1)
    best, where = run(LIBRARY, "argmax_bins", start, start_i, indices, values, positions)
    np.testing.assert_array_equal(best, [3.0, 2.0, 4.0])
    np.testing.assert_array_equal(where, [2, 4, 1])


def test_iota_static_and_dynamic():
    source = """
    func.func @f(%n: index) -> (tensor<?xindex>, tensor<4xi32>) {
      %a = soac.iota %n : tensor<?xindex>
      %b = soac.iota : tensor<4xi32>
      return %a, %b : tensor<?xindex>, tensor<4xi32>
    }"""
    a, b = run(source, "f", 3)
    np.testing.assert_array_equal(a, [0, 1, 2])
    assert b.dtype == np.int32 and list(b) == [0, 1, 2, 3]


INTEGER_OPS = """
func.func @ints(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %f = arith.floordivsi %a, %b : i32
  %c = arith.ceildivsi %a, %b : i32
  %u = arith.divui %a, %b : i32
  %mx = arith.maxsi %a, %b : i32
  %mu = arith.maxui %a, %b : i32
  %sh = arith.shrui %a, %b : i32
  return %q, %r, %f, %c, %u, %mx, %mu, %sh : i32, i32, i32, i32, i32, i32, i32, i32
}
"""


@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3)])
def test_integer_division_and_unsigned_ops(a, b):
    q, r, f, c, u, mx, mu, sh = run(INTEGER_OPS, "ints", a, b)
    assert q == int(a / b) and r == a - int(a / b) * b  # toward zero
    assert f == a // b and c == -((-a) // b)
    ua, ub = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    assert u == np.uint32(ua // ub).astype(np.int32)
    assert mx == max(a, b) and mu == (a if ua >= ub else b)
    if 0 <= b < 32:
        assert sh == np.uint32(ua >> b).astype(np.int32)


FLOAT_OPS = """
func.func @floats(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32, f32, f32, i1, i1, f32, f32, i32) {
  %e = math.exp %x : f32
  %l = math.log1p %x : f32
  %t = math.tanh %x : f32
  %s = math.rsqrt %x : f32
  %p = math.powf %x, %y : f32
  %m = arith.maximumf %x, %y : f32
  %erf = math.erf %x : f32
  %olt = arith.cmpf olt, %x, %y : f32
  %uno = arith.cmpf uno, %x, %y : f32
  %sel = arith.select %olt, %x, %y : f32
  %r = arith.remf %x, %y : f32
  %i = arith.fptosi %x : f32 to i32
  return %e, %l, %t, %s, %p, %m, %erf, %olt, %uno, %sel, %r, %i : f32, f32, f32, f32, f32, f32, f32, i1, i1, f32, f32, i32
}
"""


def test_float_ops_compute_in_float32():
    import math

    x, y = np.float32(1.7), np.float32(0.6)
    e, l, t, s, p, m, erf, olt, uno, sel, r, i = run(FLOAT_OPS, "floats", x, y)
    for value in (e, l, t, s, p, m, erf, sel, r):
        assert value.dtype == np.float32
    np.testing.assert_allclose([e, l, t, s, p, m], [np.exp(x), np.log1p(x), np.tanh(x), 1 / np.sqrt(x), x**y, x], rtol=1e-6)
    np.testing.assert_allclose(erf, math.erf(1.7), rtol=1e-6)
    assert (olt, uno, sel, i) == (False, False, y, 1)
    np.testing.assert_allclose(r, np.fmod(x, y), rtol=1e-6)
    _, _, _, _, _, m, _, olt, uno, _, _, _ = run(FLOAT_OPS, "floats", np.float32("nan"), y)
    assert np.isnan(m) and not olt and uno  # maximumf propagates NaN


LOOPS = """
// x_{k+1} = x_k * 0.5 + 1 for n steps, and the number of doublings to exceed a limit
func.func @loops(%x0: f64, %n: index, %limit: i64) -> (f64, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %x = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x0) -> (f64) {
    %h = arith.mulf %acc, %half : f64
    %next = arith.addf %h, %one : f64
    scf.yield %next : f64
  }
  %start = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %r:2 = scf.while (%v = %start, %k = %zero) : (i64, i64) -> (i64, i64) {
    %go = arith.cmpi sle, %v, %limit : i64
    scf.condition(%go) %v, %k : i64, i64
  } do {
  ^bb0(%v: i64, %k: i64):
    %two = arith.constant 2 : i64
    %v2 = arith.muli %v, %two : i64
    %one_i = arith.constant 1 : i64
    %k1 = arith.addi %k, %one_i : i64
    scf.yield %v2, %k1 : i64, i64
  }
  return %x, %r#1 : f64, i64
}

func.func @branch(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %neg = arith.cmpf olt, %x, %zero : f64
  %r = scf.if %neg -> (f64) {
    %n = arith.negf %x : f64
    scf.yield %n : f64
  } else {
    %s = math.sqrt %x : f64
    scf.yield %s : f64
  }
  return %r : f64
}
"""


def test_scf_for_while_and_if():
    x = 3.0
    for _ in range(5):
        x = x * 0.5 + 1
    value, doublings = run(LOOPS, "loops", 3.0, 5, 100)
    assert value == pytest.approx(x) and doublings == 7  # 1, 2, ..., 64 <= 100
    assert run(LOOPS, "loops", 3.0, 0, 0) == (3.0, 0)
    assert run(LOOPS, "branch", -4.0) == 4.0 and run(LOOPS, "branch", 9.0) == 3.0


TENSORS = """
func.func @gather(%x: tensor<?xf32>, %idx: tensor<?xindex>) -> tensor<?xf32> {
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf32> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf32>
    soac.yield %v : f32
  }
  return %r : tensor<?xf32>
}

func.func @slices(%m: tensor<4x5xf64>, %k: index) -> (tensor<5xf64>, tensor<4x5xf64>, tensor<2x3xf64>, index) {
  %row = tensor.extract_slice %m[%k, 0] [1, 5] [1, 1] : tensor<4x5xf64> to tensor<5xf64>
  %block = tensor.extract_slice %m[0, 1] [2, 3] [2, 1] : tensor<4x5xf64> to tensor<2x3xf64>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %z = tensor.splat %zero : tensor<2x3xf64>
  %put = tensor.insert_slice %z into %m[1, 2] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<4x5xf64>
  %one = arith.constant 1.0 : f64
  %put2 = tensor.insert %one into %put[%c0, %c0] : tensor<4x5xf64>
  %c1 = arith.constant 1 : index
  %d = tensor.dim %m, %c1 : tensor<4x5xf64>
  return %row, %put2, %block, %d : tensor<5xf64>, tensor<4x5xf64>, tensor<2x3xf64>, index
}

func.func @generate(%n: index) -> tensor<?x3xindex> {
  %g = tensor.generate %n {
  ^bb0(%i: index, %j: index):
    %p = arith.muli %i, %j : index
    tensor.yield %p : index
  } : tensor<?x3xindex>
  return %g : tensor<?x3xindex>
}

func.func @call(%x: tensor<?xf32>, %idx: tensor<?xindex>) -> tensor<?xf32> {
  %r = func.call @gather(%x, %idx) : (tensor<?xf32>, tensor<?xindex>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def test_tensor_ops_and_calls():
    x = rng.standard_normal(6).astype(np.float32)
    idx = np.array([5, 0, 0, 3])
    np.testing.assert_array_equal(run(TENSORS, "gather", x, idx), x[idx])
    np.testing.assert_array_equal(run(TENSORS, "call", x, idx), x[idx])
    m = rng.standard_normal((4, 5))
    row, put, block, d = run(TENSORS, "slices", m, 2)
    expected = m.copy()
    expected[1:3, 2:5] = 0.0
    expected[0, 0] = 1.0
    np.testing.assert_array_equal(row, m[2])
    np.testing.assert_array_equal(put, expected)
    np.testing.assert_array_equal(block, m[0:4:2, 1:4])
    assert d == 5
    np.testing.assert_array_equal(run(TENSORS, "generate", 2), np.outer(np.arange(2), np.arange(3)))


def test_errors_name_the_op_and_location():
    with pytest.raises(soac.InterpretError, match=r"'tensor.extract': index \[6\] out of bounds for shape \[6\]"):
        run(TENSORS, "gather", np.zeros(6, np.float32), np.array([6]))
    with pytest.raises(soac.InterpretError, match="'arith.divsi': integer division by zero"):
        run(INTEGER_OPS, "ints", 1, 0)
    module = soac.parse_file(EXAMPLES / "softmax_matvec.mlir")
    with pytest.raises(soac.InterpretError, match=r"softmax_matvec.mlir:49:\d+: 'soac.vjp': derivatives run once soac-autodiff"):
        soac.interpret(module, "grad", np.zeros((2, 2), np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32))


def test_arguments_are_checked_against_the_signature():
    with pytest.raises(soac.InterpretError, match="no function @nope"):
        run(LIBRARY, "nope")
    with pytest.raises(soac.InterpretError, match="@matvec takes 2 arguments, got 1"):
        run(LIBRARY, "matvec", np.zeros((2, 2)))
    with pytest.raises(soac.InterpretError, match="argument #1 of @matvec has type tensor<\\?xf64>, so dtype float64; got float32"):
        run(LIBRARY, "matvec", np.zeros((2, 2)), np.zeros(2, np.float32))
    with pytest.raises(soac.InterpretError, match="so rank 2; got shape"):
        run(LIBRARY, "matvec", np.zeros(2), np.zeros(2))
    with pytest.raises(soac.InterpretError, match="got size 3 in dim 0"):
        run(SCATTER_AND_HISTOGRAMS, "histogram", np.zeros(3), np.zeros(1, np.int64), np.zeros(1))


def test_irregular_rows_are_reported():
    source = """
    func.func @ragged(%n: tensor<?xindex>) -> tensor<?x?xindex> {
      %r = soac.map ins(%n : tensor<?xindex>) -> tensor<?x?xindex> {
      ^bb0(%k: index):
        %row = soac.iota %k : tensor<?xindex>
        soac.yield %row : tensor<?xindex>
      }
      return %r : tensor<?x?xindex>
    }"""
    np.testing.assert_array_equal(run(source, "ragged", np.array([2, 2])), [[0, 1], [0, 1]])
    with pytest.raises(soac.InterpretError, match="arrays must be regular"):
        run(source, "ragged", np.array([1, 2]))


def test_operators_must_be_associative_with_a_neutral_init():
    # acc + v*v is a fold, not an associative operator: compiled code would
    # combine chunk results with it and differ; the oracle refuses it.
    fold = """
    func.func @f(%x: tensor<?xf64>) -> f64 {
      %zero = arith.constant 0.0 : f64
      %s = soac.reduce ins(%x : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb0(%a: f64, %b: f64):
        %sq = arith.mulf %b, %b : f64
        %t = arith.addf %a, %sq : f64
        soac.yield %t : f64
      }
      return %s : f64
    }"""
    with pytest.raises(soac.InterpretError, match="'soac.reduce': the init values are not neutral"):
        run(fold, "f", np.array([2.0, 3.0, 4.0]))
    # a + b + a b^2: 0 is neutral, but the operator is not associative
    skewed = """
    func.func @f(%x: tensor<?xf64>, %start: f64) -> tensor<?xf64> {
      %s = soac.scan ins(%x : tensor<?xf64>) init(%start : f64) -> tensor<?xf64> {
      ^bb0(%a: f64, %b: f64):
        %ab = arith.mulf %a, %b : f64
        %abb = arith.mulf %ab, %b : f64
        %s1 = arith.addf %a, %b : f64
        %t = arith.addf %s1, %abb : f64
        soac.yield %t : f64
      }
      return %s : tensor<?xf64>
    }"""
    with pytest.raises(soac.InterpretError, match="'soac.scan': the operator is not associative"):
        run(skewed, "f", np.array([1.0, 2.0, 3.0]), 0.0)
