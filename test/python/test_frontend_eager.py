"""soac.numpy, soac.math and the combinators outside a trace compute at once
on numpy arrays (as jax.numpy does outside jax.jit)."""

from __future__ import annotations

import numpy as np
import pytest

import soac
import soac.numpy as snp


def test_numpy_functions_run_eagerly_on_numpy_arrays():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(snp.stack([np.float64(1.0), np.float64(2.0)]), [1.0, 2.0])
    np.testing.assert_allclose(snp.sum(x, axis=1), x.sum(axis=1))
    np.testing.assert_allclose(snp.mean(x, axis=[0, 1]), x.mean())  # a list of axes is a static value
    np.testing.assert_allclose(snp.exp(x), np.exp(x))
    np.testing.assert_array_equal(snp.zeros((2, 2)), np.zeros((2, 2)))  # no array argument at all
    np.testing.assert_array_equal(snp.concatenate([np.ones(2), np.zeros(1)]), [1.0, 1.0, 0.0])
    assert isinstance(snp.array([1.0, 2.0]), np.ndarray)


def test_math_and_combinators_run_eagerly():
    assert soac.math.sin(np.float64(0.5)) == pytest.approx(np.sin(0.5), rel=1e-15)
    np.testing.assert_allclose(soac.map(lambda v: v * v, np.arange(4.0)), np.arange(4.0) ** 2)
    np.testing.assert_allclose(soac.scan(lambda a, b: a + b, np.arange(5.0), 0.0), np.cumsum(np.arange(5.0)))


def test_eager_calls_compile_once_per_signature_and_shape():
    snp.tanh(np.ones(3))
    jitted = soac.frontend.eager._jitted(snp.tanh.__wrapped__, 1, (), ())
    traces = len(jitted._traces)
    snp.tanh(np.full(3, 2.0))  # the same dtype and shape: the same code
    assert len(jitted._traces) == traces
    snp.tanh(np.ones(7))  # shapes are static in eager calls
    assert len(jitted._traces) == traces + 1


def test_eager_errors_name_the_callers_line():
    with pytest.raises(soac.TraceError, match=r"test_frontend_eager.py:\d+:\d+: reshape: cannot reshape .* into \(4, 2\)"):
        snp.reshape(np.ones(6), (4, 2))
