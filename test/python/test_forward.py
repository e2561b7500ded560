"""Forward-mode derivatives (soac.jvp) against central finite differences
(float64), through compiled code and the reference interpreter, on the
programs of the reverse-mode tests; Hessian-vector products and Jacobians."""

from __future__ import annotations

import numpy as np
import pytest

import soac
from gradcheck import check_jvp, finite_difference_vjp
from test_autodiff import (
    BIN_REDUCTIONS, EXAMPLES, GENERAL_REDUCE, GENERAL_SCAN, GENERATE, LIBRARY, LOOPS, PROGRAMS, SCALARS,
    SCANS_AND_SCATTERS, SLICES, STATIC_FREE, WHILE,
)

rng = np.random.default_rng(17)
# The example in float64 (its -inf constant too).
SOFTMAX_MATVEC = (EXAMPLES / "softmax_matvec.mlir").read_text().replace("f32", "f64").replace("0xFF800000", "0xFFF0000000000000")


@pytest.mark.parametrize("x,y", [(0.7, 1.9), (-1.3, 0.4), (2.2, 3.5)])
def test_arith_and_math_rules(x, y):
    check_jvp(SCALARS, "arith", [np.float64(x), np.float64(y)])
    if x > 0:  # powf(y, x) and the logs want y > 0
        check_jvp(SCALARS, "math", [np.float64(x), np.float64(y)])
    check_jvp(SCALARS, "math", [np.float64(-abs(x)), np.float64(y)])


@pytest.mark.parametrize("n", [1, 7, 40])
def test_map_with_gathers_free_values_and_branches(n):
    x = rng.standard_normal(n)
    check_jvp(LIBRARY, "gather_squares", [x, rng.integers(0, n, 2 * n)], wrt=[0])
    rows = rng.integers(0, 3, n)
    check_jvp(PROGRAMS, "branchy", [x, np.float64(0.8), rng.standard_normal((3, 4)), rows], wrt=[0, 1, 2])


@pytest.mark.parametrize(
    "x", [np.array([1.5, -2.0, 0.5, 3.0]), np.array([1.5, 0.0, 0.5, 3.0]), np.array([0.0, 2.0, 0.0, -1.0])]
)
def test_reduce_operators_on_pairs(x):
    # +, * (exact at zeros: the product rule needs no division), min, max
    check_jvp(PROGRAMS, "reductions", [x, np.float64(1.25)])


def test_calls_tensor_ops_and_library_programs():
    check_jvp(PROGRAMS, "tensors", [rng.standard_normal(5), np.float64(0.6)])
    check_jvp(LIBRARY, "matvec", [rng.standard_normal((4, 3)), rng.standard_normal(3)])
    check_jvp(LIBRARY, "sum_of_squares", [rng.standard_normal(9).astype(np.float32)], rtol=2e-2, atol=1e-3)
    check_jvp(SOFTMAX_MATVEC, "softmax_matvec", [rng.standard_normal((6, 4)), rng.standard_normal(4)])


@pytest.mark.parametrize("steps", [0, 1, 5, 13])
def test_scf_for_carries_tangents(steps):
    x, table = rng.standard_normal(6), rng.uniform(0.5, 1.0, 4)
    check_jvp(LOOPS, "iterate", [x, np.float64(0.9), table, steps], wrt=[0, 1, 2])


@pytest.mark.parametrize("limit", [0.01, 3.0, 1e9])
def test_scf_while_carries_tangents(limit):
    check_jvp(WHILE, "grow", [rng.uniform(0.1, 0.3, 5), np.float64(1.1), np.float64(limit)], wrt=[0, 1])


