"""Mixed mode (soac-autodiff's mixed-mode option and the soac.mixed_mode
attribute): gradients against central finite differences (float64) and
against pure reverse mode."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import soac
from gradcheck import check_vjp
from test_autodiff_random_programs import program

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
HM_LSTM = (EXAMPLES / "hm_lstm.mlir").read_text().replace("f32", "f64")
rng = np.random.default_rng(23)

POWER = """
// x^k · w^k per element, by a loop in the map body (k from data)
func.func @power(%x: tensor<?xf64>, %n: tensor<?xindex>, %w: f64) -> tensor<?xf64> {
  %r = soac.map ins(%x, %n : tensor<?xf64>, tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%v: f64, %k: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f64
    %p = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %one) -> (f64) {
      %m = arith.mulf %acc, %v : f64
      %s = arith.mulf %m, %w : f64
      scf.yield %s : f64
    }
    soac.yield %p : f64
  }
  return %r : tensor<?xf64>
}
"""


def hm_lstm_inputs(n: int, control: str):
    values = [rng.standard_normal((n, n)) for _ in range(4)]
    if control == "uniform":
        z, zb = np.zeros((n, n)), np.ones((n, n))  # every element takes the same (last) branch
    else:
        z, zb = rng.integers(0, 2, (n, n)).astype(np.float64), rng.integers(0, 2, (n, n)).astype(np.float64)
    return [*values, z, zb]


@pytest.mark.parametrize("control", ["random", "uniform"])
def test_hm_lstm_cell_gradient(control):
    args = hm_lstm_inputs(5, control)
    mixed = check_vjp(HM_LSTM, "hm_lstm_cell", args, wrt=[0, 1, 2, 3], mixed_mode=True)
    reverse = soac.mlir.vjp(HM_LSTM, "hm_lstm_cell", wrt=[0, 1, 2, 3])
    bar = rng.standard_normal((5, 5))
    for got, expected in zip(mixed(*args, bar), reverse(*args, bar)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_loops_in_the_body_and_free_scalars():
    x, n = rng.uniform(0.5, 1.5, 7), rng.integers(0, 5, 7)
    check_vjp(POWER, "power", [x, n, np.float64(0.9)], wrt=[0, 2], mixed_mode=True)


@pytest.mark.parametrize("kinds", [["branch", "square"], ["soft", "gather", "branch"], ["normalize", "sin", "cumsum"]])
def test_composed_programs_agree_with_finite_differences(kinds):
    # maps with scalar bodies go mixed; gathers and reductions keep their rules
    n = 6
    x = rng.uniform(0.3, 1.2, n) * rng.choice([-1.0, 1.0], n)
    check_vjp(program(kinds, "sum"), "f", [x, np.float64(0.8), rng.permutation(n)], wrt=[0, 1], rtol=1e-5, atol=1e-7, mixed_mode=True)


def test_a_map_that_cannot_be_mixed_says_so_at_its_location():
    source = """
    func.func @rows(%m: tensor<?x3xf64>) -> tensor<?x3xf64> {
      %r = soac.map ins(%m : tensor<?x3xf64>) -> tensor<?x3xf64> {
      ^bb0(%row: tensor<3xf64>):
        soac.yield %row : tensor<3xf64>
      } {soac.mixed_mode = true}
      return %r : tensor<?x3xf64>
    }"""
    with pytest.raises(soac.LoweringError, match=r"-:3:12: error: 'soac.map' op cannot be differentiated in mixed mode"):
        soac.mlir.vjp(source, "rows")
    # the global option skips the maps it cannot mix
    gradient = soac.mlir.vjp(source.replace(" {soac.mixed_mode = true}", ""), "rows", mixed_mode=True)
    m = rng.standard_normal((2, 3))
    np.testing.assert_array_equal(gradient(m, m)[1], m)


def test_frontend_maps_opt_in():
    def cell(x, w):
        return soac.numpy.sum(soac.map(lambda v: soac.cond(v > 0.0, lambda: v * w, lambda: soac.math.sin(v)), x, mixed_mode=True))

    x, w = np.array([0.5, -1.0, 2.0]), np.float64(1.5)
    dx, dw = soac.grad(cell, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(dx, np.where(x > 0, w, np.cos(x)), rtol=1e-12)
    np.testing.assert_allclose(dw, np.sum(np.where(x > 0, x, 0.0)), rtol=1e-12)
    assert "soac.mixed_mode = true" in soac.jit(cell).mlir(x, w)
