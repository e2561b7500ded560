"""Reverse rules of reduce, scan and reduce_by_index for every operator, and of
scatter with duplicate indices: central finite differences and the
dot-product test (float64), with the ties of min/max and the zeros of *."""

from __future__ import annotations

import numpy as np
import pytest

import soac
from gradcheck import check_dot_product, check_vjp

rng = np.random.default_rng(23)


def elementwise_program(kind: str, op: str, row: tuple[int, ...], neutral: str) -> str:
    """`@f` applying `op` (an arith op on f64) elementwise to rows of shape
    `row` in a `kind` (reduce, scan or reduce_by_index) from `neutral`."""
    row_type = f"tensor<{'x'.join(map(str, row))}xf64>"
    rows = f"tensor<?x{'x'.join(map(str, row))}xf64>"

    def body(a: str, b: str, shape: tuple[int, ...], depth: int = 0) -> str:
        if not shape:
            return f"%t{depth} = arith.{op} %{a}, %{b} : f64\n soac.yield %t{depth} : f64"
        inner = f"tensor<{'x'.join(map(str, shape[1:]))}xf64>" if len(shape) > 1 else "f64"
        here = f"tensor<{'x'.join(map(str, shape))}xf64>"
        return (
            f"%m{depth} = soac.map ins(%{a}, %{b} : {here}, {here}) -> {here} {{\n"
            f"^bb0(%p{depth}: {inner}, %q{depth}: {inner}):\n"
            f"{body(f'p{depth}', f'q{depth}', shape[1:], depth + 1)}\n}}\n"
            f"soac.yield %m{depth} : {here}"
        )

    operator = f"{{\n^bb0(%a: {row_type}, %b: {row_type}):\n{body('a', 'b', row)}\n}}"
    init = f"%c = arith.constant {neutral} : f64\n %ne = tensor.splat %c : {row_type}"
    if kind == "reduce":
        return (
            f"func.func @f(%x: {rows}) -> {row_type} {{\n {init}\n"
            f" %r = soac.reduce ins(%x : {rows}) init(%ne : {row_type}) -> {row_type} {operator}\n"
            f" return %r : {row_type}\n}}"
        )
    if kind == "scan":
        return (
            f"func.func @f(%x: {rows}) -> {rows} {{\n {init}\n"
            f" %r = soac.scan ins(%x : {rows}) init(%ne : {row_type}) -> {rows} {operator}\n"
            f" return %r : {rows}\n}}"
        )
    return (
        f"func.func @f(%dest: {rows}, %idx: tensor<?xindex>, %x: {rows}) -> {rows} {{\n {init}\n"
        f" %r = soac.reduce_by_index dest(%dest : {rows}) indices(%idx : tensor<?xindex>) ins(%x : {rows})"
        f" init(%ne : {row_type}) -> {rows} {operator}\n"
        f" return %r : {rows}\n}}"
    )


NEUTRAL = {"mulf": "1.0", "minimumf": "0x7FF0000000000000", "maximumf": "0xFFF0000000000000"}


def with_zeros(x: np.ndarray, count: int) -> np.ndarray:
    """`x` with `count` exact zeros in its first column of rows (one bin, one
    reduction, one prefix)."""
    x = x.copy()
    flat = x.reshape(len(x), -1)
    flat[:count, 0] = 0.0
    return flat.reshape(x.shape)


@pytest.mark.parametrize("op", ["mulf", "minimumf", "maximumf"])
@pytest.mark.parametrize("row", [(3,), (2, 3)])
@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_reduce_and_scan_of_rows_combined_elementwise(op, row, zeros):
    x = with_zeros(rng.uniform(0.5, 1.5, (5, *row)) * rng.choice([-1, 1], (5, *row)), zeros if op == "mulf" else 0)
    for kind in ("reduce", "scan"):
        source = elementwise_program(kind, op, row, NEUTRAL[op])
        check_vjp(source, "f", [x])
        check_dot_product(source, "f", [x])