@pytest.mark.parametrize("n", [1, 6, 30])
def test_scan_scatter_and_histogram(n):
    check_jvp(SCANS_AND_SCATTERS, "cumsum", [rng.standard_normal(n), rng.standard_normal(n)])
    bins = n + 3
    targets = rng.permutation(bins + 4)[:n].astype(np.int64) - 2  # unique, some out of range
    check_jvp(SCANS_AND_SCATTERS, "scatter", [rng.standard_normal(bins), targets, rng.standard_normal(n)], wrt=[0, 2])
    indices = rng.integers(-1, 5, 3 * n)
    check_jvp(SCANS_AND_SCATTERS, "histogram", [rng.standard_normal(4), indices, rng.standard_normal(3 * n)], wrt=[0, 2])


def test_slices_and_generate():
    check_jvp(SLICES, "pick_rows", [rng.standard_normal((4, 3)), rng.integers(0, 4, 7), rng.standard_normal(3)], wrt=[0, 2])
    check_jvp(SLICES, "blocks", [rng.standard_normal((4, 5)), rng.standard_normal((2, 2))])
    check_jvp(GENERATE, "table", [rng.standard_normal(4), rng.standard_normal(3), np.float64(0.7)])


@pytest.mark.parametrize("n", [1, 2, 9])
def test_general_operators_on_pairs(n):
    check_jvp(GENERAL_REDUCE, "logsumexp", [rng.standard_normal(n)])
    check_jvp(GENERAL_REDUCE, "compose", [rng.uniform(0.5, 1.5, n), rng.standard_normal(n)])
    check_jvp(GENERAL_SCAN, "running_logsumexp", [rng.standard_normal(n)])
    check_jvp(GENERAL_SCAN, "row_prefix", [rng.standard_normal((n, 2)), np.zeros(2)], wrt=[0])
    check_jvp(LIBRARY, "recurrence", [rng.uniform(0.5, 1.5, n), rng.standard_normal(n)])


def test_reduce_by_index_min_max_and_product():
    dest, values = rng.standard_normal(4), rng.standard_normal(8)
    idx = np.array([0, 2, 2, 5, 1, 0, -1, 2])
    for function in ("bin_max", "bin_min", "bin_product"):
        check_jvp(BIN_REDUCTIONS, function, [dest, idx, values], wrt=[0, 2])


def test_ops_without_forward_rules_are_errors_at_their_location():
    source = """
    func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
      %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%a: f64):
        %t = math.atan2 %a, %a : f64
        soac.yield %t : f64
      }
      return %r : tensor<?xf64>
    }"""
    with pytest.raises(soac.LoweringError, match=r"-:5:14: error: 'math.atan2' op has no forward-mode derivative rule"):
        soac.mlir.jvp(source, "f")


QUADRATIC = """
// ½ xᵀAx with A symmetric: the Hessian is A
func.func @quadratic(%A: tensor<?x?xf64>, %x: tensor<?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %Ax = soac.map ins(%A : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %p = soac.map ins(%row, %x : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %m = arith.mulf %a, %b : f64
      soac.yield %m : f64
    }
    %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%u: f64, %v: f64):
      %t = arith.addf %u, %v : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  %xAx = soac.map ins(%x, %Ax : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %b : f64
    soac.yield %m : f64
  }
  %s = soac.reduce ins(%xAx : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%u: f64, %v: f64):
    %t = arith.addf %u, %v : f64
    soac.yield %t : f64
  }
  %r = arith.mulf %s, %half : f64
  return %r : f64
}

// Σ sin(x)² after k steps of x <- x·w + tanh(x): map, reduce and a loop
func.func @looped(%x: tensor<?xf64>, %w: f64, %k: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %final = scf.for %i = %c0 to %k step %c1 iter_args(%v = %x) -> (tensor<?xf64>) {
    %next = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%e: f64):
      %a = arith.mulf %e, %w : f64
      %b = math.tanh %e : f64
      %c = arith.addf %a, %b : f64
      soac.yield %c : f64
    }
    scf.yield %next : tensor<?xf64>
  }
  %sq = soac.map ins(%final : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%e: f64):
    %s = math.sin %e : f64
    %q = arith.mulf %s, %s : f64
    soac.yield %q : f64
  }
  %r = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%u: f64, %v: f64):
    %t = arith.addf %u, %v : f64
    soac.yield %t : f64
  }
  return %r : f64
}
"""


