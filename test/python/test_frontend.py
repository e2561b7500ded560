"""The tracing frontend against numpy: operators, combinators, control flow,
the numpy layer, signatures and caching, IR and lowering."""

from __future__ import annotations

import numpy as np
import pytest

import soac
import soac.numpy as snp

rng = np.random.default_rng(5)


def test_operators_and_math_broadcast_like_numpy():
    @soac.jit
    def f(x, m, s):
        y = (x * 2.0 - 1.0) / (s + 3.0) + m  # (n,) against (k, n)
        z = -y ** 2 + soac.math.exp(x) * soac.math.tanh(m) - soac.math.sqrt(s) * soac.math.log1p(x * x)
        return z, soac.math.maximum(m, x) ** 3, abs(m) ** 0.5, snp.where(m > x, m, x - 1.0)

    x, m, s = rng.standard_normal(4), rng.standard_normal((3, 4)), np.float64(1.7)
    y = (x * 2.0 - 1.0) / (s + 3.0) + m
    expected = (
        -(y**2) + np.exp(x) * np.tanh(m) - np.sqrt(s) * np.log1p(x * x),
        np.maximum(m, x) ** 3,
        np.abs(m) ** 0.5,
        np.where(m > x, m, x - 1.0),
    )
    for got, want in zip(f(x, m, s), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_static_size_one_axes_broadcast():
    # Arguments have dynamic sizes; a size known to be 1 (here a constant's) broadcasts.
    row, m = np.array([[1.0, 2.0, 3.0]]), rng.standard_normal((4, 3))
    np.testing.assert_allclose(soac.jit(lambda m: m * row + np.ones((2, 1, 1)))(m), m * row + np.ones((2, 1, 1)))


def test_comparisons_and_integers():
    @soac.jit
    def f(i, x):
        return (i * 3 - 1) ** 2, (x >= 0.5) & (x != 1.0), (i < 2).astype(np.float64) + x.astype(np.float32).astype(np.float64)

    i, x = np.array([0, 1, 2, 5]), np.array([0.25, 1.0, 0.5, 3.0])
    got = f(i, x)
    np.testing.assert_array_equal(got[0], (i * 3 - 1) ** 2)
    np.testing.assert_array_equal(got[1], (x >= 0.5) & (x != 1.0))
    np.testing.assert_allclose(got[2], (i < 2) + x)


def test_indexing_elements_rows_and_negative_indices():
    @soac.jit
    def f(m, i):
        return m[i], m[-1, 0] + m[i, 1], m[i][-1]

    m = rng.standard_normal((4, 3))
    row, element, last = f(m, 2)
    np.testing.assert_array_equal(row, m[2])
    assert element == m[-1, 0] + m[2, 1] and last == m[2][-1]


def test_combinators_with_closures():
    @soac.jit
    def f(x, w, idx, table):
        scaled = soac.map(lambda v, i: v * w + table[i], x, idx)
        total = soac.reduce(lambda a, b: a + b, scaled, 0.0)
        running = soac.scan(lambda a, b: soac.math.maximum(a, b), scaled, -np.inf)
        # a tuple operator: (min, count) over pairs
        smallest, count = soac.reduce(
            lambda a, n, b, m: (soac.math.minimum(a, b), n + m), (x, soac.map(lambda _: 1, x)), (np.inf, 0)
        )
        return total, running, smallest, count

    x, idx, table = rng.standard_normal(6), rng.integers(0, 3, 6), rng.standard_normal(3)
    total, running, smallest, count = f(x, np.float64(0.5), idx, table)
    scaled = x * 0.5 + table[idx]
    np.testing.assert_allclose(total, scaled.sum(), rtol=1e-12)
    np.testing.assert_allclose(running, np.maximum.accumulate(scaled))
    assert smallest == x.min() and count == 6


def test_scatter_reduce_by_index_and_iota():
    @soac.jit
    def f(dest, idx, values):
        hist = soac.reduce_by_index(lambda a, b: a + b, dest, idx, values, 0.0)
        written = soac.scatter(dest, idx, values * 10.0)
        positions = soac.iota(snp.size(values)) * 2
        return hist, written, positions, soac.iota(3)

    dest, idx, values = np.zeros(5), np.array([4, 0, 9, 2, -1]), rng.standard_normal(5)
    hist, written, positions, three = f(dest, idx, values)
    expected = np.zeros(5)
    np.add.at(expected, idx[(idx >= 0) & (idx < 5)], values[(idx >= 0) & (idx < 5)])
    np.testing.assert_allclose(hist, expected)
    np.testing.assert_allclose(written, [values[1] * 10, 0, values[3] * 10, 0, values[0] * 10])
    np.testing.assert_array_equal(positions, np.arange(5) * 2)
    np.testing.assert_array_equal(three, np.arange(3))


def test_loops_and_branches():
    @soac.jit
    def f(x, n):
        total, steps = soac.fori_loop(0, n, lambda i, c: (c[0] * 0.5 + x * i.astype(np.float64), c[1] + 1), (x, 0))
        halved = soac.while_loop(lambda v: snp.sum(v * v) > 1.0, lambda v: v * 0.5, x)
        branch = soac.cond(snp.sum(x) > 0.0, lambda a: a * 2.0, lambda a: a - 1.0, x)
        return total, steps, halved, branch

    def reference(x, n):
        total = x.copy()
        for i in range(n):
            total = total * 0.5 + x * i
        halved = x.copy()
        while np.sum(halved * halved) > 1.0:
            halved = halved * 0.5
        return total, n, halved, x * 2.0 if x.sum() > 0 else x - 1.0

    for x in (rng.uniform(0.5, 2.0, 5), -rng.uniform(0.5, 2.0, 5)):
        for got, want in zip(f(x, 4), reference(x, 4)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_numpy_layer():
    @soac.jit
    def f(A, B, x):
        return (
            snp.dot(x, x), A @ x, snp.matvec(A, 2.0 * x), A @ B, x @ B,
            snp.sum(A), snp.sum(A, axis=0), snp.sum(A, axis=-1), snp.max(A), snp.max(A, axis=0),
            snp.mean(A), snp.mean(A, axis=1), snp.logsumexp(A), snp.logsumexp(A, axis=0), snp.logsumexp(A, axis=1),
            snp.zeros_like(A) + snp.ones((2,)).sum(),
        )

    A, B, x = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(4)

    def logsumexp(a, axis=None):
        m = np.max(a, axis=axis, keepdims=True)
        return np.squeeze(m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)), axis=axis)

    expected = (
        x @ x, A @ x, A @ (2.0 * x), A @ B, x @ B,
        A.sum(), A.sum(0), A.sum(-1), A.max(), A.max(0),
        A.mean(), A.mean(1), logsumexp(A), logsumexp(A, 0), logsumexp(A, 1),
        np.full_like(A, 2.0),
    )
    for got, want in zip(f(A, B, x), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_array_from_scalars_and_its_gradient():
    def f(x):
        rotation = snp.array([[soac.math.cos(x[0]), -soac.math.sin(x[0])], [soac.math.sin(x[0]), soac.math.cos(x[0])]])
        return snp.sum(rotation @ snp.array([x[1], 2.0]) * snp.array([1.0, x[2]]))

    x = rng.standard_normal(3)
    c, s = np.cos(x[0]), np.sin(x[0])
    rotated = np.array([[c, -s], [s, c]]) @ np.array([x[1], 2.0])
    np.testing.assert_allclose(soac.jit(f)(x), rotated[0] + x[2] * rotated[1], rtol=1e-12)
    expected = [(-s * x[1] - 2 * c) + x[2] * (c * x[1] - 2 * s), c + x[2] * s, rotated[1]]
    np.testing.assert_allclose(soac.grad(f)(x), expected, rtol=1e-12)
    # A matrix built from scalars, read by every row of a map: its adjoint is summed over the rows.
    M = rng.standard_normal((4, 2))
    def scale(x, M):
        diagonal = snp.array([[x[0], 0.0], [0.0, x[1]]])
        return snp.sum(soac.map(lambda row: diagonal @ row, M))

    np.testing.assert_allclose(soac.grad(scale)(x, M), [M[:, 0].sum(), M[:, 1].sum(), 0.0], rtol=1e-12)
    with pytest.raises(soac.TraceError, match="different lengths"):
        soac.jit(lambda v: snp.array([[v[0], 1.0], [2.0]]))(x)


def test_one_trace_and_one_compilation_per_signature():
    calls = []

    @soac.jit
    def f(x):
        calls.append(x.ndim)
        return snp.sum(x * x)

    assert f(np.arange(3.0)) == 5.0
    assert f(np.arange(7.0)) == 91.0  # other sizes: the same code
    assert f(np.ones((2, 2))) == 4.0  # another rank: a new trace
    assert f(np.ones(2, np.float32)) == np.float32(2.0)  # another dtype: a new trace
    assert calls == [1, 2, 1]
    assert f.trace(np.zeros(1)) is f.trace(soac.ArgSpec(np.dtype(np.float64), 1))


def test_calls_find_their_trace_by_their_arguments_types_and_shapes():
    # A call looks its trace up by each array's dtype and shape and each
    # number's type (cheaper than the signature); these must lead to the
    # trace the signature would.
    h = soac.jit(lambda x, n: x * n)
    x = np.ones(2)
    for _ in range(2):
        np.testing.assert_array_equal(h(x, 2), [2.0, 2.0])
        np.testing.assert_array_equal(h(x, 2.5), [2.5, 2.5])
        np.testing.assert_array_equal(h(x.astype(np.float32), 3), np.float32([3.0, 3.0]))
        with pytest.raises(soac.TraceError, match="dtype object cannot be traced"):
            h(x, 2**70)  # an int of no dtype, after an int64 one
    assert len(h._traces) == 3

    g = soac.jit(lambda x, n, scale: x[:n] * scale, static_argnums=(1, 2))
    for _ in range(2):
        np.testing.assert_array_equal(g(np.arange(5.0), 2, 3.0), [0.0, 3.0])
        np.testing.assert_array_equal(g(np.arange(5.0), 2, 4.0), [0.0, 4.0])
        with pytest.raises(soac.TraceError, match="must be hashable"):
            g(np.ones(2), 2, [1.0])

    # One key per set of shapes, so their number is bounded.
    f = soac.jit(lambda x: snp.sum(x))
    for n in range(1, 400):
        assert f(np.ones(n)) == n
    assert len(f._traces) == 1 and 0 < len(f._by_arguments) <= 256


def test_small_inner_sizes_are_compiled_in():
    calls = []

    @soac.jit
    def norms(points):
        calls.append(points.static_shape)
        return snp.sum(points * points, axis=-1)

    for shape in [(5, 3), (9, 3), (4, 4), (2, 17), (6, 20), (3,)]:
        points = rng.standard_normal(shape)
        np.testing.assert_allclose(norms(points), np.sum(points * points, axis=-1), rtol=1e-12)
    # The 3s and the 4 are in the code (one trace each); the first size, and
    # inner sizes above 16, stay dynamic: (9, 3) reuses (5, 3)'s trace, and
    # (6, 20) reuses (2, 17)'s.
    assert calls == [(None, 3), (None, 4), (None, None), (None,)]
    assert "tensor<?x3xf64>" in norms.mlir(np.zeros((1, 3)))
    assert norms.trace(np.zeros((1, 3))) is norms.trace(soac.ArgSpec(np.dtype(np.float64), 2, (None, 3)))

    dynamic = soac.jit(lambda x: snp.sum(x), static_inner_sizes_up_to=0)
    assert dynamic(np.ones((2, 3))) == 6.0 and "tensor<?x?xf64>" in dynamic.mlir()
    wider = soac.jit(lambda x: snp.sum(x), static_inner_sizes_up_to=32)
    assert wider(np.ones((2, 20))) == 40.0 and "tensor<?x20xf64>" in wider.mlir()
    assert "tensor<?x10xf64>" in norms.mlir(np.zeros((1, 10)))
    # A size the code reads as a Python int: static while small, and beyond
    # that the function is traced for its shapes, as with static_shapes=True.
    per_column = soac.jit(lambda x: snp.stack([x[:, j] * j for j in range(x.shape[1])], axis=1))
    for shape in [(2, 3), (2, 6)]:
        x = rng.standard_normal(shape)
        np.testing.assert_allclose(per_column(x), x * np.arange(shape[1]), rtol=1e-12)
    for wrong in [-1, 2.5, True, "4"]:
        with pytest.raises(soac.Error, match="static_inner_sizes_up_to must be an int of 0 or more"):
            soac.jit(lambda x: x, static_inner_sizes_up_to=wrong)


def test_ir_and_lowered_ir():
    @soac.jit
    def sum_of_squares(x):
        return soac.reduce(lambda a, b: a + b, soac.map(lambda v: v * v, x), 0.0)

    with pytest.raises(soac.Error, match="has not been traced yet"):
        sum_of_squares.mlir()
    text = sum_of_squares.mlir(np.zeros(2))
    assert "func.func @sum_of_squares(%arg0: tensor<?xf64>) -> f64" in text
    assert "soac.map" in text and "soac.reduce" in text
    assert __file__ in sum_of_squares.mlir(debug_info=True)
    lowered = sum_of_squares.lower("cpu")
    assert "llvm.func @sum_of_squares" in lowered and "soac." not in lowered
    assert "gpu.binary" in sum_of_squares.lower("gpu")
    with pytest.raises(soac.Error, match="unknown target 'tpu'"):
        sum_of_squares.lower("tpu")


def test_traced_ir_runs_on_the_interpreter_too():
    f = soac.jit(lambda m, x: snp.logsumexp(m @ x))
    m, x = rng.standard_normal((3, 2)), rng.standard_normal(2)
    traced = f.trace(m, x)
    np.testing.assert_allclose(soac.interpret(traced.module, traced.name, m, x), f(m, x), rtol=1e-12)