@pytest.mark.parametrize("op", ["mulf", "minimumf", "maximumf"])
@pytest.mark.parametrize("row", [(3,), (2, 3)])
@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_reduce_by_index_of_rows_combined_elementwise(op, row, zeros):
    idx = np.array([0, 2, 2, 5, 1, 0, -1, 2])
    x = rng.uniform(0.5, 1.5, (8, *row)) * rng.choice([-1, 1], (8, *row))
    if op == "mulf" and zeros:
        x[1].flat[0] = 0.0  # bin 2
        if zeros > 1:
            x[2].flat[0] = 0.0
    dest = rng.standard_normal((4, *row))
    source = elementwise_program("reduce_by_index", op, row, NEUTRAL[op])
    check_vjp(source, "f", [dest, idx, x], wrt=[0, 2])
    check_dot_product(source, "f", [dest, idx, x], wrt=[0, 2])


def test_elementwise_extremum_of_rows_sends_ties_to_the_first():
    """Per column, the adjoint goes to the first extremum (dest first in a
    bin, then the first value), as the scalar rules do."""
    source = elementwise_program("reduce_by_index", "maximumf", (2,), NEUTRAL["maximumf"])
    derivative = soac.mlir.vjp(source, "f", wrt=[0, 2])
    dest = np.array([[1.0, 0.0]])
    x = np.array([[1.0, 3.0], [0.5, 3.0]])
    _, d_dest, d_x = derivative(dest, np.array([0, 0]), x, np.ones((1, 2)))
    np.testing.assert_array_equal(d_dest, [[1.0, 0.0]])
    np.testing.assert_array_equal(d_x, [[0.0, 1.0], [0.0, 0.0]])
    source = elementwise_program("reduce", "minimumf", (2, 2), NEUTRAL["minimumf"])
    x = np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [3.0, 5.0]]])
    _, d_x = soac.mlir.vjp(source, "f")(x, np.ones((2, 2)))
    np.testing.assert_array_equal(d_x, [[[1.0, 0.0], [1.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]]])


def scalar_program(kind: str, op: str, neutral: str) -> str:
    """`@f`: the same SOAC as `elementwise_program` on scalar rows."""
    operator = f"{{\n^bb0(%a: f64, %b: f64):\n %t = arith.{op} %a, %b : f64\n soac.yield %t : f64\n}}"
    init = f"%ne = arith.constant {neutral} : f64"
    if kind == "reduce":
        return (f"func.func @f(%x: tensor<?xf64>) -> f64 {{\n {init}\n %r = soac.reduce ins(%x : tensor<?xf64>)"
                f" init(%ne : f64) -> f64 {operator}\n return %r : f64\n}}")
    if kind == "scan":
        return (f"func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {{\n {init}\n %r = soac.scan ins(%x : tensor<?xf64>)"
                f" init(%ne : f64) -> tensor<?xf64> {operator}\n return %r : tensor<?xf64>\n}}")
    return (f"func.func @f(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %x: tensor<?xf64>) -> tensor<?xf64> {{\n {init}\n"
            f" %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%x : tensor<?xf64>)"
            f" init(%ne : f64) -> tensor<?xf64> {operator}\n return %r : tensor<?xf64>\n}}")