def test_hvp_of_a_quadratic_form_is_exact():
    B = rng.standard_normal((5, 5))
    A, x, v = B + B.T, rng.standard_normal(5), rng.standard_normal(5)
    hvp = soac.mlir.hvp(QUADRATIC, "quadratic", wrt=[1])
    np.testing.assert_allclose(hvp(A, x, v), A @ v, rtol=1e-12)
    np.testing.assert_allclose(soac.interpret(hvp.module, hvp.function, A, x, v), A @ v, rtol=1e-12)


@pytest.mark.parametrize("steps", [0, 3])
def test_hvp_of_a_program_with_map_reduce_and_loop(steps):
    x, w, v = rng.standard_normal(6), np.float64(0.7), rng.standard_normal(6)
    hvp = soac.mlir.hvp(QUADRATIC, "looped", wrt=[0])
    grad = soac.mlir.grad(QUADRATIC, "looped", wrt=[0])
    # H·v = d/dε ∇f(x + εv): central differences of the gradient
    step = 1e-6
    expected = (grad(x + step * v, w, steps) - grad(x - step * v, w, steps)) / (2 * step)
    np.testing.assert_allclose(hvp(x, w, steps, v), expected, rtol=1e-6, atol=1e-8)


def test_reverse_over_forward():
    # the gradient of x ↦ ∇f(x)·t (a jvp inside a vjp) is H·t
    source = QUADRATIC + """
    func.func @directional(%A: tensor<?x?xf64>, %x: tensor<?xf64>, %t: tensor<?xf64>) -> f64 {
      %r:2 = soac.jvp @quadratic(%A, %x, %t) wrt [1] : (tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>) -> (f64, f64)
      return %r#1 : f64
    }"""
    B = rng.standard_normal((4, 4))
    A, x, t = B + B.T, rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(soac.mlir.grad(source, "directional", wrt=[1])(A, x, t), A @ t, rtol=1e-12)


