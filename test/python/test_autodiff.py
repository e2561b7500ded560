"""Reverse-mode derivatives against central finite differences (float64),
through compiled code and through the reference interpreter."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from mlir import ir

import soac
from gradcheck import check_vjp, finite_difference_vjp

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
rng = np.random.default_rng(7)


SCALARS = """
func.func @arith(%x: f64, %y: f64) -> (f64, f64, f64, f64) {
  %s = arith.addf %x, %y : f64
  %d = arith.subf %x, %y : f64
  %p = arith.mulf %s, %d : f64
  %q = arith.divf %p, %y : f64
  %n = arith.negf %q : f64
  %r = arith.remf %x, %y : f64
  %mx = arith.maximumf %x, %y : f64
  %mn = arith.minimumf %x, %y : f64
  %c = arith.cmpf olt, %x, %y : f64
  %sel = arith.select %c, %p, %q : f64
  %t1 = arith.addf %n, %r : f64
  %t2 = arith.mulf %mx, %mn : f64
  return %t1, %t2, %sel, %mx : f64, f64, f64, f64
}

func.func @math(%x: f64, %y: f64) -> (f64, f64, f64, f64, f64, f64) {
  %e = math.exp %x : f64
  %l = math.log %y : f64
  %l1 = math.log1p %y : f64
  %sn = math.sin %x : f64
  %cs = math.cos %y : f64
  %th = math.tanh %x : f64
  %sq = math.sqrt %y : f64
  %rs = math.rsqrt %y : f64
  %pw = math.powf %y, %x : f64
  %ab = math.absf %x : f64
  %er = math.erf %x : f64
  %em = math.expm1 %x : f64
  %at = math.atan %y : f64
  %f = math.floor %x : f64
  %a1 = arith.mulf %e, %l : f64
  %a2 = arith.addf %sn, %cs : f64
  %a3 = arith.mulf %th, %sq : f64
  %a4 = arith.addf %rs, %pw : f64
  %a5 = arith.mulf %ab, %er : f64
  %a6 = arith.addf %em, %at : f64
  %a7 = arith.addf %a6, %l1 : f64
  %a8 = arith.addf %a7, %f : f64
  return %a1, %a2, %a3, %a4, %a5, %a8 : f64, f64, f64, f64, f64, f64
}
"""


@pytest.mark.parametrize("x,y", [(0.7, 1.9), (-1.3, 0.4), (2.2, 3.5)])
def test_arith_and_math_rules(x, y):
    check_vjp(SCALARS, "arith", [np.float64(x), np.float64(y)])
    if x > 0:  # powf(y, x) and the logs want y > 0; abs is smooth away from 0
        check_vjp(SCALARS, "math", [np.float64(x), np.float64(y)])
    check_vjp(SCALARS, "math", [np.float64(-abs(x)), np.float64(y)])


LIBRARY = (EXAMPLES / "soacs.mlir").read_text()

PROGRAMS = """
// a free scalar and a 2-D gather in a map, with a branch in the body
func.func @branchy(%x: tensor<?xf64>, %w: f64, %table: tensor<3x4xf64>, %rows: tensor<?xindex>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %c2 = arith.constant 2 : index
  %r = soac.map ins(%x, %rows : tensor<?xf64>, tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%v: f64, %i: index):
    %t = tensor.extract %table[%i, %c2] : tensor<3x4xf64>
    %pos = arith.cmpf ogt, %v, %zero : f64
    %y = scf.if %pos -> (f64) {
      %a = arith.mulf %v, %w : f64
      %b = arith.mulf %a, %t : f64
      scf.yield %b : f64
    } else {
      %e = math.exp %v : f64
      %b = arith.addf %e, %t : f64
      scf.yield %b : f64
    }
    soac.yield %y : f64
  }
  return %r : tensor<?xf64>
}

// products with zeros (exact), min and max with ties
func.func @reductions(%x: tensor<?xf64>, %scale: f64) -> (f64, f64, f64) {
  %one = arith.constant 1.0 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %p = soac.reduce ins(%x : tensor<?xf64>) init(%one : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.mulf %a, %b : f64
    soac.yield %t : f64
  }
  %mn = soac.reduce ins(%x : tensor<?xf64>) init(%inf : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.minimumf %a, %b : f64
    soac.yield %t : f64
  }
  %mx = soac.reduce ins(%x : tensor<?xf64>) init(%ninf : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.maximumf %b, %a : f64
    soac.yield %t : f64
  }
  %ps = arith.mulf %p, %scale : f64
  return %ps, %mn, %mx : f64, f64, f64
}

