"""numpy's indexing, JAX's ``.at[]`` updates and type promotion, and sizes as
values, on traced arrays: values against numpy, gradients against central
finite differences (float64), and the sparsity of a gather's adjoint."""

from __future__ import annotations

import numpy as np
import pytest

import soac
import soac.numpy as snp
from gradcheck import finite_difference_vjp

rng = np.random.default_rng(18)
X = rng.standard_normal((3, 4, 5))
IDX = np.array([2, 0, -1, 1])
IDX2 = np.array([[0, 1], [2, -3]])

# Keys as numpy takes them; each row is checked against numpy's own result.
KEYS = [
    (0,), (1, 2), (-1, -1, -1), (slice(1, None),), (slice(-3, -1),), (Ellipsis, 0), (None,), (None, Ellipsis, None),
    (slice(None), None, 1), (0, None, slice(None, None, 2), None), (slice(None, None, 2), slice(1, None)),
    (IDX,), (slice(None), IDX[:3]), (IDX2,), (0, slice(None), IDX), (IDX, slice(None), 0), (slice(None), IDX[:3], 1),
    (IDX[:3], IDX[:3]), (IDX[:2], slice(None), IDX[:2]), (Ellipsis, IDX), (None, IDX), (IDX, None), (IDX2, 1, slice(1, 3)),
    (slice(None, None, -1),), (slice(None), slice(None, None, -2)), (slice(3, 0, -1), -1),
    (np.array([True, False, True]),), (slice(None), [0, 3]), (X[..., 0].sum(1) > 0,),
]


@pytest.mark.parametrize("chunk", range(3))
def test_getitem_agrees_with_numpy(chunk):
    keys = KEYS[chunk::3]
    got = soac.jit(lambda x: tuple(x[k] for k in keys))(X)
    for key, value in zip(keys, got, strict=True):
        assert value.shape == X[key].shape, key
        np.testing.assert_array_equal(value, X[key], err_msg=str(key))


def test_traced_indices_and_slice_bounds():
    f = soac.jit(lambda x, i, j, rows, cols: (x[i], x[i:j], x[-j:], x[rows, :, cols], x[:, rows]))
    x = X.reshape(3, 4, 5)
    for i, j in [(1, 3), (-2, 10), (2, 1), (-3, -1)]:
        rows, cols = IDX[:2] % 3, IDX[1:3]
        got = f(x, i, j, rows, cols)
        want = (x[i], x[i:j], x[-j:], x[rows, :, cols], x[:, rows])
        for value, expected in zip(got, want, strict=True):
            np.testing.assert_array_equal(value, expected)


def test_out_of_range_reads_are_errors():
    f = soac.jit(lambda x, i: x[i])
    with pytest.raises(soac.IndexOutOfRangeError):
        f(np.arange(4.0), 4)
    with pytest.raises(soac.IndexOutOfRangeError):
        f(np.arange(4.0), -5)
    with pytest.raises(soac.IndexOutOfRangeError):
        soac.jit(lambda x, idx: x[idx])(np.arange(4.0), np.array([0, 7]))


def test_indexing_errors_at_trace_time():
    with pytest.raises(soac.TraceError, match="too many indices .* it has 1 axes, but 2 were indexed"):
        soac.jit(lambda x: x[0, 0])(np.ones(3))
    with pytest.raises(soac.TraceError, match="traced boolean mask"):
        soac.jit(lambda x: x[x > 0.0])(np.ones(3))
    with pytest.raises(soac.TraceError, match="single ellipsis"):
        soac.jit(lambda x: x[..., ...])(np.ones(3))
    with pytest.raises(soac.TraceError, match="slice step cannot be zero"):
        soac.jit(lambda x: x[::0])(np.ones(3))


