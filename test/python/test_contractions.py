"""soac.matmul: the frontend's matrix products as one contraction, computed
by the runtime's matrix product (numpy's OpenBLAS, or its own loops), its
derivatives (two products) against central differences, its checks, and
the interpreter."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from mlir import ir

import soac
import soac.numpy as snp
from gradcheck import check_vjp, finite_difference_vjp
from soac.runtime import abi, native

rng = np.random.default_rng(5)


def _runtime() -> ctypes.CDLL:
    return ctypes.CDLL(native.soac_runtime_library())


@pytest.fixture(params=["blas", "loops"])
def kernel(request):
    """Every product once through the registered BLAS, once through the
    runtime's own loops (what a library loaded without numpy's OpenBLAS
    runs)."""
    if request.param == "loops":
        _runtime().soac_set_gemm(None, None)
        _runtime().soac_set_gemv(None, None)
    yield request.param
    abi.register_blas(_runtime())


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_products_of_every_shape_match_numpy(kernel, dtype):
    a = (rng.standard_normal((7, 5)) * 4).astype(dtype)
    b = (rng.standard_normal((5, 3)) * 4).astype(dtype)
    x, y = (rng.standard_normal(5) * 4).astype(dtype), (rng.standard_normal(7) * 4).astype(dtype)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    cases = [
        (lambda a, b: a @ b, (a, b)),
        (lambda a, x: a @ x, (a, x)),
        (lambda y, a: y @ a, (y, a)),
        (lambda a, b: a.T @ a @ b, (a, b)),
        (lambda a, b: (a[1:6:2, :] @ b[:, ::2]), (a, b)),  # strided views
        (lambda a, b: snp.einsum("ij,jk->ik", a, b), (a, b)),
        # One column or one row (BLAS's gemv), of transposed, strided and
        # reversed views.
        (lambda a, y: a.T @ y, (a, y)),
        (lambda a, x: x @ a.T, (a, x)),
        (lambda a, x: a[::2] @ x, (a, x)),
        (lambda a, x: a[:, ::-1] @ x[::-1], (a, x)),
        (lambda a, y: y[1::2] @ a[1::2, 1:], (a, y)),
        (lambda a, x: a @ x[:, None] + (x[None, :] @ a.T).T, (a, x)),
    ]
    for fn, args in cases:
        expected = fn(*args)
        np.testing.assert_allclose(soac.jit(fn)(*args), expected, rtol=tolerance)
        assert soac.jit(fn)(*args).dtype == expected.dtype


def test_empty_and_degenerate_sizes(kernel):
    product = soac.jit(lambda a, b: a @ b)
    for m, k, n in [(0, 3, 2), (3, 0, 2), (3, 2, 0), (1, 1, 1), (1, 4, 1)]:
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        np.testing.assert_allclose(product(a, b), a @ b, rtol=1e-12)


def test_product_of_large_matrices_matches_numpy():
    a, b = rng.standard_normal((300, 200)), rng.standard_normal((200, 250))
    np.testing.assert_allclose(soac.jit(lambda a, b: a @ b)(a, b), a @ b, rtol=1e-10)


def test_inner_sizes_known_only_at_run_time_are_checked():
    product = soac.jit(lambda a, b: a @ b)
    with pytest.raises(soac.Error, match="'soac.matmul' contracts operands of different inner sizes"):
        product(np.ones((3, 4)), np.ones((5, 2)))


def test_gradient_of_a_two_layer_network_against_finite_differences():
    def loss(x, w1, w2):
        return snp.sum(snp.tanh(x @ w1) @ w2)

    x, w1, w2 = rng.standard_normal((6, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    gradients = soac.jit(soac.grad(loss, argnums=(0, 1, 2)))(x, w1, w2)
    primal = soac.jit(loss)
    expected = finite_difference_vjp(primal, (x, w1, w2), [0, 1, 2], [1.0])
    for got, reference in zip(gradients, expected):
        np.testing.assert_allclose(got, reference, rtol=1e-6, atol=1e-8)


def test_forward_mode_and_hessian_vector_products():
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    da, db = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    _, tangent = soac.jvp(lambda a, b: a @ b, (a, b), (da, db))
    np.testing.assert_allclose(tangent, da @ b + a @ db, rtol=1e-12)
    hessian = soac.jit(soac.hessian(lambda a: snp.sum((a @ b) ** 2)))(a)
    # d²/da² of |a b|² is 2 (I ⊗ b bᵀ)
    expected = 2 * np.einsum("ik,jl->ijkl", np.eye(4), b @ b.T)
    np.testing.assert_allclose(hessian, expected, rtol=1e-10, atol=1e-12)


TRANSPOSED = """
func.func @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) transpose_lhs transpose_rhs -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}
"""


def test_transposed_operands_compiled_interpreted_and_differentiated():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    np.testing.assert_allclose(soac.compile(TRANSPOSED, "product")(a, b), a.T @ b.T, rtol=1e-12)
    with ir.Context():
        np.testing.assert_allclose(soac.interpret(soac.parse(TRANSPOSED), "product", a, b), a.T @ b.T, rtol=1e-12)
    check_vjp(TRANSPOSED, "product", (a, b))


def test_interpreter_reports_mismatched_inner_sizes():
    with ir.Context(), pytest.raises(soac.Error, match="contracts 3 columns of the left operand with 5 rows"):
        soac.interpret(soac.parse(TRANSPOSED), "product", np.ones((3, 4)), np.ones((2, 5)))


def test_products_inside_maps_keep_their_fused_form():
    """A product per row (HAND's transforms, GMM's matrix-vector products)
    is no call per row: it stays a map that fuses with its neighbours."""
    traced = soac.jit(lambda xs, m: soac.map(lambda x: m @ x, xs))
    xs, m = rng.standard_normal((6, 3)), rng.standard_normal((2, 3))
    np.testing.assert_allclose(traced(xs, m), xs @ m.T, rtol=1e-12)
    assert "soac.matmul" not in traced.mlir(xs, m)
    assert "soac.matmul" in soac.jit(lambda xs, m: xs @ m.T).mlir(xs, m)


def test_transposes_read_by_products_are_flags_not_copies():
    a, b, c = rng.standard_normal((5, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    product = soac.jit(lambda a, b: a @ b.T)
    np.testing.assert_allclose(product(a, b), a @ b.T, rtol=1e-12)
    assert "soac.matmul ins(%arg0, %arg1 : tensor<?x3xf64>, tensor<?x3xf64>) transpose_rhs" in product.mlir(a, b)
    np.testing.assert_allclose(soac.jit(lambda a, c: a.T @ c.T)(a, c), a.T @ c.T, rtol=1e-12)
    # the transpose is still a value of its own where something else reads it
    both = soac.jit(lambda a, b: (a @ b.T, b.T + 1))(a, b)
    np.testing.assert_allclose(both[1], b.T + 1)
    gradients = soac.jit(soac.grad(lambda a, b: snp.sum(snp.tanh(a @ b.T)), argnums=(0, 1)))(a, b)
    expected = finite_difference_vjp(soac.jit(lambda a, b: snp.sum(snp.tanh(a @ b.T))), (a, b), [0, 1], [1.0])
    for got, reference in zip(gradients, expected):
        np.testing.assert_allclose(got, reference, rtol=1e-6, atol=1e-8)


def test_products_in_derivatives_mapped_over_rows():
    """jacrev and vmap of grad put a product's adjoint in a map body."""
    a, b = rng.standard_normal(3), rng.standard_normal((2, 3))
    for f in (lambda a, b: b @ a, lambda a, b: a @ b.T):
        np.testing.assert_allclose(soac.jit(soac.jacrev(f))(a, b), b, rtol=1e-12)
        np.testing.assert_allclose(soac.jit(soac.jacfwd(f))(a, b), b, rtol=1e-12)
        rows = np.stack([a, 2 * a])
        per_row = soac.jit(soac.vmap(soac.grad(lambda a, b, f=f: snp.sum(snp.sin(f(a, b)))), in_axes=(0, None)))(rows, b)
        np.testing.assert_allclose(per_row, np.cos(rows @ b.T) @ b, rtol=1e-12)