@pytest.mark.parametrize("kind", ["reduce", "scan", "reduce_by_index"])
@pytest.mark.parametrize("op", ["mulf", "minimumf", "maximumf"])
def test_rows_combined_elementwise_get_the_scalar_rule_per_column_at_ties_and_zeros(kind, op):
    """Exactly the scalar rule's gradient per column, where the gradient
    depends on conventions: ties of min/max (several equal values in a
    column, and equal to dest), several zeros for *."""
    columns = np.array([[2.0, 0.0, 2.0, 1.0, 2.0], [0.0, 3.0, 0.0, 0.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    x = columns.T.copy()  # rows of 3
    bar_shape = {"reduce": (3,), "scan": (5, 3), "reduce_by_index": (2, 3)}[kind]
    bar = np.arange(1.0, 1.0 + np.prod(bar_shape)).reshape(bar_shape)
    rows = soac.mlir.vjp(elementwise_program(kind, op, (3,), NEUTRAL[op]), "f", wrt=[0, 2] if kind == "reduce_by_index" else [0])
    scalars = soac.mlir.vjp(scalar_program(kind, op, NEUTRAL[op]), "f", wrt=[0, 2] if kind == "reduce_by_index" else [0])
    if kind == "reduce_by_index":
        idx = np.array([0, 1, 0, 0, 1])
        dest = np.array([[2.0, 3.0, 1.0], [0.0, 3.0, 1.0]])
        got = rows(dest, idx, x, bar)[1:]
        for c in range(3):
            expected = scalars(dest[:, c].copy(), idx, columns[c], bar[:, c].copy())[1:]
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g[:, c], e)
        return
    d_x = rows(x, bar)[1]
    for c in range(3):
        np.testing.assert_array_equal(d_x[:, c], scalars(columns[c], bar[..., c].copy())[1])


GENERAL_HISTOGRAMS = """
// x ⊙ y = 2xy (neutral 1/2): associative and commutative, not a recognized op
func.func @scaled_product(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %half = arith.constant 0.5 : f64
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%half : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %two = arith.constant 2.0 : f64
    %t = arith.mulf %a, %b : f64
    %u = arith.mulf %t, %two : f64
    soac.yield %u : f64
  }
  return %r : tensor<?xf64>
}

// saturating addition on non-negative values: min(x + y, 3)
func.func @saturating_add(%dest: tensor<?xf64>, %idx: tensor<?xi64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xi64>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %cap = arith.constant 3.0 : f64
    %s = arith.addf %a, %b : f64
    %t = arith.minimumf %s, %cap : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

// argmax as a tuple operator: the larger value, the smaller index on ties
func.func @argmax(%dest: tensor<?xf64>, %at: tensor<?xi64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %i: tensor<?xi64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %none = arith.constant 1000000 : i64
  %r:2 = soac.reduce_by_index dest(%dest, %at : tensor<?xf64>, tensor<?xi64>) indices(%idx : tensor<?xindex>) ins(%v, %i : tensor<?xf64>, tensor<?xi64>) init(%ninf, %none : f64, i64) -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%v1: f64, %i1: i64, %v2: f64, %i2: i64):
    %gt = arith.cmpf ogt, %v1, %v2 : f64
    %eq = arith.cmpf oeq, %v1, %v2 : f64
    %lt = arith.cmpi slt, %i1, %i2 : i64
    %tie = arith.andi %eq, %lt : i1
    %first = arith.ori %gt, %tie : i1
    %vm = arith.select %first, %v1, %v2 : f64
    %im = arith.select %first, %i1, %i2 : i64
    soac.yield %vm, %im : f64, i64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi64>
}

// a linear recurrence as a tuple operator: composing v -> a v + b
func.func @recurrence(%da: tensor<?xf64>, %db: tensor<?xf64>, %idx: tensor<?xindex>, %a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.reduce_by_index dest(%da, %db : tensor<?xf64>, tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%a, %b : tensor<?xf64>, tensor<?xf64>) init(%one, %zero : f64, f64) -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%a1: f64, %b1: f64, %a2: f64, %b2: f64):
    %a12 = arith.mulf %a1, %a2 : f64
    %t = arith.mulf %b1, %a2 : f64
    %b12 = arith.addf %t, %b2 : f64
    soac.yield %a12, %b12 : f64, f64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xf64>
}
"""

BINS = np.array([0, 2, 2, 5, 1, 0, -1, 2, 3, 2])


@pytest.mark.parametrize("n", [0, 1, 10])
def test_reduce_by_index_with_general_operators(n):
    idx = BINS[:n]
    v = rng.uniform(0.5, 1.5, n) * rng.choice([-1, 1], n)
    dest = rng.standard_normal(4)
    check_vjp(GENERAL_HISTOGRAMS, "scaled_product", [dest, idx, v], wrt=[0, 2])
    check_dot_product(GENERAL_HISTOGRAMS, "scaled_product", [dest, idx, v], wrt=[0, 2])
    # bin 2 saturates, the others do not
    dest = np.array([0.1, 0.2, 1.0, 0.3])
    v = np.array([0.3, 0.9, 0.8, 0.1, 0.4, 0.2, 5.0, 0.7, 0.6, 0.5])[:n]
    check_vjp(GENERAL_HISTOGRAMS, "saturating_add", [dest, idx.astype(np.int64), v], wrt=[0, 2])
    check_dot_product(GENERAL_HISTOGRAMS, "saturating_add", [dest, idx.astype(np.int64), v], wrt=[0, 2])
    a, b = rng.uniform(0.5, 1.5, n), rng.standard_normal(n)
    da, db = rng.uniform(0.5, 1.5, 4), rng.standard_normal(4)
    check_vjp(GENERAL_HISTOGRAMS, "recurrence", [da, db, idx, a, b], wrt=[0, 1, 3, 4])
    check_dot_product(GENERAL_HISTOGRAMS, "recurrence", [da, db, idx, a, b], wrt=[0, 1, 3, 4])
    # scaled_product with exact zeros: one, then several in bin 2
    for zeros in ([1], [1, 2]):
        v = rng.uniform(0.5, 1.5, 10)
        v[zeros] = 0.0
        check_vjp(GENERAL_HISTOGRAMS, "scaled_product", [rng.standard_normal(4), BINS, v], wrt=[0, 2])


def test_argmax_histogram_sends_the_adjoint_to_the_winner():
    dest = np.array([0.5, -1.0, 2.0])
    at = np.array([100, 101, 102], dtype=np.int64)
    idx = np.array([0, 1, 1, 2, 0, 1])
    v = np.array([0.7, 3.0, 3.0, 1.0, 0.2, -2.0])  # bin 1: a tie, the lower index wins
    i = np.arange(6, dtype=np.int64)
    derivative = soac.mlir.vjp(GENERAL_HISTOGRAMS, "argmax", wrt=[0, 3])
    h, winner, d_dest, d_v = derivative(dest, at, idx, v, i, np.array([1.0, 2.0, 3.0]), np.zeros(3, dtype=np.int64))
    np.testing.assert_array_equal(h, [0.7, 3.0, 2.0])
    np.testing.assert_array_equal(winner, [0, 1, 102])
    np.testing.assert_array_equal(d_dest, [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(d_v, [1.0, 2.0, 0.0, 0.0, 0.0, 0.0])
    check_vjp(GENERAL_HISTOGRAMS, "argmax", [dest, at, idx, rng.standard_normal(6), i], wrt=[0, 3])


SCATTER = """
func.func @scatter(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.scatter dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}

func.func @scatter_rows(%dest: tensor<?x2xf64>, %idx: tensor<?xi32>, %v: tensor<?x2xf64>) -> tensor<?x2xf64> {
  %r = soac.scatter dest(%dest : tensor<?x2xf64>) indices(%idx : tensor<?xi32>) ins(%v : tensor<?x2xf64>) -> tensor<?x2xf64>
  return %r : tensor<?x2xf64>
}
"""


def test_scatter_with_duplicates_gives_the_adjoint_to_the_surviving_writer_only():
    idx = np.array([1, 3, 1, 1, -2, 7, 3])
    v = rng.standard_normal(7)
    dest = rng.standard_normal(5)
    check_vjp(SCATTER, "scatter", [dest, idx, v], wrt=[0, 2])
    check_dot_product(SCATTER, "scatter", [dest, idx, v], wrt=[0, 2])
    _, d_dest, d_v = soac.mlir.vjp(SCATTER, "scatter", wrt=[0, 2])(dest, idx, v, np.ones(5))
    np.testing.assert_array_equal(d_v, [0, 0, 0, 1, 0, 0, 1])  # the last writers of 1 and 3
    np.testing.assert_array_equal(d_dest, [1, 0, 1, 0, 1])
    # equal values: still one writer gets the adjoint
    _, _, d_v = soac.mlir.vjp(SCATTER, "scatter", wrt=[0, 2])(dest, np.array([2, 2]), np.array([4.0, 4.0]), np.ones(5))
    np.testing.assert_array_equal(d_v, [0.0, 1.0])
    rows = rng.standard_normal((6, 2))
    check_vjp(SCATTER, "scatter_rows", [rng.standard_normal((4, 2)), np.array([0, 2, 0, 3, 2, 9], dtype=np.int32), rows], wrt=[0, 2])


POWERS = """
func.func @power(%x: tensor<?xf64>, %p: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.map ins(%x, %p : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %y = math.powf %a, %b : f64
    soac.yield %y : f64
  }
  return %r : tensor<?xf64>
}

func.func @power_int(%x: tensor<?xf64>, %n: tensor<?xi32>) -> tensor<?xf64> {
  %r = soac.map ins(%x, %n : tensor<?xf64>, tensor<?xi32>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: i32):
    %y = math.fpowi %a, %b : f64, i32
    soac.yield %y : f64
  }
  return %r : tensor<?xf64>
}
"""


def test_pow_at_zero_has_finite_partials_where_the_derivative_is_finite():
    """At x = 0: ∂/∂x x^p is 0 for p = 0 and p > 1, 1 for p = 1, +∞ for
    0 < p < 1 (one-sided); ∂/∂p x^p is 0 for p > 0. Both modes agree."""
    x = np.zeros(5)
    p = np.array([0.0, 1.0, 2.0, 3.5, 0.5])
    _, d_x, d_p = soac.mlir.vjp(POWERS, "power")(x, p, np.ones(5))
    np.testing.assert_array_equal(d_x, [0.0, 1.0, 0.0, 0.0, np.inf])
    np.testing.assert_array_equal(d_p[1:], [0.0, 0.0, 0.0, 0.0])
    _, t_x = soac.mlir.jvp(POWERS, "power", wrt=[0])(x, p, np.ones(5))
    np.testing.assert_array_equal(t_x, d_x)
    _, t_p = soac.mlir.jvp(POWERS, "power", wrt=[1])(x, p, np.ones(5))
    np.testing.assert_array_equal(t_p[1:], d_p[1:])
    _, d_x = soac.mlir.vjp(POWERS, "power_int", wrt=[0])(x, np.array([0, 1, 2, 3, 4], dtype=np.int32), np.ones(5))
    np.testing.assert_array_equal(d_x, [0.0, 1.0, 0.0, 0.0, 0.0])
    # away from zero the partials are the usual ones
    x = rng.uniform(0.5, 2.0, 4)
    p = rng.uniform(-1.5, 2.5, 4)
    check_vjp(POWERS, "power", [x, p])
    check_dot_product(POWERS, "power", [x, p])


@pytest.mark.parametrize("source,function", [(SCATTER, "scatter"), (GENERAL_HISTOGRAMS, "scaled_product")])
def test_the_new_adjoints_lower_for_the_gpu(source, function):
    """No GPU needed: the adjoints use only what the GPU lowering takes (the
    survivors' keys are i64, which GPU atomics take, not index)."""
    from mlir import ir

    from soac.compiler import GpuOptions, lower

    derivative = soac.mlir.vjp(source, function, wrt=[0, 2])
    with ir.Context():
        lower(soac.parse(str(derivative.module)), options=GpuOptions(), only=derivative.function)


SECOND_ORDER = """
func.func @d_scaled_product(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %c: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %r:3 = soac.vjp @scaled_product(%dest, %idx, %v, %c) wrt [0, 2] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>)
  return %r#1, %r#2 : tensor<?xf64>, tensor<?xf64>
}

func.func @d_scatter(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %c: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %r:3 = soac.vjp @scatter(%dest, %idx, %v, %c) wrt [0, 2] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>)
  return %r#1, %r#2 : tensor<?xf64>, tensor<?xf64>
}

// a running argmax: a scan whose operator has an integer component
func.func @running_argmax(%v: tensor<?xf64>, %i: tensor<?xi64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %none = arith.constant -1 : i64
  %r:2 = soac.scan ins(%v, %i : tensor<?xf64>, tensor<?xi64>) init(%ninf, %none : f64, i64) -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%v1: f64, %i1: i64, %v2: f64, %i2: i64):
    %gt = arith.cmpf oge, %v1, %v2 : f64
    %vm = arith.select %gt, %v1, %v2 : f64
    %im = arith.select %gt, %i1, %i2 : i64
    soac.yield %vm, %im : f64, i64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi64>
}
"""


def test_second_derivatives_through_the_new_rules():
    """The vjp of a vjp: the adjoint code (radix sort, segmented scans of
    (flag, value) pairs, scatters of permutations, the survivors' keys) is
    itself differentiable; a scan whose operator has integer components
    carries derivatives through its float ones only."""
    source = GENERAL_HISTOGRAMS + SCATTER + SECOND_ORDER
    idx = np.array([0, 2, 2, 5, 1, 0, -1, 2])
    check_vjp(source, "d_scaled_product", [rng.standard_normal(4), idx, rng.uniform(0.5, 1.5, 8), rng.standard_normal(4)], wrt=[0, 2, 3])
    idx = np.array([1, 3, 1, 1, -2, 7, 3])
    check_vjp(source, "d_scatter", [rng.standard_normal(5), idx, rng.standard_normal(7), rng.standard_normal(5)], wrt=[0, 2, 3])
    check_vjp(source, "running_argmax", [rng.standard_normal(6), np.arange(6, dtype=np.int64)], wrt=[0])


VECTORISED_GENERAL = """
// a saturating addition (a branch) applied to vector rows, per bin
func.func @saturating_rows(%dest: tensor<?x2xf64>, %idx: tensor<?xindex>, %v: tensor<?x2xf64>) -> tensor<?x2xf64> {
  %zero = arith.constant 0.0 : f64
  %zeros = tensor.splat %zero : tensor<2xf64>
  %r = soac.reduce_by_index dest(%dest : tensor<?x2xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?x2xf64>) init(%zeros : tensor<2xf64>) -> tensor<?x2xf64> {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>):
    %cap = arith.constant 3.0 : f64
    %m = soac.map ins(%a, %b : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%x: f64, %y: f64):
      %room = arith.subf %cap, %x : f64
      %full = arith.cmpf olt, %room, %y : f64
      %s = scf.if %full -> (f64) {
        scf.yield %cap : f64
      } else {
        %t = arith.addf %x, %y : f64
        scf.yield %t : f64
      }
      soac.yield %s : f64
    }
    soac.yield %m : tensor<2xf64>
  }
  return %r : tensor<?x2xf64>
}

// x ⊙ y = 2xy on the elements of vector rows
func.func @scaled_rows(%x: tensor<?x3xf64>) -> tensor<3xf64> {
  %half = arith.constant 0.5 : f64
  %init = tensor.splat %half : tensor<3xf64>
  %r = soac.reduce ins(%x : tensor<?x3xf64>) init(%init : tensor<3xf64>) -> tensor<3xf64> {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %m = soac.map ins(%b, %a : tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%p: f64, %q: f64):
      %two = arith.constant 2.0 : f64
      %t = arith.mulf %q, %p : f64
      %u = arith.mulf %t, %two : f64
      soac.yield %u : f64
    }
    soac.yield %m : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
"""


def test_general_scalar_operators_applied_elementwise_to_rows():
    dest = np.array([[0.1, 2.5], [0.2, 0.3], [1.0, 0.0]])
    idx = np.array([0, 2, 2, 1, 0, 7, 2])
    v = rng.uniform(0.1, 0.9, (7, 2))
    check_vjp(VECTORISED_GENERAL, "saturating_rows", [dest, idx, v], wrt=[0, 2])
    check_dot_product(VECTORISED_GENERAL, "saturating_rows", [dest, idx, v], wrt=[0, 2])
    x = rng.uniform(0.5, 1.5, (4, 3))
    check_vjp(VECTORISED_GENERAL, "scaled_rows", [x])
    check_dot_product(VECTORISED_GENERAL, "scaled_rows", [x])