def _check_gradient(f, args, wrt):
    gradient = soac.grad(f, argnums=tuple(wrt))(*args)
    gradient = gradient if isinstance(gradient, tuple) else (gradient,)
    expected = finite_difference_vjp(soac.jit(f), args, wrt, [1.0])
    for got, want in zip(gradient, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_gradients_of_slices_and_gathers():
    w = rng.standard_normal((4, 3))

    def loss(x, E, idx):
        d = x[1:] - x[:-1]
        rows = E[idx, 1:]  # a gather of rows, then a slice
        return snp.sum(d * d) + snp.sum(rows * rows[::-1]) + snp.sum(E[:, 1] * x[:4]) + snp.sum(x[::-2] * x[1:4][::-1])

    _check_gradient(loss, [rng.standard_normal(5), w, np.array([3, 0, -1, 1, 3])], [0, 1])


def _assert_sparse_adjoint(f, *args):
    """The gradient of ``f`` adds what it reads with a reduce_by_index, not a
    dense update (insert_slice) of the tensor's adjoint per read."""
    from mlir import ir, passmanager

    traced = soac.jit(soac.grad(f)).trace(*args)
    with traced.module.context:
        module = ir.Module.parse(traced.mlir())
        passmanager.PassManager.parse("builtin.module(soac-autodiff,canonicalize,cse)").run(module.operation)
    text = str(module)
    assert "soac.reduce_by_index" in text
    assert "tensor.insert_slice" not in text


def test_a_gathers_adjoint_is_sparse():
    """The adjoint of ``E[idx]`` is a reduce_by_index into E's adjoint, not a dense update per row."""
    _assert_sparse_adjoint(lambda E, idx: snp.sum(E[idx] * 2.0), np.ones((4, 3)), np.array([1, 2]))


def test_rows_read_at_several_indices_have_sparse_adjoints():
    """``c[i, j]`` of a rank-3 ``c`` in a map, and the transposes that copy
    rows (``swapaxes(c, 0, 1)``): their adjoints add each row at its position
    with one reduce_by_index, never a dense adjoint of ``c`` per row; and
    they agree with finite differences."""
    c = rng.standard_normal((4, 3, 5))
    i, j = np.array([3, 0, -1, 2, 3]), np.array([1, 2, 0, -3, 1])

    def loss(c, i, j):
        rows = soac.map(lambda a, b: snp.sum(c[a, b] * c[a, b]), i, j)
        return snp.sum(rows) + snp.sum(snp.swapaxes(c, 0, 1)[2] * c[:, 2] ** 2)

    _check_gradient(loss, [c, i, j], [0])
    reads = lambda c, i, j: snp.sum(soac.map(lambda a, b: snp.sum(c[a, b] * c[a, b]), i, j))  # noqa: E731
    transposed = lambda c, i, j: snp.sum(snp.swapaxes(c, 0, 1) * snp.swapaxes(c, 0, 1))  # noqa: E731
    for f in (reads, transposed):
        _assert_sparse_adjoint(f, c, i, j)


UPDATES = [
    ("add", lambda x, i: x.at[i].add(1.0), lambda e, i: np.add.at(e, i[(i >= -len(e)) & (i < len(e))], 1.0)),
    ("set row", lambda x, i: x.at[1].set(5.0), lambda e, i: e.__setitem__(1, 5.0)),
    ("set negative row", lambda x, i: x.at[-2].set(np.arange(4.0)), lambda e, i: e.__setitem__(-2, np.arange(4.0))),
    ("set column", lambda x, i: x.at[:, 1].set(0.0), lambda e, i: e.__setitem__((slice(None), 1), 0.0)),
    ("multiply element", lambda x, i: x.at[1, 2].multiply(3.0), lambda e, i: e.__setitem__((1, 2), e[1, 2] * 3.0)),
    ("max pairs", lambda x, i: x.at[np.array([0, 1]), np.array([1, 1])].max(50.0),
     lambda e, i: np.maximum.at(e, (np.array([0, 1]), np.array([1, 1])), 50.0)),
    ("subtract strided", lambda x, i: x.at[1:, ::2].subtract(1.0), lambda e, i: e.__setitem__((slice(1, None), slice(None, None, 2)), e[1:, ::2] - 1.0)),
    ("set out of range slice", lambda x, i: x.at[:, 5:].set(1.0), lambda e, i: None),
    ("min rows", lambda x, i: x.at[i].min(-1.0), lambda e, i: np.minimum.at(e, i[(i >= -len(e)) & (i < len(e))], -1.0)),
    ("divide", lambda x, i: x.at[0].divide(2.0), lambda e, i: e.__setitem__(0, e[0] / 2.0)),
]


def test_at_updates_agree_with_numpy():
    x = np.arange(12.0).reshape(3, 4)
    i = np.array([2, 0, 2, -1, 7, -9])
    got = soac.jit(lambda x, i: tuple(update(x, i) for _, update, _ in UPDATES))(x, i)
    for (name, _, reference), value in zip(UPDATES, got, strict=True):
        expected = x.copy()
        reference(expected, i)
        np.testing.assert_array_equal(value, expected, err_msg=name)
    np.testing.assert_array_equal(soac.jit(lambda x: x.at[1].get())(x), x[1])


def test_gradients_of_at_updates():
    def loss(x, v):
        y = x.at[np.array([0, 0, 2])].add(v).at[1].multiply(v[0]).at[np.array([3])].set(v[1:2])
        return snp.sum(y * y)

    _check_gradient(loss, [rng.standard_normal(4), rng.standard_normal(3)], [0, 1])

    def matrix_loss(M, v):
        return snp.sum(M.at[:, 1].add(v) ** 2) + snp.sum(M.at[1:, ::2].set(0.5) * M)

    _check_gradient(matrix_loss, [rng.standard_normal((3, 4)), rng.standard_normal(3)], [0, 1])


def test_promotion_follows_jax():
    f = soac.jit(lambda w, g, i, b, h: (w - 0.1 * g, w @ g.astype(np.float64), i + 1, i + 1.5, b + 1, b * True, i.astype(np.int8) + 1,
                                        h + w, i / 2, w + i))
    w, g = np.ones(3, np.float32), np.ones(3, np.float32)
    out = f(w, g, np.arange(3), np.array([True, False, True]), np.ones(3, np.float16))
    dtypes = [np.float32, np.float64, np.int64, np.float64, np.int64, np.bool_, np.int8, np.float32, np.float64, np.float32]
    assert [o.dtype for o in out] == [np.dtype(d) for d in dtypes]
    np.testing.assert_allclose(out[0], 0.9, rtol=1e-6)
    np.testing.assert_array_equal(out[3], np.arange(3) + 1.5)


def test_promote_types_matches_jax_when_installed():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    names = ["bool", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
    for a in names:
        for b in names:
            assert soac.numpy.promote_types(a, b) == np.dtype(jnp.promote_types(a, b).name), (a, b)


def test_floor_divide_and_remainder_agree_with_numpy():
    a = np.array([7, -7, 7, -7, 0, 5, np.iinfo(np.int64).min])
    b = np.array([2, 2, -2, -2, 3, 0, -1])
    x, y = rng.standard_normal(6) * 5, np.array([1.5, -1.5, 2.0, -0.5, 3.0, -3.0])
    got = soac.jit(lambda a, b, x, y: (a // b, a % b, x // y, x % y, a // 2, x % 1.0))(a, b, x, y)
    with np.errstate(divide="ignore", over="ignore"):
        want = (a // b, a % b, x // y, x % y, a // 2, x % 1.0)
    for value, expected in zip(got, want, strict=True):
        np.testing.assert_allclose(value, expected, rtol=1e-12)
    _check_gradient(lambda x, y: snp.sum((x % y) * x), [x, y], [0, 1])


def test_sizes_are_values():
    f = soac.jit(lambda x: (x.shape[0] * 2, soac.iota(x.shape[1]) + x.size, x[: x.shape[0] // 2]))
    twice, iota, half = f(np.ones((5, 3)))
    assert twice == 10
    np.testing.assert_array_equal(iota, np.arange(3) + 15)
    assert half.shape == (2, 3)
    # A size needed as a Python value: traced again for the arguments' shapes, as JAX would.
    uses_len = soac.jit(lambda x: x * len(x))
    np.testing.assert_array_equal(uses_len(np.ones(3)), np.full(3, 3.0))
    np.testing.assert_array_equal(uses_len(np.ones(2)), np.full(2, 2.0))
    assert "tensor<2xf64>" in uses_len.mlir()
    with pytest.raises(soac.TraceError, match="no Python truth value"):  # a value from data: no retrace helps
        soac.jit(lambda x: x if x[0] > 0 else -x)(np.ones(3))
    with pytest.raises(soac.TraceError, match="used as a Python int"):
        soac.jit(lambda x, n: x[: int(n)])(np.ones(3), 2)


def test_static_shapes_and_static_argnums():
    f = soac.jit(lambda x: x * len(x) + x.shape[0], static_shapes=True)
    np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 6.0))
    np.testing.assert_array_equal(f(np.ones(4)), np.full(4, 8.0))
    assert "tensor<4xf64>" in f.mlir()
    with pytest.raises(soac.ArgumentError):
        f.trace(np.ones(3))(np.ones(5))  # a trace for size 3 refuses size 5

    g = soac.jit(lambda x, n, scale: x[:n] * scale, static_argnums=(1, 2))
    np.testing.assert_array_equal(g(np.arange(5.0), 2, 3.0), [0.0, 3.0])
    np.testing.assert_array_equal(g(np.arange(5.0), 3, 1.0), [0.0, 1.0, 2.0])
    assert len(g._traces) == 2
    with pytest.raises(soac.TraceError, match="must be hashable"):
        g(np.ones(2), [1], 1.0)


def test_linalg_norm_agrees_with_numpy():
    m = rng.standard_normal((3, 4))
    cases = [dict(), dict(axis=1), dict(ord=1, axis=0), dict(ord=np.inf, axis=1), dict(ord=-np.inf, axis=0),
             dict(ord=3, axis=1, keepdims=True), dict(axis=(0, 1)), dict(ord=0, axis=1)]
    got = soac.jit(lambda m: [snp.linalg.norm(m, **case) for case in cases])(m)
    for case, value in zip(cases, got, strict=True):
        expected = np.linalg.norm(m, **case)
        assert np.shape(value) == np.shape(expected), case
        np.testing.assert_allclose(value, expected, rtol=1e-12, err_msg=str(case))
    _check_gradient(lambda m: snp.linalg.norm(m) + snp.sum(snp.linalg.norm(m, 3, axis=0)), [m], [0])