def test_jacobians_forward_and_reverse_agree_with_finite_differences():
    A, x = rng.standard_normal((3, 4)), rng.standard_normal(4)
    program = SOFTMAX_MATVEC
    forward = soac.mlir.jacfwd(program, "softmax_matvec", wrt=1)(A, x)
    reverse = soac.mlir.jacrev(program, "softmax_matvec", wrt=1)(A, x)
    primal = soac.compile(program, "softmax_matvec")
    expected = np.stack([finite_difference_vjp(primal, [A, x], [1], [row])[0] for row in np.eye(3)])
    assert forward.shape == reverse.shape == (3, 4)
    np.testing.assert_allclose(forward, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(reverse, expected, rtol=1e-6, atol=1e-9)
    # matvec is linear in x: its Jacobian is A
    np.testing.assert_allclose(soac.mlir.jacfwd(LIBRARY, "matvec", wrt=1)(A, x), A, rtol=1e-12)


# Programs for the vector-mode tests: (source, function, arguments, wrt).
LANE_CASES = [
    (LOOPS, "iterate", lambda: [rng.standard_normal(6), np.float64(0.9), rng.uniform(0.5, 1.0, 4), 5], [0, 1, 2]),
    (PROGRAMS, "branchy", lambda: [rng.standard_normal(7), np.float64(0.8), rng.standard_normal((3, 4)), rng.integers(0, 3, 7)], [0, 1, 2]),
    (LIBRARY, "recurrence", lambda: [rng.uniform(0.5, 1.5, 5), rng.standard_normal(5)], [0, 1]),
    (BIN_REDUCTIONS, "bin_max", lambda: [rng.standard_normal(4), np.array([0, 2, 2, 5, 1, 0, -1, 2]), rng.standard_normal(8)], [0, 2]),
    (WHILE, "grow", lambda: [rng.uniform(0.1, 0.3, 5), np.float64(1.1), np.float64(3.0)], [0, 1]),
    (GENERAL_SCAN, "running_logsumexp", lambda: [rng.standard_normal(6)], [0]),
]


# 11 lanes: one body of 8 called for two chunks, the second padded.
@pytest.mark.parametrize("width", [3, 11])
@pytest.mark.parametrize("source,function,make_args,wrt", LANE_CASES)
def test_vector_mode_equals_one_jvp_per_lane(source, function, make_args, wrt, width):
    args = make_args()
    stacks = [np.stack([np.asarray(rng.standard_normal(np.shape(args[w]))) for _ in range(width)]) for w in wrt]
    vector = soac.mlir.jvp(source, function, wrt=wrt, width=width)
    single = soac.mlir.jvp(source, function, wrt=wrt)
    got = vector(*args, *stacks)
    lanes = [single(*args, *[s[lane] if s[lane].shape else s[lane][()] for s in stacks]) for lane in range(width)]
    lanes = [lane if isinstance(lane, tuple) else (lane,) for lane in lanes]
    num_results = len(lanes[0]) // 2
    for k in range(num_results):
        np.testing.assert_allclose(got[k], lanes[0][k], rtol=1e-12)
        expected = np.stack([np.asarray(lane[num_results + k]) for lane in lanes])
        np.testing.assert_allclose(got[num_results + k], expected, rtol=1e-12, atol=1e-14)


def test_jacfwd_in_chunks_pads_the_last_one():
    A, x = rng.standard_normal((3, 5)), rng.standard_normal(5)
    for width in (1, 2, 5, 8):  # 5 columns: chunks of 2 leave a padded last chunk
        np.testing.assert_allclose(soac.mlir.jacfwd(LIBRARY, "matvec", wrt=1, width=width)(A, x), A, rtol=1e-12)


def test_static_and_dynamic_shapes_meet_in_a_body():
    check_jvp(STATIC_FREE, "static_free", [rng.standard_normal((4, 3)), rng.standard_normal((3, 3))])


@pytest.mark.parametrize("width", [3, 11])
@pytest.mark.parametrize("source,function,make_args,wrt", LANE_CASES)
def test_vector_mode_vjp_equals_one_vjp_per_lane(source, function, make_args, wrt, width):
    args = make_args()
    results = soac.compile(source, function)(*args)
    results = results if isinstance(results, tuple) else (results,)
    stacks = [np.stack([np.asarray(rng.standard_normal(np.shape(r))) for _ in range(width)]) for r in results]
    vector = soac.mlir.vjp(source, function, wrt=wrt, width=width)
    single = soac.mlir.vjp(source, function, wrt=wrt)
    got = vector(*args, *stacks)
    lanes = [single(*args, *[s[lane] if s[lane].shape else s[lane][()] for s in stacks]) for lane in range(width)]
    lanes = [lane if isinstance(lane, tuple) else (lane,) for lane in lanes]
    n = len(results)
    for k in range(n):
        np.testing.assert_allclose(got[k], lanes[0][k], rtol=1e-12)
    for g in range(len(wrt)):
        expected = np.stack([np.asarray(lane[n + g]) for lane in lanes])
        np.testing.assert_allclose(got[n + g], expected, rtol=1e-12, atol=1e-14)
    # the IR interpreter agrees with the compiled vector mode
    flat = [s[lane] if s[lane].shape else s[lane][()] for s in stacks for lane in range(width)]
    interpreted = soac.interpret(vector.module, vector.function, *args, *flat)
    for g in range(len(wrt)):
        for lane in range(width):
            np.testing.assert_allclose(interpreted[n + g * width + lane], got[n + g][lane], rtol=1e-10, atol=1e-12)


def test_jacrev_in_chunks_pads_the_last_one():
    A, x = rng.standard_normal((5, 3)), rng.standard_normal(3)
    for width in (1, 2, 5, 8):  # 5 rows: chunks of 2 leave a padded last chunk
        np.testing.assert_allclose(soac.mlir.jacrev(LIBRARY, "matvec", wrt=1, width=width)(A, x), A, rtol=1e-12)
