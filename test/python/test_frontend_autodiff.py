"""Derivatives of traced functions against central finite differences (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import soac
import soac.numpy as snp
from gradcheck import finite_difference_vjp

rng = np.random.default_rng(9)


def model(A, x, w, idx):
    """A bit of everything: matvec, a gather of a free vector, a branch in a
    map, a loop, a scan and a logsumexp."""
    h = soac.math.tanh(A @ x) * w
    picked = soac.map(lambda i, v: soac.cond(v > 0.0, lambda: v * x[i], lambda: soac.math.exp(v)), idx, h)
    state = soac.fori_loop(0, 3, lambda i, s: s * 0.5 + soac.math.sin(s), picked)
    return snp.logsumexp(soac.scan(lambda a, b: a + b, state, 0.0)) + snp.sum(x**2)


ARGS = [rng.standard_normal((5, 3)), rng.standard_normal(3), np.float64(0.7), rng.integers(0, 3, 5)]


def test_grad_of_a_traced_function():
    gradient = soac.grad(model, argnums=(0, 1, 2))(*ARGS)  # every float argument: A, x, w
    expected = finite_difference_vjp(soac.jit(model), ARGS, [0, 1, 2], [1.0])
    for got, want in zip(gradient, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_value_and_grad_and_wrt():
    value, gradient = soac.value_and_grad(model, argnums=1)(*ARGS)
    np.testing.assert_allclose(value, soac.jit(model)(*ARGS), rtol=1e-12)
    np.testing.assert_allclose(gradient, soac.grad(model, argnums=1)(*ARGS), rtol=1e-12)


def test_vjp_of_a_function_with_several_results():
    def f(x, y):
        return x * y, snp.sum(soac.math.exp(x) / y)

    x, y = rng.standard_normal(4), rng.uniform(1.0, 2.0, 4)
    cotangents = [rng.standard_normal(4), np.float64(0.3)]
    (product, total), pullback = soac.vjp(f, x, y)
    dx, dy = pullback(tuple(cotangents))
    np.testing.assert_allclose(product, x * y)
    np.testing.assert_allclose(total, np.sum(np.exp(x) / y))
    for got, want in zip((dx, dy), finite_difference_vjp(soac.jit(f), [x, y], [0, 1], cotangents)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_grad_composes_with_jit_and_with_itself():
    cube = lambda x: x * x * x  # noqa: E731
    second = soac.grad(soac.grad(cube))
    assert second(np.float64(2.0)) == pytest.approx(12.0)  # 6x, through a nested soac.vjp

    @soac.jit
    def descend(x):  # grad inside a jitted function: one program
        return x - 0.1 * soac.grad(lambda v: snp.sum(v * v))(x)

    np.testing.assert_allclose(descend(np.array([1.0, -2.0])), [0.8, -1.6])
    assert "soac.vjp @lambda" in descend.mlir()


def test_grad_of_a_while_loop_with_checkpoints():
    def f(x):
        def body(carry):
            v, n = carry
            return v * 1.5 + soac.math.sin(v), n + 1

        v, _ = soac.while_loop(lambda c: (snp.sum(c[0] * c[0]) < 20.0) & (c[1] < 6), body, (x, 0), checkpoint_levels=2)
        return snp.sum(v)

    x = rng.uniform(0.2, 0.4, 3)
    np.testing.assert_allclose(soac.grad(f)(x), finite_difference_vjp(soac.jit(f), [x], [0], [1.0])[0], rtol=1e-6)


def test_soac_mlir_differentiates_modules():
    program = """
    func.func @sq(%x: f64) -> f64 {
      %y = arith.mulf %x, %x : f64
      return %y : f64
    }"""
    assert soac.mlir.grad(program, "sq")(np.float64(3.0)) == 6.0
    assert isinstance(soac.mlir.vjp(program, "sq"), soac.Derivative)


def test_jvp_and_hvp_against_finite_differences():
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    f = lambda x: soac.math.sin(x) * snp.sum(x * x)  # noqa: E731
    value, tangent = soac.jvp(f, (x,), (v,))
    step = 1e-6
    np.testing.assert_allclose(value, soac.jit(f)(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, (soac.jit(f)(x + step * v) - soac.jit(f)(x - step * v)) / (2 * step), rtol=1e-6)
    loss = lambda x: snp.logsumexp(x * x)  # noqa: E731
    gradient = soac.grad(loss)
    expected = (gradient(x + step * v) - gradient(x - step * v)) / (2 * step)
    np.testing.assert_allclose(soac.hvp(loss, (x,), (v,))[0], expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp", "jvp", "hvp", "jacfwd", "jacrev"])
def test_python_transforms_point_modules_to_soac_mlir(transform):
    with pytest.raises(TypeError, match=rf"soac\.mlir\.{transform}\(module, function_name"):
        args = ((), ()) if transform in ("jvp", "hvp") else ()
        getattr(soac, transform)("func.func @f(%x: f64) -> f64 { return %x : f64 }", *args)
