"""Derivatives given by the user (soac.custom_vjp / soac.custom_jvp), in IR
and from Python: used instead of the body's, checked against finite
differences (float64)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import soac
from gradcheck import check_jvp, check_vjp

ANGLE = (pathlib.Path(__file__).resolve().parents[1] / "AutoDiff" / "custom.mlir").read_text()
rng = np.random.default_rng(29)


def test_custom_rules_in_ir_replace_a_body_without_rules():
    # math.atan2 has no derivative rule: only the custom functions can answer
    args = [np.float64(0.7), np.float64(-1.3), 0]
    check_vjp(ANGLE, "angle", args, wrt=[0, 1])
    check_vjp(ANGLE, "angle", args, wrt=[1])
    check_jvp(ANGLE, "angle", args, wrt=[0, 1])
    lanes = soac.mlir.jvp(ANGLE, "angle", wrt=[0], width=2)(*args, np.array([1.0, 2.0]))[1]
    np.testing.assert_allclose(lanes, np.array([1.0, 2.0]) * -1.3 / (0.7**2 + 1.3**2), rtol=1e-12)
    gradients = soac.mlir.vjp(ANGLE, "angle", wrt=[1], width=2)(*args, np.array([1.0, 2.0]))[1]
    np.testing.assert_allclose(gradients, np.array([1.0, 2.0]) * -0.7 / (0.7**2 + 1.3**2), rtol=1e-12)


@soac.custom_vjp
def logsumexp(x):
    return soac.math.log(soac.numpy.sum(soac.math.exp(x)))


@logsumexp.defvjp
def logsumexp_vjp(x, cotangent):
    # softmax, shifted by the maximum: no overflow
    top = soac.numpy.max(x)
    e = soac.math.exp(x - top)
    total = soac.numpy.sum(e)
    return top + soac.math.log(total), cotangent * e / total


@logsumexp.defjvp
def logsumexp_jvp(x, tangent):
    top = soac.numpy.max(x)
    e = soac.math.exp(x - top)
    total = soac.numpy.sum(e)
    return top + soac.math.log(total), soac.numpy.dot(e, tangent) / total


def test_custom_vjp_from_python_is_stable_where_the_body_is_not():
    x = np.array([1000.0, 999.0, 998.0])
    gradient = soac.grad(lambda v: logsumexp(v))(x)
    softmax = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    np.testing.assert_allclose(gradient, softmax, rtol=1e-12)
    # differentiating the body itself overflows
    naive = soac.grad(lambda v: soac.math.log(soac.numpy.sum(soac.math.exp(v))))(x)
    assert not np.all(np.isfinite(naive))


def test_custom_rules_from_python_against_finite_differences():
    x, t = rng.standard_normal(5), rng.standard_normal(5)
    f = soac.jit(lambda v: logsumexp(v) * 2.0)
    step = 1e-6
    directional = (f(x + step * t) - f(x - step * t)) / (2 * step)
    value, tangent = soac.jvp(lambda v: logsumexp(v) * 2.0, (x,), (t,))
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, directional, rtol=1e-6)
    np.testing.assert_allclose(soac.grad(lambda v: logsumexp(v) * 2.0)(x) @ t, directional, rtol=1e-6)


def test_the_hessian_differentiates_the_custom_vjp():
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    s = np.exp(x) / np.exp(x).sum()
    hessian = np.diag(s) - np.outer(s, s)
    np.testing.assert_allclose(soac.hvp(lambda u: logsumexp(u), (x,), (v,))[0], hessian @ v, rtol=1e-10, atol=1e-12)


def test_wrong_custom_signatures_are_errors():
    source = """
    func.func @square(%x: f64) -> f64 attributes {soac.custom_vjp = @square_vjp} {
      %y = arith.mulf %x, %x : f64
      return %y : f64
    }
    func.func @square_vjp(%x: f64) -> f64 {
      return %x : f64
    }"""
    with pytest.raises(soac.LoweringError, match=r"names @square_vjp as its soac.custom_vjp, of type '\(f64\) -> f64', but it must be '\(f64, f64\) -> \(f64, f64\)'"):
        soac.mlir.grad(source, "square")
