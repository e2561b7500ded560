"""JAX's transforms and conventions on traced functions: pytrees, argnums,
has_aux, vjp/jvp calling conventions, jacfwd/jacrev/hessian, vmap and
lax.scan, against numpy and central finite differences (float64), and
against JAX itself when it is installed."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import soac
import soac.numpy as jnp
from gradcheck import finite_difference_vjp

rng = np.random.default_rng(20)


def numeric_gradient(f, args, position):
    return finite_difference_vjp(soac.jit(f), list(args), [position], [1.0])[0]


def mlp(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    prediction = hidden @ params["w2"]
    return jnp.mean((prediction - y) ** 2)


PARAMS = {"w1": rng.standard_normal((3, 4)), "b1": rng.standard_normal(4), "w2": rng.standard_normal(4)}
X, Y = rng.standard_normal((5, 3)), rng.standard_normal(5)


def test_gradients_have_the_structure_of_the_parameters():
    gradient = soac.grad(mlp)(PARAMS, X, Y)
    assert sorted(gradient) == ["b1", "w1", "w2"]
    for name in PARAMS:
        def along(p, name=name):
            return mlp({**PARAMS, name: p}, X, Y)

        np.testing.assert_allclose(gradient[name], numeric_gradient(along, [PARAMS[name]], 0), rtol=1e-6, atol=1e-9)


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


@soac.register_dataclass
@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray


def test_named_tuples_and_registered_dataclasses():
    w, b = rng.standard_normal(3), np.float64(0.5)
    loss = lambda p, x: jnp.sum((x * p.w + p.b) ** 2)  # noqa: E731
    for params in (Params(w, b), Layer(w, b)):
        gradient = soac.grad(loss)(params, X[0])
        assert type(gradient) is type(params)
        np.testing.assert_allclose(gradient.w, 2 * (X[0] * w + b) * X[0], rtol=1e-12)
        np.testing.assert_allclose(gradient.b, np.sum(2 * (X[0] * w + b)), rtol=1e-12)
    # pytrees out of jit, as they went in
    out = soac.jit(lambda p: {"double": Params(p.w * 2, p.b), "list": [p.b]})(Params(w, b))
    assert isinstance(out["double"], Params) and isinstance(out["list"], list)
    np.testing.assert_array_equal(out["double"].w, 2 * w)


def test_argnums_and_has_aux():
    f = lambda a, b, c: (jnp.sum(a * b * c), {"norm": jnp.sum(a * a)})  # noqa: E731
    a, b, c = rng.standard_normal(3), rng.standard_normal(3), np.float64(2.0)
    (da, dc), aux = soac.grad(f, argnums=(0, -1), has_aux=True)(a, b, c)
    np.testing.assert_allclose(da, b * c, rtol=1e-12)
    np.testing.assert_allclose(dc, np.sum(a * b), rtol=1e-12)
    np.testing.assert_allclose(aux["norm"], np.sum(a * a), rtol=1e-12)
    (value, aux), db = soac.value_and_grad(f, argnums=1, has_aux=True)(a, b, c)
    np.testing.assert_allclose(value, np.sum(a * b * c), rtol=1e-12)
    np.testing.assert_allclose(db, a * c, rtol=1e-12)
    with pytest.raises(soac.TraceError, match="must return a pair"):
        soac.grad(lambda a: jnp.sum(a), has_aux=True)(a)
    with pytest.raises(soac.TraceError, match="argnums 3 is out of range"):
        soac.grad(lambda a: jnp.sum(a), argnums=3)(a)
    with pytest.raises(soac.TraceError, match="only float arguments are differentiated"):
        soac.grad(lambda a, i: jnp.sum(a[i]), argnums=1)(a, np.array([0]))


def test_vjp_and_jvp_take_jax_calling_conventions():
    f = lambda x, y: (x * y, jnp.sum(jnp.exp(x) / y))  # noqa: E731
    x, y = rng.standard_normal(4), rng.uniform(1.0, 2.0, 4)
    (product, total), pullback = soac.vjp(f, x, y)
    np.testing.assert_allclose(product, x * y)
    cotangents = (rng.standard_normal(4), np.float64(0.3))
    expected = finite_difference_vjp(soac.jit(f), [x, y], [0, 1], list(cotangents))
    for got, want in zip(pullback(cotangents), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    v = rng.standard_normal(4)
    (out, _), (tangent, _) = soac.jvp(f, (x, y), (v, np.zeros(4)))
    step = 1e-6
    np.testing.assert_allclose(out, x * y)
    np.testing.assert_allclose(tangent, ((x + step * v) * y - (x - step * v) * y) / (2 * step), rtol=1e-6)
    # composed: jvp of grad (forward over reverse), grad inside jit, vjp inside a trace
    g = soac.grad(lambda x: jnp.sum(x ** 3))
    np.testing.assert_allclose(soac.jvp(g, (x,), (v,))[1], 6 * x * v, rtol=1e-12)
    inside = soac.jit(lambda x: soac.vjp(jnp.sin, x)[1](jnp.ones(4))[0])
    np.testing.assert_allclose(inside(x), np.cos(x), rtol=1e-12)


def test_jacobians_and_the_hessian():
    f = lambda x: jnp.tanh(x[1:] * x[:-1]) * x.sum()  # noqa: E731
    x = rng.standard_normal(4)
    reverse, forward = soac.jacrev(f)(x), soac.jacfwd(f)(x)
    assert reverse.shape == forward.shape == (3, 4)
    expected = np.stack([numeric_gradient(lambda v, i=i: f(v)[i], [x], 0) for i in range(3)])
    np.testing.assert_allclose(reverse, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(forward, expected, rtol=1e-6, atol=1e-9)

    def rosenbrock(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    hessian = soac.hessian(rosenbrock)(x)
    gradient = soac.grad(rosenbrock)
    step = 1e-6
    numeric = np.stack([(gradient(x + step * e) - gradient(x - step * e)) / (2 * step) for e in np.eye(4)])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-12)


def test_vmap_and_per_example_gradients():
    loss = lambda w, x, y: (jnp.sum(w * x) - y) ** 2  # noqa: E731
    w = rng.standard_normal(3)
    per_example = soac.vmap(soac.grad(loss), in_axes=(None, 0, 0))(w, X, Y)
    np.testing.assert_allclose(per_example, [2 * (w @ X[i] - Y[i]) * X[i] for i in range(5)], rtol=1e-12)
    columns = soac.vmap(lambda c: c * jnp.sum(c), in_axes=1, out_axes=1)(X)
    np.testing.assert_allclose(columns, X * X.sum(axis=0), rtol=1e-12)
    nested = soac.vmap(soac.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))(X[0], X[1])
    np.testing.assert_allclose(nested, np.outer(X[1], X[0]), rtol=1e-12)
    with pytest.raises(soac.TraceError, match="at least one argument mapped"):
        soac.vmap(lambda a: a, in_axes=None)(X)


def rnn(W, h0, xs):
    h, hs = soac.lax.scan(lambda h, x: (jnp.tanh(W @ h + x), h), h0, xs)
    return jnp.sum(hs ** 2) + jnp.sum(h)


def numpy_rnn(W, h0, xs):
    h, hs = h0, []
    for x in xs:
        hs.append(h)
        h = np.tanh(W @ h + x)
    return np.sum(np.array(hs) ** 2) + np.sum(h)


def test_lax_scan_runs_and_differentiates():
    W, h0, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3), rng.standard_normal((6, 3))
    np.testing.assert_allclose(soac.jit(rnn)(W, h0, xs), numpy_rnn(W, h0, xs), rtol=1e-12)
    gradient = soac.grad(rnn, argnums=(0, 1))(W, h0, xs)
    for position, got in zip((0, 1), gradient):
        np.testing.assert_allclose(got, numeric_gradient(rnn, [W, h0, xs], position), rtol=1e-6, atol=1e-9)
    carry, ys = soac.jit(lambda xs: soac.lax.scan(lambda c, x: (c + x, c * x), 0.0, xs, reverse=True))(np.array([1.0, 2.0, 3.0]))
    assert carry == 6.0
    np.testing.assert_array_equal(ys, [5.0, 6.0, 0.0])


def test_lax_scan_gradients_with_several_stacked_outputs_and_reverse():
    def f(w, xs):
        def step(c, x):
            c = jnp.tanh(w * c + x)
            return c, (c * c, jnp.stack([c, x * c]))  # a scalar and a row per step

        _, (squares, rows) = soac.lax.scan(step, 0.5, xs, reverse=True)
        return jnp.sum(squares) + jnp.sum(rows[:, 1] * jnp.arange(xs.shape[0]))

    def numpy_f(w, xs):
        c, squares, rows = 0.5, [], []
        for x in xs[::-1]:
            c = np.tanh(w * c + x)
            squares.append(c * c)
            rows.append(x * c)
        return np.sum(squares) + np.sum(np.array(rows[::-1]) * np.arange(len(xs)))

    w, xs = 0.7, rng.standard_normal(9)
    assert soac.jit(f)(w, xs) == pytest.approx(numpy_f(w, xs), rel=1e-12)
    gw, gxs = soac.grad(f, argnums=(0, 1))(w, xs)
    assert gw == pytest.approx(numeric_gradient(f, [np.float64(w), xs], 0), rel=1e-6)
    np.testing.assert_allclose(gxs, numeric_gradient(f, [np.float64(w), xs], 1), rtol=1e-6, atol=1e-9)


def _pytree_model(p, x):
    return jnp.sin(p["b"] @ (p["a"] * x)), jnp.sum(p["a"] ** 2 * x)


def test_jacobians_of_pytrees_and_tuples_of_argnums():
    p = {"a": rng.standard_normal(3), "b": rng.standard_normal((2, 3))}
    x = rng.standard_normal(3)
    for transform in (soac.jacrev, soac.jacfwd):
        (out0, out1) = transform(_pytree_model, argnums=(0, 1))(p, x)
        (d_p, d_x) = out0  # d sin(b @ (a * x)): a dict of blocks for p, one block for x
        assert d_p["a"].shape == (2, 3) and d_p["b"].shape == (2, 2, 3) and d_x.shape == (2, 3)
        assert out1[0]["b"].shape == (2, 3) and out1[1].shape == (3,)
        for k in range(3):  # central differences in a[k]
            e = np.zeros(3)
            e[k] = 1e-6
            plus = soac.jit(_pytree_model)({**p, "a": p["a"] + e}, x)
            minus = soac.jit(_pytree_model)({**p, "a": p["a"] - e}, x)
            np.testing.assert_allclose(d_p["a"][:, k], (plus[0] - minus[0]) / 2e-6, rtol=1e-6, atol=1e-9)
            assert out1[0]["a"][k] == pytest.approx((plus[1] - minus[1]) / 2e-6, rel=1e-6)


def test_jacobians_and_hessians_match_jax_on_pytrees_when_installed():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jjnp

    p = {"a": rng.standard_normal(3), "b": rng.standard_normal((2, 3))}
    x = rng.standard_normal(3)
    jax_model = lambda p, x: (jjnp.sin(p["b"] @ (p["a"] * x)), jjnp.sum(p["a"] ** 2 * x))  # noqa: E731
    scalar = lambda m: lambda p, x: m.sum(m.sin(p["b"] @ (p["a"] * x)))  # noqa: E731
    cases = [(getattr(soac, name)(_pytree_model, argnums=argnums), getattr(jax, name)(jax_model, argnums=argnums))
             for name in ("jacrev", "jacfwd") for argnums in (0, 1, (0, 1))]
    cases.append((soac.hessian(scalar(jnp), argnums=(0, 1)), jax.hessian(scalar(jjnp), argnums=(0, 1))))
    for ours, theirs in cases:
        ours, theirs = ours(p, x), theirs(p, x)
        assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(theirs)
        for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_against_jax_when_installed():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jjnp

    def jax_mlp(params, x, y):
        hidden = jjnp.tanh(x @ params["w1"] + params["b1"])
        return jjnp.mean((hidden @ params["w2"] - y) ** 2)

    ours, theirs = soac.grad(mlp)(PARAMS, X, Y), jax.grad(jax_mlp)(PARAMS, X, Y)
    for name in PARAMS:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-10)
    x = rng.standard_normal(4)
    np.testing.assert_allclose(soac.hessian(lambda v: jnp.sum(jnp.sin(v) * v[::-1]))(x),
                               jax.hessian(lambda v: jjnp.sum(jjnp.sin(v) * v[::-1]))(x), rtol=1e-10, atol=1e-12)


class DLPackOnly:
    """An array that numpy reaches only through DLPack (as a PyTorch CPU tensor)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_and_array_interface_arguments():
    from soac.runtime.abi import as_array

    base = np.arange(4.0)
    assert np.shares_memory(as_array(DLPackOnly(base)), base)  # no copy
    np.testing.assert_array_equal(soac.jit(lambda x: x * 2.0)(DLPackOnly(base)), base * 2)
    np.testing.assert_array_equal(soac.grad(lambda x: jnp.sum(x * x))(DLPackOnly(base)), base * 2)
    with pytest.raises(soac.TraceError, match="cannot pass a object"):
        soac.jit(lambda x: x)(object())


def test_jax_arrays_as_arguments_when_installed():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    jax.config.update("jax_enable_x64", True)
    x = jax.numpy.arange(4.0)
    np.testing.assert_array_equal(soac.jit(lambda x: x[::-1] * 2.0)(x), np.arange(4.0)[::-1] * 2)