def test_batched_products_and_einsum_are_contractions_per_batch():
    a, b, c = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 4, 2)), rng.standard_normal((4, 2))
    cases = [
        (lambda a, b: a @ b, (a, b), a @ b),
        (lambda a, c: a @ c, (a, c), a @ c),
        (lambda a, b: snp.einsum("bij,bjk->bik", a, b), (a, b), a @ b),
        (lambda a, b: snp.einsum("ij,jk->ik", a[0], b[0]), (a, b), a[0] @ b[0]),
    ]
    for fn, args, expected in cases:
        traced = soac.jit(fn)
        np.testing.assert_allclose(traced(*args), expected, rtol=1e-12)
        assert "soac.matmul" in traced.mlir(*args)
    loss = lambda a, b: snp.sum(snp.tanh(a @ b))  # noqa: E731
    gradients = soac.jit(soac.grad(loss, argnums=(0, 1)))(a, b)
    expected = finite_difference_vjp(soac.jit(loss), (a, b), [0, 1], [1.0])
    for got, reference in zip(gradients, expected):
        np.testing.assert_allclose(got, reference, rtol=1e-6, atol=1e-8)


def test_set_num_threads_sets_the_blas_thread_count():
    """Products go to numpy's OpenBLAS: soac.set_num_threads(1) makes them
    run on one thread too (its idle threads would otherwise spin on the
    cores soac was not given)."""
    handle = abi._numpy_openblas()
    if handle is None:
        pytest.skip("numpy has no OpenBLAS of its own here: products use the runtime's loops")
    handle.scipy_openblas_get_num_threads64_.restype = ctypes.c_int
    previous = soac.get_num_threads()
    try:
        for count in (1, 2):
            soac.set_num_threads(count)
            assert handle.scipy_openblas_get_num_threads64_() == count
    finally:
        soac.set_num_threads(previous)
