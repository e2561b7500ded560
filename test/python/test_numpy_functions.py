"""soac.numpy's functions against numpy: values (compiled with soac.jit, on
dynamic sizes as traced arguments have, and on static ones), gradients
(soac.grad of ``sum(f(x) * w)``) and forward derivatives (soac.jvp) against
central finite differences, in float64; errors while tracing and when the
program runs; docs/numpy.md in step with the code.

Related checks share one jitted function, since each compilation costs
about a second.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.special

import soac
import soac.numpy as snp
from gradcheck import finite_difference_jvp, finite_difference_vjp

ROOT = Path(__file__).resolve().parents[2]
rng = np.random.default_rng(17)


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def assert_matches(got, want, rtol=1e-10, atol=1e-12):
    got, want = as_tuple(got), as_tuple(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"result {k}: shape {g.shape}, numpy's {w.shape}"
        assert g.dtype == w.dtype, f"result {k}: dtype {g.dtype}, numpy's {w.dtype}"
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"result {k}")


def check_derivatives(f, x, rtol=1e-6, atol=1e-8):
    """The gradient of ``sum(f(x) * w)`` (each result of f weighted by a
    random w) and the forward derivative along a random v, against central
    finite differences."""
    primal = soac.jit(f)
    outputs = as_tuple(primal(x))
    weights = [rng.standard_normal(np.shape(o)) for o in outputs]

    def loss(x):
        return sum(snp.sum(out * w) for out, w in zip(as_tuple(f(x)), weights))

    (expected,) = finite_difference_vjp(primal, [x], [0], weights)
    np.testing.assert_allclose(soac.grad(loss)(x), expected, rtol=rtol, atol=atol, err_msg="reverse mode")
    v = rng.standard_normal(np.shape(x))
    _, tangents = soac.jvp(f, (x,), (v,))
    for k, (got, want) in enumerate(zip(as_tuple(tangents), finite_difference_jvp(primal, [x], [0], [v]))):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"forward mode, result {k}")


X = rng.standard_normal((2, 3, 4))
M = rng.standard_normal((4, 4))
V = rng.standard_normal(5)
B = rng.standard_normal((2, 4, 3))
INDICES = np.array([[0, -1], [2, 1]])
ALONG = np.array([[[1, -1, 0, 2]], [[0, 0, 3, -4]]])


# name: (soac's function of one float array, numpy's, the array). Every result is differentiable.
DIFFERENTIABLE = {
    "reshape": (
        lambda x: (snp.ravel(x), snp.reshape(x, (4, -1)), x.reshape(3, 2, 4), snp.transpose(x), x.transpose(1, 0, 2),
                   x.T, snp.swapaxes(x, 0, 2), snp.moveaxis(x, 0, -1), snp.moveaxis(x, (0, 1), (2, 0)),
                   snp.expand_dims(x, (0, 3)), snp.squeeze(snp.expand_dims(x, 1), 1), x.mT, snp.atleast_3d(x[0, 0])),
        lambda x: (np.ravel(x), np.reshape(x, (4, -1)), x.reshape(3, 2, 4), np.transpose(x), x.transpose(1, 0, 2),
                   x.T, np.swapaxes(x, 0, 2), np.moveaxis(x, 0, -1), np.moveaxis(x, (0, 1), (2, 0)),
                   np.expand_dims(x, (0, 3)), x, np.swapaxes(x, -1, -2), np.atleast_3d(x[0, 0])),
        X,
    ),
    "join_and_split": (
        lambda x: (snp.concatenate([x, 2.0 * x], axis=1), snp.concatenate([x[0], x[1], x[0]]), snp.concatenate([x, x], None),
                   snp.stack([x[0], x[1]]), snp.stack([x[0], x[1]], axis=2), snp.vstack([x[0, 0], x[1, 0]]),
                   snp.hstack([x[0], x[1]]), *snp.split(x, 2, axis=2), *snp.split(x, [1, -1], axis=1),
                   *snp.array_split(x, 3, axis=2)),
        lambda x: (np.concatenate([x, 2.0 * x], axis=1), np.concatenate([x[0], x[1], x[0]]), np.concatenate([x, x], None),
                   np.stack([x[0], x[1]]), np.stack([x[0], x[1]], axis=2), np.vstack([x[0, 0], x[1, 0]]),
                   np.hstack([x[0], x[1]]), *np.split(x, 2, axis=2), *np.split(x, [1, -1], axis=1),
                   *np.array_split(x, 3, axis=2)),
        X,
    ),
    "rearrange": (
        lambda x: (snp.flip(x), snp.flip(x, (0, 2)), snp.fliplr(x), snp.flipud(x), snp.roll(x, 2, 2), snp.roll(x, -1),
                   snp.roll(x, (1, 1), (0, 1)), snp.broadcast_to(x[0, 0], (3, 4)), snp.broadcast_to(x[:, :1], (2, 2, 3, 4)),
                   snp.tile(x[0], (2, 1)), snp.tile(x[0, 0], 3), snp.repeat(x, 2, axis=1), snp.repeat(x[0], 2)),
        lambda x: (np.flip(x), np.flip(x, (0, 2)), np.fliplr(x), np.flipud(x), np.roll(x, 2, 2), np.roll(x, -1),
                   np.roll(x, (1, 1), (0, 1)), np.broadcast_to(x[0, 0], (3, 4)), np.broadcast_to(x[:, :1], (2, 2, 3, 4)),
                   np.tile(x[0], (2, 1)), np.tile(x[0, 0], 3), np.repeat(x, 2, axis=1), np.repeat(x[0], 2)),
        X,
    ),
    "take": (
        lambda x: (snp.take(x, INDICES), snp.take(x, INDICES, axis=1), snp.take(x, np.array([3, 0]), axis=-1),
                   snp.take(x, np.int64(-2), axis=2), snp.take(x, np.array([5, -7]), axis=2, mode="wrap"),
                   snp.take(x, np.array([5, -7]), axis=2, mode="clip"), x.take(np.array([1, 1]), 0),
                   snp.take_along_axis(x, ALONG, axis=2), snp.take_along_axis(x, ALONG[:, :, :2].transpose(0, 2, 1), axis=1),
                   snp.take_along_axis(x, np.array([3, -1]), axis=None)),
        lambda x: (np.take(x, INDICES), np.take(x, INDICES, axis=1), np.take(x, np.array([3, 0]), axis=-1),
                   np.take(x, np.int64(-2), axis=2), np.take(x, np.array([5, -7]), axis=2, mode="wrap"),
                   np.take(x, np.array([5, -7]), axis=2, mode="clip"), x.take(np.array([1, 1]), 0),
                   np.take_along_axis(x, ALONG, axis=2), np.take_along_axis(x, ALONG[:, :, :2].transpose(0, 2, 1), axis=1),
                   np.take_along_axis(x, np.array([3, -1]), axis=None)),
        X,
    ),
    "reductions": (
        lambda x: (snp.sum(x, (0, 2)), snp.sum(x, 0, keepdims=True), x.sum(), snp.prod(x, 1), snp.prod(x, (0, 2), keepdims=True),
                   snp.max(x, 2), snp.max(x, (0, 1)), x.max(), snp.min(x, 0, keepdims=True), x.min(axis=(1, 2)),
                   snp.ptp(x, 1), snp.amax(x, -1)),
        lambda x: (np.sum(x, (0, 2)), np.sum(x, 0, keepdims=True), x.sum(), np.prod(x, 1), np.prod(x, (0, 2), keepdims=True),
                   np.max(x, 2), np.max(x, (0, 1)), x.max(), np.min(x, 0, keepdims=True), x.min(axis=(1, 2)),
                   np.ptp(x, 1), np.amax(x, -1)),
        X,
    ),
    "statistics": (
        lambda x: (snp.mean(x, (0, 2)), x.mean(1, keepdims=True), snp.var(x), snp.var(x, 1, ddof=1), x.var((0, 2), keepdims=True),
                   snp.std(x, 0), x.std(ddof=1), snp.logsumexp(x), snp.logsumexp(x, (0, 2)), snp.logsumexp(x, 1, keepdims=True),
                   snp.logsumexp(x, 1, b=np.arange(1.0, 5.0))),
        lambda x: (np.mean(x, (0, 2)), x.mean(1, keepdims=True), np.var(x), np.var(x, 1, ddof=1), x.var((0, 2), keepdims=True),
                   np.std(x, 0), x.std(ddof=1), scipy.special.logsumexp(x), scipy.special.logsumexp(x, (0, 2)),
                   scipy.special.logsumexp(x, 1, keepdims=True), scipy.special.logsumexp(x, 1, b=np.arange(1.0, 5.0))),
        X,
    ),
    "softmax": (
        lambda x: (snp.softmax(x), snp.softmax(x, 0), snp.softmax(x, (0, 2)), snp.log_softmax(x, 1), snp.log_softmax(x, None)),
        lambda x: (scipy.special.softmax(x, -1), scipy.special.softmax(x, 0), scipy.special.softmax(x, (0, 2)),
                   scipy.special.log_softmax(x, 1), scipy.special.log_softmax(x, None)),
        X,
    ),
    "scans": (
        lambda x: (snp.cumsum(x, 1), x.cumsum(), snp.cumprod(x, 1), snp.cumprod(x, 2), x.cumprod(),
                   snp.diff(x), snp.diff(x, 2, axis=1), snp.diff(x, axis=0, prepend=1.0, append=x[:1])),
        lambda x: (np.cumsum(x, 1), x.cumsum(), np.cumprod(x, 1), np.cumprod(x, 2), x.cumprod(),
                   np.diff(x), np.diff(x, 2, axis=1), np.diff(x, axis=0, prepend=1.0, append=x[:1])),
        X,
    ),
    "matrix_products": (
        lambda x: (x @ B, snp.matmul(x, B[:1]), x[0] @ B[0, :, 0], B[0, :, 0] @ snp.swapaxes(x, 1, 2), snp.dot(x[0], x[1, 0]),
                   snp.dot(x, B), snp.dot(x[0, 0], x[1, 0]), snp.dot(2.0, x), snp.vdot(x[0], x[1]), snp.inner(x, x[0]),
                   snp.outer(x[0], x[1, 0]), snp.matvec(x[0], x[1, 0])),
        lambda x: (x @ B, np.matmul(x, B[:1]), x[0] @ B[0, :, 0], B[0, :, 0] @ np.swapaxes(x, 1, 2), np.dot(x[0], x[1, 0]),
                   np.dot(x, B), np.dot(x[0, 0], x[1, 0]), np.dot(2.0, x), np.vdot(x[0], x[1]), np.inner(x, x[0]),
                   np.outer(x[0], x[1, 0]), x[0] @ x[1, 0]),
        X,
    ),
    "contractions": (
        lambda x: (snp.tensordot(x, B, ([0, 2], [0, 1])), snp.tensordot(x, M, 1), snp.tensordot(x, x, 3), snp.tensordot(x[0, 0], x[1, 0], 0),
                   snp.einsum("bij,bjk->bik", x, B), snp.einsum("ij,kj", x[0], x[1]), snp.einsum("bij->jb", x), snp.einsum("bij->", x),
                   snp.einsum("ij,jk,kl->il", x[0], M, x[1].T), snp.einsum("i,i", x[0, 0], x[1, 0]), snp.einsum("ij,ij->i", x[0], x[1]),
                   snp.einsum("bii->bi", x[:, :, :3]), snp.einsum("ii", x[0, :, :3])),
        lambda x: (np.tensordot(x, B, ([0, 2], [0, 1])), np.tensordot(x, M, 1), np.tensordot(x, x, 3), np.tensordot(x[0, 0], x[1, 0], 0),
                   np.einsum("bij,bjk->bik", x, B), np.einsum("ij,kj", x[0], x[1]), np.einsum("bij->jb", x), np.einsum("bij->", x),
                   np.einsum("ij,jk,kl->il", x[0], M, x[1].T), np.einsum("i,i", x[0, 0], x[1, 0]), np.einsum("ij,ij->i", x[0], x[1]),
                   np.einsum("bii->bi", x[:, :, :3]), np.einsum("ii", x[0, :, :3])),
        X,
    ),
    "diagonals_and_convolutions": (
        lambda x: (snp.trace(x[0]), snp.trace(x, 1, 1, 2), snp.diagonal(x, -1, 1, 2), snp.diagonal(x[0], 2), x[0].diagonal(),
                   snp.kron(x[0], M[:2, :2]), snp.kron(x[0, 0], x[1, 0]), snp.tril(x), snp.triu(x[0], 1), snp.tril(x[0], -1),
                   snp.convolve(x[0, 0], V), snp.convolve(V, x[0, 0], "same"), snp.convolve(x[0, 0], x[1, 1, :2], "valid"),
                   snp.correlate(x[0, 0], V), snp.correlate(x[0, 0], x[1, 1, :3], "same"), snp.correlate(x[0, 0], V, "full")),
        lambda x: (np.trace(x[0]), np.trace(x, 1, 1, 2), np.diagonal(x, -1, 1, 2), np.diagonal(x[0], 2), x[0].diagonal(),
                   np.kron(x[0], M[:2, :2]), np.kron(x[0, 0], x[1, 0]), np.tril(x), np.triu(x[0], 1), np.tril(x[0], -1),
                   np.convolve(x[0, 0], V), np.convolve(V, x[0, 0], "same"), np.convolve(x[0, 0], x[1, 1, :2], "valid"),
                   np.correlate(x[0, 0], V), np.correlate(x[0, 0], x[1, 1, :3], "same"), np.correlate(x[0, 0], V, "full")),
        X,
    ),
    "inverse_and_hyperbolic": (
        lambda x: (snp.arcsin(x), snp.arccos(x), snp.arctan(3 * x), snp.arctanh(x), snp.arcsinh(5 * x), snp.arccosh(x * x + 1.5),
                   snp.tan(x), snp.sinh(x), snp.cosh(x), snp.exp2(x), snp.log2(x + 1.0), snp.log10(x + 1.0), snp.sinc(2 * x)),
        lambda x: (np.arcsin(x), np.arccos(x), np.arctan(3 * x), np.arctanh(x), np.arcsinh(5 * x), np.arccosh(x * x + 1.5),
                   np.tan(x), np.sinh(x), np.cosh(x), np.exp2(x), np.log2(x + 1.0), np.log10(x + 1.0), np.sinc(2 * x)),
        rng.uniform(-0.9, 0.9, (2, 3)),
    ),
    "elementwise": (
        lambda x: (snp.arctan2(x, x[::-1]), snp.arctan2(x, -1.0), snp.hypot(x, x[::-1]), snp.logaddexp(x, 2 * x[::-1]),
                   snp.logaddexp2(x, -x), snp.cbrt(x), snp.square(x), snp.reciprocal(x), snp.clip(x, -0.5, 0.5),
                   x.clip(max=0.2), snp.clip(x, x[::-1], None), snp.sign(x) * x, snp.deg2rad(x), snp.radians(x), snp.degrees(x),
                   snp.copysign(x, x[::-1]), snp.fmax(x, 0.0), snp.fmin(x, x[::-1]), snp.float_power(snp.abs(x), 1.5)),
        lambda x: (np.arctan2(x, x[::-1]), np.arctan2(x, -1.0), np.hypot(x, x[::-1]), np.logaddexp(x, 2 * x[::-1]),
                   np.logaddexp2(x, -x), np.cbrt(x), np.square(x), np.reciprocal(x), np.clip(x, -0.5, 0.5),
                   x.clip(max=0.2), np.clip(x, x[::-1], None), np.sign(x) * x, np.deg2rad(x), np.radians(x), np.degrees(x),
                   np.copysign(x, x[::-1]), np.fmax(x, 0.0), np.fmin(x, x[::-1]), np.float_power(np.abs(x), 1.5)),
        rng.uniform(-2.0, 2.0, 6),
    ),
    "creation": (
        lambda x: (snp.linspace(x[0], x[1], 5), snp.linspace(x[0], x[1], 4, endpoint=False), snp.linspace(x[:2], x[2:4], 3, axis=1),
                   snp.arange(0.0, 2.0, 0.5) * x[0], snp.full_like(x, 2.0) * x, snp.ones_like(x) + x, snp.eye(3, 4, 1) * x[0],
                   snp.fromfunction(lambda i, j: x[i] * j, (2, 3), dtype=int)),
        lambda x: (np.linspace(x[0], x[1], 5), np.linspace(x[0], x[1], 4, endpoint=False), np.linspace(x[:2], x[2:4], 3, axis=1),
                   np.arange(0.0, 2.0, 0.5) * x[0], np.full_like(x, 2.0) * x, np.ones_like(x) + x, np.eye(3, 4, 1) * x[0],
                   np.fromfunction(lambda i, j: x[i] * j, (2, 3), dtype=int)),
        rng.standard_normal(4),
    ),
}


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_values_against_numpy(name):
    f, reference, x = DIFFERENTIABLE[name]
    assert_matches(soac.jit(f)(x), reference(x))


@pytest.mark.parametrize("name", ["reshape", "join_and_split", "rearrange", "reductions"])
def test_values_with_static_shapes(name):
    f, reference, x = DIFFERENTIABLE[name]
    assert_matches(soac.jit(f, static_shapes=True)(x), reference(x))


# A few results per gradient: one-shot bufferization takes time that grows
# faster than linearly with the number of results that read the argument.
CHUNK = 3
DERIVATIVE_CASES = [
    (name, start) for name, (_, reference, x) in DIFFERENTIABLE.items() for start in range(0, len(as_tuple(reference(x))), CHUNK)
]


@pytest.mark.parametrize("name, start", DERIVATIVE_CASES, ids=[f"{name}-{start}" for name, start in DERIVATIVE_CASES])
def test_derivatives_against_finite_differences(name, start):
    f, _, x = DIFFERENTIABLE[name]
    check_derivatives(lambda x: as_tuple(f(x))[start:start + CHUNK], x)


W = rng.standard_normal((3, 2))
SECOND_ORDER = {
    "softmax_and_transpose": lambda x: snp.sum(snp.softmax(x) ** 2) + snp.sum((x.T * W) ** 3),
    "reductions_and_gathers": lambda x: snp.logsumexp(x, 1).sum() + snp.prod(x) + snp.sum(snp.cumprod(x, 1) * snp.take(x, np.array([1, 0]), 0)),
    "contractions": lambda x: snp.einsum("ij,jk->", x, W * x.T) + snp.var(x.reshape(3, 2) * W, 0).sum(),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_hessian_vector_products(name):
    f = SECOND_ORDER[name]
    x, v = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    (product,) = soac.hvp(f, (x,), (v,))
    gradient, step = soac.grad(f), 1e-5
    np.testing.assert_allclose(product, (gradient(x + step * v) - gradient(x - step * v)) / (2 * step), rtol=1e-5, atol=1e-7)


def test_integer_results_and_predicates():
    x = np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 2.0, np.nan, 0.0], [0.5, 0.5, -2.0, -2.0]])
    f = soac.jit(lambda x: (
        snp.argmax(x, 1), snp.argmin(x, 1), snp.argmax(x[0]), x.argmin(), snp.argmax(x, 0, keepdims=True),
        snp.argmax(x[2]), snp.argmin(x[2].astype(np.int64)), snp.all(x > -3.0, 1), snp.any(x > 2.5), (x > 0).all(keepdims=True),
        snp.count_nonzero(x > 0, 0), snp.isnan(x), snp.isinf(x / 0.0), snp.isfinite(x), snp.signbit(-x),
        snp.round(x, 1), snp.rint(x * 3), snp.fix(-x * 3), snp.around(x), snp.ceil(x), snp.trunc(-x),
        snp.isclose(x, x + 1e-9), snp.nan_to_num(x / 0.0), snp.heaviside(x, 0.5),
        snp.logical_xor(x > 0, x < 1), snp.logical_and(x, x > 1), snp.logical_not(x), snp.greater_equal(x, 0.5),
        snp.sign(x), snp.sign(x.astype(np.int64)),
    ))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (
            np.argmax(x, 1), np.argmin(x, 1), np.argmax(x[0]), x.argmin(), np.argmax(x, 0, keepdims=True),
            np.argmax(x[2]), np.argmin(x[2].astype(np.int64)), np.all(x > -3.0, 1), np.any(x > 2.5), (x > 0).all(keepdims=True),
            np.count_nonzero(x > 0, 0), np.isnan(x), np.isinf(x / 0.0), np.isfinite(x), np.signbit(-x),
            np.round(x, 1), np.rint(x * 3), np.fix(-x * 3), np.around(x), np.ceil(x), np.trunc(-x),
            np.isclose(x, x + 1e-9), np.nan_to_num(x / 0.0), np.heaviside(x, 0.5),
            np.logical_xor(x > 0, x < 1), np.logical_and(x, x > 1), np.logical_not(x), np.greater_equal(x, 0.5),
            np.sign(x), np.sign(x.astype(np.int64)),
        )
    assert_matches(f(x), expected)


def test_creation_with_traced_sizes_and_bounds():
    f = soac.jit(lambda x, n, k: (
        snp.arange(n), snp.arange(k, n), snp.arange(n, k, -2), snp.arange(1, n, 0.5), snp.arange(0.5, x[0], 0.75),
        snp.arange(x.shape[0], dtype=np.float32), snp.zeros((n, 2)), snp.ones(n, np.int32), snp.full((2, n), 7),
        snp.empty_like(x), snp.eye(n), snp.eye(n, k, -1, dtype=int), snp.identity(k, dtype=bool),
        snp.fromfunction(lambda i, j: i * 10 + j, (n, k), dtype=int), snp.linspace(0, n, k), snp.tril(snp.ones((n, n)), k - 4),
        snp.zeros_like(x, dtype=int, shape=(2,)),
    ))
    x = np.array([3.2, 1.0])
    expected = (
        np.arange(5), np.arange(2, 5), np.arange(5, 2, -2), np.arange(1, 5, 0.5), np.arange(0.5, 3.2, 0.75),
        np.arange(2, dtype=np.float32), np.zeros((5, 2)), np.ones(5, np.int32), np.full((2, 5), 7),
        np.zeros_like(x), np.eye(5), np.eye(5, 2, -1, dtype=int), np.identity(2, dtype=bool),
        np.fromfunction(lambda i, j: i * 10 + j, (5, 2), dtype=int), np.linspace(0, 5, 2), np.tril(np.ones((5, 5)), -2),
        np.zeros(2, dtype=int),
    )
    assert_matches(f(x, 5, 2), expected)
    assert_matches(soac.jit(lambda n: (snp.arange(n), snp.arange(n, 0)))(0), (np.arange(0), np.arange(0, 0)))


def test_dtypes_follow_numpy_and_jax():
    f = soac.jit(lambda x, i, b: (
        snp.sum(x), snp.mean(i), snp.sum(b), snp.cumsum(b), snp.prod(i, dtype=np.float64), snp.var(i), snp.max(b),
        snp.concatenate([i, x]), snp.stack([x, 2 * x]), snp.argmax(i), snp.softmax(i), snp.arcsin(i * 0), snp.reciprocal(i),
        snp.triu(snp.broadcast_to(b, (3, 3))),
    ))
    x, i, b = np.ones(3, np.float32), np.array([1, 2, 3]), np.array([True, False, True])
    got = f(x, i, b)
    assert [np.asarray(g).dtype for g in got] == [
        np.float32, np.float64, np.int64, np.int64, np.float64, np.float64, np.bool_,
        np.float32, np.float32, np.int64, np.float64, np.float64, np.float64, np.bool_,
    ]
    np.testing.assert_allclose(got[1], 2.0)
    np.testing.assert_array_equal(got[3], [1, 1, 2])
    np.testing.assert_allclose(got[12], 1.0 / i)


def test_matmul_broadcasts_batch_sizes_known_only_at_run_time():
    # Traced arguments have dynamic sizes: a batch of 1 still repeats against 3.
    a, b = rng.standard_normal((1, 2, 3)), rng.standard_normal((3, 3, 4))
    np.testing.assert_allclose(soac.jit(snp.matmul)(a, b), a @ b, rtol=1e-12)
    np.testing.assert_allclose(soac.jit(snp.matmul)(b.transpose(0, 2, 1), a.transpose(0, 2, 1)), b.transpose(0, 2, 1) @ a.transpose(0, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(soac.jit(lambda a, b: snp.broadcast_to(a, b.shape))(a[:, :1, :1], b), np.broadcast_to(a[:, :1, :1], b.shape))


@pytest.mark.parametrize(
    "f, args, message",
    [
        (lambda x: snp.concatenate([x, np.ones(3)]), [np.ones((3, 5))], "concatenate: (?, 5) and (3,) have different ranks"),
        (lambda x: snp.concatenate([np.ones((3, 4)), np.ones((3, 5))]), [np.ones(1)], "concatenate along axis 0: (3, 4) and (3, 5) differ in axis 1"),
        (lambda x: snp.reshape(np.ones((2, 3)), (4, 2)), [np.ones(1)], "cannot reshape (2, 3) (6 elements) into (4, 2)"),
        (lambda x: snp.reshape(x, (-1, -1)), [np.ones(4)], "only one size can be -1"),
        (lambda x: snp.transpose(x, (0, 0)), [np.ones((2, 2))], "repeated axis"),
        (lambda x: snp.squeeze(np.ones((2, 3)), 1), [np.ones(1)], "axis 1 of (2, 3) has size 3, not 1"),
        (lambda x: snp.matmul(np.ones((2, 3)), np.ones((4, 2))), [np.ones(1)], "(2, 3) and (4, 2): 3 columns against 4 rows"),
        (lambda x: snp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 2))), [np.ones(1)], "label 'j' has sizes 3 and 4"),
        (lambda x: snp.einsum("ij->k", x), [np.ones((2, 2))], "the output label 'k'"),
        (lambda x: snp.broadcast_to(np.ones(3), (2, 4)), [np.ones(1)], "cannot broadcast (3,) to (2, 4)"),
        (lambda x: snp.split(np.ones(5), 2), [np.ones(1)], "(5,) does not split into 2 equal parts"),
        (lambda x: snp.sum(x, 2), [np.ones((2, 2))], "axis 2 is out of range"),
        (lambda x: snp.take(x, np.array([0.5])), [np.ones(2)], "indices must be integers"),
        (lambda x: snp.tensordot(np.ones((2, 3)), np.ones((4, 2)), 1), [np.ones(1)], "axis 1 of (2, 3) and axis 0 of (4, 2) differ"),
    ],
)
def test_mistakes_are_trace_errors_naming_the_shapes(f, args, message):
    with pytest.raises(soac.TraceError, match=f"test_numpy_functions.py:.*{__import__('re').escape(message)}"):
        soac.jit(f)(*args)


def test_sizes_that_only_fail_when_the_program_runs_stop_it():
    with pytest.raises(soac.IndexOutOfRangeError):
        soac.jit(lambda x: snp.reshape(x, (4, -1)))(np.ones(6))
    with pytest.raises(soac.IndexOutOfRangeError):
        soac.jit(lambda x: snp.squeeze(x, 0))(np.ones((2, 3)))
    with pytest.raises(soac.IndexOutOfRangeError):
        soac.jit(lambda x: snp.take(x, np.array([0, 3])))(np.ones(3))
    with pytest.raises(soac.IndexOutOfRangeError):
        soac.jit(lambda x, y: snp.broadcast_to(x, y.shape))(np.ones(2), np.ones(3))
    with pytest.raises(soac.IndexOutOfRangeError):
        soac.jit(lambda x: snp.split(x, 2))(np.ones(5))


def test_docs_numpy_md_lists_every_function():
    listed = subprocess.run([sys.executable, str(ROOT / "tools" / "list_numpy.py")], capture_output=True, text=True, check=True).stdout
    assert (ROOT / "docs" / "numpy.md").read_text() == listed, "docs/numpy.md is stale: run python tools/list_numpy.py > docs/numpy.md"