// calls, tensor.insert / splat / from_elements
func.func @helper(%v: tensor<?xf64>, %s: f64) -> tensor<?xf64> {
  %r = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%e: f64):
    %m = arith.mulf %e, %s : f64
    %t = math.tanh %m : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

func.func @tensors(%v: tensor<?xf64>, %s: f64) -> (tensor<?xf64>, tensor<2xf64>) {
  %c0 = arith.constant 0 : index
  %h = func.call @helper(%v, %s) : (tensor<?xf64>, f64) -> tensor<?xf64>
  %first = tensor.extract %h[%c0] : tensor<?xf64>
  %sq = arith.mulf %first, %s : f64
  %u = tensor.insert %sq into %h[%c0] : tensor<?xf64>
  %n = tensor.dim %v, %c0 : tensor<?xf64>
  %filled = tensor.splat %s[%n] : tensor<?xf64>
  %sum = soac.map ins(%u, %filled : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.mulf %a, %b : f64
    soac.yield %t : f64
  }
  %pair = tensor.from_elements %first, %sq : tensor<2xf64>
  return %sum, %pair : tensor<?xf64>, tensor<2xf64>
}
"""


@pytest.mark.parametrize("n", [1, 7, 40])
def test_map_with_gathers_free_values_and_branches(n):
    x = rng.standard_normal(n)
    check_vjp(LIBRARY, "gather_squares", [x, rng.integers(0, n, 2 * n)], wrt=[0])
    rows = rng.integers(0, 3, n)
    check_vjp(PROGRAMS, "branchy", [x, np.float64(0.8), rng.standard_normal((3, 4)), rows], wrt=[0, 1, 2])


@pytest.mark.parametrize(
    "x",
    [
        np.array([1.5, -2.0, 0.5, 3.0]),
        np.array([1.5, 0.0, 0.5, 3.0]),  # one zero: only its partial survives
        np.array([0.0, 2.0, 0.0, -1.0]),  # two zeros: all partials vanish
    ],
)
def test_reduce_rules(x):
    check_vjp(PROGRAMS, "reductions", [x, np.float64(1.25)])


def test_min_and_max_send_the_adjoint_to_the_first_extremum_on_ties():
    # Finite differences split ties; the rule picks the first one (a subgradient).
    x = np.array([2.0, -1.0, 2.0, -1.0])
    derivative = soac.mlir.vjp(PROGRAMS, "reductions", wrt=[0])
    *_, grad_min = derivative(x, np.float64(1.0), 0.0, 1.0, 0.0)
    *_, grad_max = derivative(x, np.float64(1.0), 0.0, 0.0, 1.0)
    np.testing.assert_array_equal(grad_min, [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad_max, [1.0, 0.0, 0.0, 0.0])


def test_calls_and_tensor_ops():
    check_vjp(PROGRAMS, "tensors", [rng.standard_normal(5), np.float64(0.6)])


def test_library_programs():
    check_vjp(LIBRARY, "matvec", [rng.standard_normal((4, 3)), rng.standard_normal(3)])
    check_vjp(LIBRARY, "sum_of_squares", [rng.standard_normal(9).astype(np.float32)], rtol=2e-2, atol=1e-3)


def test_softmax_matvec_gradient_in_the_example():
    # @grad in the example is a soac.vjp: soac.compile expands and compiles it
    program = (EXAMPLES / "softmax_matvec.mlir").read_text().replace("f32", "f64")
    A, x = rng.standard_normal((6, 4)), rng.standard_normal(4)
    cotangent = rng.standard_normal(6)
    gradient = soac.compile(program, "grad")(A, x, cotangent)
    expected = finite_difference_vjp(soac.compile(program, "softmax_matvec"), [A, x], [1], [cotangent])[0]
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)


def test_grad_of_a_scalar_function():
    grad = soac.mlir.grad(LIBRARY, "gather_squares", wrt=[0])
    x = np.array([1.0, 2.0, 3.0])
    idx = np.array([0, 2, 2, 5])  # 5 is out of range for a read: not used here
    np.testing.assert_array_equal(grad(x, idx[:3]), [2.0, 0.0, 12.0])


def test_second_derivative_by_nesting():
    source = """
    func.func @cube(%x: f64) -> f64 {
      %x2 = arith.mulf %x, %x : f64
      %x3 = arith.mulf %x2, %x : f64
      return %x3 : f64
    }
    func.func @dcube(%x: f64) -> f64 {
      %one = arith.constant 1.0 : f64
      %r:2 = soac.vjp @cube(%x, %one) : (f64, f64) -> (f64, f64)
      return %r#1 : f64
    }"""
    assert soac.mlir.grad(source, "dcube")(np.float64(2.0)) == pytest.approx(12.0)  # 6x


def test_ops_without_rules_are_errors_at_their_location():
    source = """
    func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
      %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%a: f64):
        %t = math.atan2 %a, %a : f64
        soac.yield %t : f64
      }
      return %r : tensor<?xf64>
    }"""
    with pytest.raises(soac.LoweringError, match=r"-:5:14: error: 'math.atan2' op has no reverse-mode derivative rule"):
        soac.mlir.vjp(source, "f")
    with pytest.raises(soac.Error, match="grad needs @f to return one float scalar"):
        soac.mlir.grad(source, "f")


def test_wrt_must_name_float_arguments():
    with pytest.raises(soac.VerificationError, match=r"cannot differentiate @gather_squares with respect to argument #1 of type 'tensor<\?xindex>'"):
        soac.mlir.vjp(LIBRARY, "gather_squares")


LOOPS = """
// x <- x * w + sin(x) for k steps, with a free tensor read inside the loop
func.func @iterate(%x: tensor<?xf64>, %w: f64, %table: tensor<4xf64>, %k: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %r:2 = scf.for %i = %c0 to %k step %c1 iter_args(%cur = %x, %acc = %zero) -> (tensor<?xf64>, f64) {
    %j = arith.remui %i, %c3 : index
    %t = tensor.extract %table[%j] : tensor<4xf64>
    %next = soac.map ins(%cur : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %m = arith.mulf %v, %w : f64
      %s = math.sin %v : f64
      %a = arith.addf %m, %s : f64
      %b = arith.mulf %a, %t : f64
      soac.yield %b : f64
    }
    %s = soac.reduce ins(%next : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %u = arith.addf %p, %q : f64
      soac.yield %u : f64
    }
    %acc2 = arith.addf %acc, %s : f64
    scf.yield %next, %acc2 : tensor<?xf64>, f64
  }
  return %r#1 : f64
}
"""


@pytest.mark.parametrize("steps", [0, 1, 5, 13])
@pytest.mark.parametrize("levels", [1, 2, 3])
def test_scf_for_with_checkpoints(steps, levels):
    x = rng.standard_normal(6)
    table = rng.uniform(0.5, 1.0, 4)
    check_vjp(LOOPS, "iterate", [x, np.float64(0.9), table, steps], wrt=[0, 1, 2], checkpoint_levels=levels)


KEPT_VALUES = """
func.func @log_sum_exp_steps(%x: tensor<?x?xf64>, %w: tensor<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %rows = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
    ^bb0(%row: tensor<?xf64>):
      %e = soac.map ins(%row, %w : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%v: f64, %u: f64):
        %s = arith.mulf %v, %u : f64
        %t = arith.addf %s, %acc : f64
        %ev = math.exp %t : f64
        soac.yield %ev : f64
      }
      %s = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb0(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      %l = math.log %s : f64
      %g = math.tanh %l : f64
      %p = arith.mulf %g, %l : f64
      soac.yield %p : f64
    }
    %total = soac.reduce ins(%rows : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %scaled = arith.mulf %total, %acc : f64
    %next = arith.addf %scaled, %total : f64
    %damped = math.sin %next : f64
    scf.yield %damped : f64
  }
  return %r : f64
}
"""


@pytest.mark.parametrize("rows, columns, steps", [(1, 1, 1), (4, 3, 3), (7, 5, 2)])
def test_values_kept_by_maps_for_their_adjoints(rows, columns, steps):
    # The row map keeps its nested exp map (a vector per row) and its log and
    # tanh (scalars) for its adjoint, inside a loop's backward sweep.
    x = rng.uniform(-0.5, 0.5, (rows, columns))
    w = rng.uniform(-0.5, 0.5, columns)
    check_vjp(KEPT_VALUES, "log_sum_exp_steps", [x, w, steps], wrt=[0, 1])


SCANS_AND_SCATTERS = """
func.func @cumsum(%x: tensor<?xf64>, %w: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %sq = soac.map ins(%x, %w : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %b : f64
    %s = math.sin %m : f64
    soac.yield %s : f64
  }
  %r = soac.scan ins(%sq : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

func.func @scatter(%dest: tensor<?xf64>, %idx: tensor<?xi64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %e = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %t = math.tanh %a : f64
    soac.yield %t : f64
  }
  %r = soac.scatter dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xi64>) ins(%e : tensor<?xf64>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}

func.func @histogram(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %sq = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %t = arith.mulf %a, %a : f64
    soac.yield %t : f64
  }
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%sq : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}
"""


@pytest.mark.parametrize("n", [1, 6, 30])
def test_scan_scatter_and_histogram_rules(n):
    check_vjp(SCANS_AND_SCATTERS, "cumsum", [rng.standard_normal(n), rng.standard_normal(n)])
    bins = n + 3
    # unique targets (the written value of a duplicate is unspecified), some out of range
    targets = rng.permutation(bins + 4)[:n].astype(np.int64) - 2
    check_vjp(SCANS_AND_SCATTERS, "scatter", [rng.standard_normal(bins), targets, rng.standard_normal(n)], wrt=[0, 2])
    indices = rng.integers(-1, 5, 3 * n)  # duplicates and out-of-range indices
    check_vjp(SCANS_AND_SCATTERS, "histogram", [rng.standard_normal(4), indices, rng.standard_normal(3 * n)], wrt=[0, 2])


SLICES = """
// rows of a free matrix picked by data (a row read: sparse, row by row)
func.func @pick_rows(%m: tensor<?x?xf64>, %rows: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%rows : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %n = tensor.dim %m, %c1 : tensor<?x?xf64>
    %row = tensor.extract_slice %m[%i, 0] [1, %n] [1, 1] : tensor<?x?xf64> to tensor<?xf64>
    %p = soac.map ins(%row, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %t = arith.mulf %a, %b : f64
      soac.yield %t : f64
    }
    %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %q = arith.mulf %s, %s : f64
    soac.yield %q : f64
  }
  return %r : tensor<?xf64>
}

