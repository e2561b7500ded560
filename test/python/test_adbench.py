"""The ADBench objectives of bench/adbench: ours against the numpy oracles
(values at the benchmark's small size, gradients against central finite
differences of the oracle on a tiny instance, float64), then against JAX and
PyTorch where those are installed."""

from __future__ import annotations

import functools
import importlib
import pathlib
import sys

import numpy as np
import pytest
from gradcheck import finite_difference_vjp

import soac

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "adbench"))
MODULES = [importlib.import_module(name) for name in ("gmm", "lstm", "ba", "hand", "kmeans")]
by_name = pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)


def ours(module, inputs):
    """Our value and gradients (a tuple, one per WRT argument)."""
    function, args = module.soac_version(*inputs)
    value, gradients = soac.value_and_grad(function, argnums=tuple(module.WRT))(*args)
    return value, gradients if isinstance(gradients, tuple) else (gradients,)


@functools.cache
def ours_at_small_size(module):
    """Ours on the small benchmark inputs, shared by the cross-checks."""
    return ours(module, module.inputs(**module.SIZES["small"]))


@by_name
def test_value_matches_the_numpy_oracle(module):
    inputs = module.inputs(**module.SIZES["small"])
    function, args = module.soac_version(*inputs)
    np.testing.assert_allclose(soac.jit(function)(*args), module.reference(*inputs), rtol=1e-10)


@by_name
def test_gradient_matches_finite_differences_of_the_oracle(module):
    inputs = module.inputs(**module.TINY)
    value, gradients = ours(module, inputs)
    np.testing.assert_allclose(value, module.reference(*inputs), rtol=1e-12)
    expected = finite_difference_vjp(module.reference, list(inputs), module.WRT, [1.0])
    for got, want in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_kmeans_gradient_matches_the_closed_form():
    kmeans = importlib.import_module("kmeans")
    gradient = ours_at_small_size(kmeans)[1][0]
    np.testing.assert_allclose(gradient, kmeans.reference_gradient(*kmeans.inputs(**kmeans.SIZES["small"])), rtol=1e-10, atol=1e-10)


@by_name
def test_against_jax(module):
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    inputs = module.inputs(**module.SIZES["small"])
    f, args = module.jax_version(*inputs)
    value, gradients = jax.jit(jax.value_and_grad(f, argnums=module.WRT))(*args)
    our_value, our_gradients = ours_at_small_size(module)
    np.testing.assert_allclose(our_value, float(value), rtol=1e-10)
    for got, want in zip(our_gradients, gradients, strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-8, atol=1e-10)


@by_name
def test_against_pytorch(module):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install -r bench/requirements.txt)")
    inputs = module.inputs(**module.SIZES["small"])
    f, args = module.torch_version(*inputs)
    wrt = [args[i].requires_grad_(True) for i in module.WRT]
    value = f(*args)
    gradients = torch.autograd.grad(value, wrt)
    our_value, our_gradients = ours_at_small_size(module)
    np.testing.assert_allclose(our_value, value.item(), rtol=1e-10)
    for got, want in zip(our_gradients, gradients, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-8, atol=1e-10)


# The gradients large enough to be tiered (k-means' lowers to about 32 KB,
# at tiers.LARGE_BYTES, since its forward point map is gone: its adjoint map
# yields the points' distances).
TIERED = [module for module in MODULES if module.NAME != "k-means"]


@pytest.mark.parametrize("module", TIERED, ids=lambda m: m.NAME)
def test_parallel_code_matches_the_sequential_code_it_replaces(module, tmp_path, monkeypatch):
    """Large gradients start on sequential code while their parallel code
    compiles in the background (soac.tiers): both tiers, on two threads,
    against each other."""
    from soac import tiers

    monkeypatch.setenv("SOAC_CACHE_DIR", str(tmp_path))  # neither tier compiled before
    monkeypatch.setenv("SOAC_TIERED", "on")
    inputs = module.inputs(**module.SIZES["small"])
    function, args = module.soac_version(*inputs)
    traced = soac.value_and_grad(function, argnums=tuple(module.WRT)).trace(*args)
    soac.clear_caches()
    threads = soac.get_num_threads()
    soac.set_num_threads(2)
    try:
        compiled = soac.compile(traced.module, traced.name)
        assert isinstance(compiled, tiers.TieredFunction)
        sequential = compiled(*args)
        assert compiled.wait(600) and compiled.tier == "parallel"
        parallel = compiled(*args)
    finally:
        soac.set_num_threads(threads)
    for got, want in zip(parallel, sequential, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