// a block read and a block write at the top level
func.func @blocks(%m: tensor<4x5xf64>, %b: tensor<2x2xf64>) -> tensor<4x5xf64> {
  %blk = tensor.extract_slice %m[1, 2] [2, 2] [1, 2] : tensor<4x5xf64> to tensor<2x2xf64>
  %sum = soac.map ins(%blk, %b : tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64> {
  ^bb0(%r1: tensor<2xf64>, %r2: tensor<2xf64>):
    %s = soac.map ins(%r1, %r2 : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.mulf %x, %y : f64
      %u = math.exp %t : f64
      soac.yield %u : f64
    }
    soac.yield %s : tensor<2xf64>
  }
  %r = tensor.insert_slice %sum into %m[0, 0] [2, 2] [2, 1] : tensor<2x2xf64> into tensor<4x5xf64>
  return %r : tensor<4x5xf64>
}
"""


def test_slice_rules():
    check_vjp(SLICES, "pick_rows", [rng.standard_normal((4, 3)), rng.integers(0, 4, 7), rng.standard_normal(3)], wrt=[0, 2])
    check_vjp(SLICES, "blocks", [rng.standard_normal((4, 5)), rng.standard_normal((2, 2))])


WHILE = """
// repeat x <- x * w + sin(x) while the norm of x stays under a limit (at most 8
// times); the test forwards 2 x, so the results are the doubled final values
func.func @grow(%x: tensor<?xf64>, %w: f64, %limit: f64) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %r:2 = scf.while (%cur = %x, %i = %c0) : (tensor<?xf64>, index) -> (tensor<?xf64>, index) {
    %squares = soac.map ins(%cur : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %sq = arith.mulf %v, %v : f64
      soac.yield %sq : f64
    }
    %norm = soac.reduce ins(%squares : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %small = arith.cmpf olt, %norm, %limit : f64
    %more = arith.cmpi ult, %i, %c8 : index
    %go = arith.andi %small, %more : i1
    %doubled = soac.map ins(%cur : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %d = arith.mulf %v, %two : f64
      soac.yield %d : f64
    }
    scf.condition(%go) %doubled, %i : tensor<?xf64>, index
  } do {
  ^bb0(%d: tensor<?xf64>, %i: index):
    %next = soac.map ins(%d : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %h = arith.divf %v, %two : f64
      %m = arith.mulf %h, %w : f64
      %s = math.sin %h : f64
      %a = arith.addf %m, %s : f64
      soac.yield %a : f64
    }
    %j = arith.addi %i, %c1 : index
    scf.yield %next, %j : tensor<?xf64>, index
  }
  return %r#0 : tensor<?xf64>
}
"""


@pytest.mark.parametrize("limit", [0.01, 3.0, 1e9])  # 0, a few, and the capped 8 iterations
def test_scf_while_counts_its_iterations(limit):
    x = rng.uniform(0.1, 0.3, 5)
    check_vjp(WHILE, "grow", [x, np.float64(1.1), np.float64(limit)], wrt=[0, 1])


GENERAL_REDUCE = """
// logsumexp as a reduction with a non-trivial associative operator
func.func @logsumexp(%x: tensor<?xf64>) -> f64 {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %r = soac.reduce ins(%x : tensor<?xf64>) init(%ninf : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %m = arith.maximumf %a, %b : f64
    %n = arith.minimumf %a, %b : f64
    %d = arith.subf %n, %m : f64
    %e = math.exp %d : f64
    %l = math.log1p %e : f64
    %t = arith.addf %m, %l : f64
    soac.yield %t : f64
  }
  return %r : f64
}

// composing linear functions v -> a v + b: associative, not commutative, a tuple
func.func @compose(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.reduce ins(%a, %b : tensor<?xf64>, tensor<?xf64>) init(%one, %zero : f64, f64) -> f64, f64 {
  ^bb0(%a1: f64, %b1: f64, %a2: f64, %b2: f64):
    %a12 = arith.mulf %a1, %a2 : f64
    %t = arith.mulf %b1, %a2 : f64
    %b12 = arith.addf %t, %b2 : f64
    soac.yield %a12, %b12 : f64, f64
  }
  return %r#0, %r#1 : f64, f64
}
"""


@pytest.mark.parametrize("n", [1, 2, 9])
def test_general_reduce_operators(n):
    check_vjp(GENERAL_REDUCE, "logsumexp", [rng.standard_normal(n)])
    check_vjp(GENERAL_REDUCE, "compose", [rng.uniform(0.5, 1.5, n), rng.standard_normal(n)])


GENERAL_SCAN = """
func.func @running_logsumexp(%x: tensor<?xf64>) -> tensor<?xf64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %r = soac.scan ins(%x : tensor<?xf64>) init(%ninf : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %m = arith.maximumf %a, %b : f64
    %n = arith.minimumf %a, %b : f64
    %d = arith.subf %n, %m : f64
    %e = math.exp %d : f64
    %l = math.log1p %e : f64
    %t = arith.addf %m, %l : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

func.func @running_product(%x: tensor<?xf64>) -> tensor<?xf64> {
  %one = arith.constant 1.0 : f64
  %r = soac.scan ins(%x : tensor<?xf64>) init(%one : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.mulf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

// + over rows, from a neutral init that is an argument (zeros)
func.func @row_prefix(%m: tensor<?x2xf64>, %zeros: tensor<2xf64>) -> tensor<?x2xf64> {
  %r = soac.scan ins(%m : tensor<?x2xf64>) init(%zeros : tensor<2xf64>) -> tensor<?x2xf64> {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>):
    %s = soac.map ins(%a, %b : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%p: f64, %q: f64):
      %t = arith.addf %p, %q : f64
      soac.yield %t : f64
    }
    soac.yield %s : tensor<2xf64>
  }
  return %r : tensor<?x2xf64>
}
"""


@pytest.mark.parametrize("n", [1, 2, 7])
def test_general_scan_operators(n):
    check_vjp(GENERAL_SCAN, "running_logsumexp", [rng.standard_normal(n)])
    check_vjp(GENERAL_SCAN, "running_product", [rng.uniform(0.5, 1.5, n) * rng.choice([-1, 1], n)])
    check_vjp(GENERAL_SCAN, "row_prefix", [rng.standard_normal((n, 2)), np.zeros(2)], wrt=[0])
    # a tuple operator: composing linear functions (2 components)
    check_vjp(LIBRARY, "recurrence", [rng.uniform(0.5, 1.5, n), rng.standard_normal(n)])


BIN_REDUCTIONS = """
func.func @bin_max(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%ninf : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.maximumf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

func.func @bin_min(%dest: tensor<?xf64>, %idx: tensor<?xi64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xi64>) ins(%v : tensor<?xf64>) init(%inf : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.minimumf %b, %a : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

func.func @bin_product(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %one = arith.constant 1.0 : f64
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%one : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.mulf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}
"""


def test_reduce_by_index_min_max_and_product():
    dest = rng.standard_normal(4)
    idx = np.array([0, 2, 2, 5, 1, 0, -1, 2])
    values = rng.standard_normal(8)
    check_vjp(BIN_REDUCTIONS, "bin_max", [dest, idx, values], wrt=[0, 2])
    check_vjp(BIN_REDUCTIONS, "bin_min", [dest, idx.astype(np.int64), values], wrt=[0, 2])
    check_vjp(BIN_REDUCTIONS, "bin_product", [dest, idx, values], wrt=[0, 2])
    # exact at zeros: one zero in bin 2 keeps only its own partial; two zeros none
    with_zeros = values.copy()
    with_zeros[1] = 0.0
    check_vjp(BIN_REDUCTIONS, "bin_product", [dest, idx, with_zeros], wrt=[0, 2])
    with_zeros[2] = 0.0
    check_vjp(BIN_REDUCTIONS, "bin_product", [dest, idx, with_zeros], wrt=[0, 2])


def test_bin_max_sends_ties_to_dest_first_then_the_first_value():
    derivative = soac.mlir.vjp(BIN_REDUCTIONS, "bin_max", wrt=[0, 2])
    dest = np.array([1.0, 0.0])
    idx = np.array([0, 1, 1])
    values = np.array([1.0, 3.0, 3.0])  # ties with dest in bin 0, between values in bin 1
    _, d_dest, d_values = derivative(dest, idx, values, np.array([1.0, 1.0]))
    np.testing.assert_array_equal(d_dest, [1.0, 0.0])
    np.testing.assert_array_equal(d_values, [0.0, 1.0, 0.0])


GENERATE = """
// an outer-product-like table built element by element from free values
func.func @table(%x: tensor<?xf64>, %y: tensor<3xf64>, %s: f64) -> tensor<?x3xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %t = tensor.generate %n {
  ^bb0(%i: index, %j: index):
    %a = tensor.extract %x[%i] : tensor<?xf64>
    %b = tensor.extract %y[%j] : tensor<3xf64>
    %p = arith.mulf %a, %b : f64
    %q = math.sin %p : f64
    %r = arith.mulf %q, %s : f64
    tensor.yield %r : f64
  } : tensor<?x3xf64>
  return %t : tensor<?x3xf64>
}
"""


def test_tensor_generate():
    check_vjp(GENERATE, "table", [rng.standard_normal(4), rng.standard_normal(3), np.float64(0.7)])


STATIC_FREE = """
// R (static 3×3) times each (dynamic) row of M, summed: the rules see a
// static row of R next to a dynamic row of M
func.func @static_free(%M: tensor<?x?xf64>, %R: tensor<3x3xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %rows = soac.map ins(%M : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %Rr = soac.map ins(%R : tensor<3x3xf64>) -> tensor<3xf64> {
    ^bb0(%r: tensor<3xf64>):
      %p = soac.map ins(%r, %row : tensor<3xf64>, tensor<?xf64>) -> tensor<3xf64> {
      ^bb0(%a: f64, %b: f64):
        %m = arith.mulf %a, %b : f64
        soac.yield %m : f64
      }
      %s = soac.reduce ins(%p : tensor<3xf64>) init(%zero : f64) -> f64 {
      ^bb0(%u: f64, %v: f64):
        %t = arith.addf %u, %v : f64
        soac.yield %t : f64
      }
      soac.yield %s : f64
    }
    %s = soac.reduce ins(%Rr : tensor<3xf64>) init(%zero : f64) -> f64 {
    ^bb0(%u: f64, %v: f64):
      %t = arith.addf %u, %v : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  %total = soac.reduce ins(%rows : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%u: f64, %v: f64):
    %t = arith.addf %u, %v : f64
    soac.yield %t : f64
  }
  return %total : f64
}
"""


def test_static_and_dynamic_shapes_meet_in_a_body():
    M, R = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    check_vjp(STATIC_FREE, "static_free", [M, R])


COLUMN_MAX = """
// Σ_c w[c] · max_r X[r][c]: a reduce over rows with an elementwise max
func.func @column_max(%X: tensor<?x?xf64>, %w: tensor<?xf64>) -> f64 {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %m = tensor.dim %X, %c1 : tensor<?x?xf64>
  %init = tensor.splat %ninf[%m] : tensor<?xf64>
  %top = soac.reduce ins(%X : tensor<?x?xf64>) init(%init : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
    %c = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %t = arith.maximumf %u, %v : f64
      soac.yield %t : f64
    }
    soac.yield %c : tensor<?xf64>
  }
  %p = soac.map ins(%top, %w : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64, %v: f64):
    %t = arith.mulf %u, %v : f64
    soac.yield %t : f64
  }
  %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%u: f64, %v: f64):
    %t = arith.addf %u, %v : f64
    soac.yield %t : f64
  }
  return %s : f64
}
"""


def test_elementwise_max_of_rows_sends_each_column_to_its_first_maximum():
    X, w = rng.standard_normal((5, 4)), rng.standard_normal(4)
    check_vjp(COLUMN_MAX, "column_max", [X, w])
    ties = np.array([[1.0, 2.0], [3.0, 2.0], [3.0, 0.0]])
    gradient = soac.mlir.grad(COLUMN_MAX, "column_max", wrt=[0])(ties, np.array([1.0, 1.0]))
    np.testing.assert_array_equal(gradient, [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])


GATHERS_2D = """
// Element reads X[i, 0] * X[i, 1] of a matrix free in a map: their adjoint
// is a sparse accumulation into the flattened matrix, reshaped back.
func.func @first_columns(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %x, %c0 : tensor<?x?xf64>
  %i = soac.iota %rows : tensor<?xindex>
  %r = soac.map ins(%i : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%k: index):
    %a = tensor.extract %x[%k, %c0] : tensor<?x?xf64>
    %b = tensor.extract %x[%k, %c1] : tensor<?x?xf64>
    %p = arith.mulf %a, %b : f64
    soac.yield %p : f64
  }
  return %r : tensor<?xf64>
}

// The vjp as a function of the matrix, to differentiate once more.
func.func @first_columns_vjp(%x: tensor<?x?xf64>, %seed: tensor<?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.vjp @first_columns(%x, %seed) : (tensor<?x?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}
"""


def test_gather_of_elements_of_a_matrix_and_its_second_derivative():
    x = rng.standard_normal((5, 3))
    check_vjp(GATHERS_2D, "first_columns", [x])
    check_vjp(GATHERS_2D, "first_columns_vjp", [x, rng.standard_normal(5)], wrt=[0])


# The programs of test/AutoDiff/results-from-adjoint.mlir: maps whose adjoint
# map also yields their results (the forward run dropped), and maps whose
# results are read by value (the forward run kept). The values come from
# the adjoint map there: both are checked.
RESULTS_FROM_ADJOINT = (pathlib.Path(__file__).resolve().parents[1] / "AutoDiff" / "results-from-adjoint.mlir").read_text()


@pytest.mark.parametrize(
    "function, args",
    [
        ("loss", lambda: [rng.standard_normal(7), 0.25]),
        ("log_likelihood", lambda: [rng.standard_normal((5, 4))]),
        ("mean", lambda: [rng.standard_normal(6)]),
        ("read_by_value", lambda: [rng.standard_normal(5), rng.standard_normal(5)]),
        ("weighted", lambda: [rng.standard_normal(4), 1.5]),
    ],
)
def test_maps_whose_adjoint_yields_their_results(function, args):
    source = "\n".join(part for part in RESULTS_FROM_ADJOINT.split("// -----") if f"@{function}(" in part)
    check_vjp(source, function, args())
