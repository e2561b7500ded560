"""soac functions inside PyTorch and JAX programs (soac.interop): values
against the peer's own computation, gradients by the peer's gradient checks."""

from __future__ import annotations

import numpy as np
import pytest

import soac
import soac.numpy as snp

rng = np.random.default_rng(24)


def layer(x, w, b):
    return snp.tanh(x @ w + b)


def test_torch_adapter_passes_gradcheck_and_trains_like_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install -r bench/requirements.txt)")
    f = soac.interop.to_torch(layer)
    x = torch.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    w = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(2), requires_grad=True)
    assert torch.autograd.gradcheck(f, (x, w, b))
    # The same model trained by torch autograd and through soac's vjp, step for step.
    target = torch.tensor(rng.standard_normal((5, 2)))
    ours, theirs = [w.detach().clone().requires_grad_(True)], [w.detach().clone().requires_grad_(True)]
    for forward, (weights,) in ((f, ours), (lambda x, w, b: torch.tanh(x @ w + b), theirs)):
        optimizer = torch.optim.SGD([weights], lr=0.1)
        for _ in range(5):
            optimizer.zero_grad()
            loss = ((forward(x.detach(), weights, b.detach()) - target) ** 2).mean()
            loss.backward()
            optimizer.step()
    np.testing.assert_allclose(ours[0].detach().numpy(), theirs[0].detach().numpy(), rtol=1e-12)


def test_jax_adapter_under_jit_and_grad():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    f = soac.interop.to_jax(layer)
    x, w, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)

    def loss(impl, w):
        return jnp.sum(impl(x, w, b) ** 2)

    reference = lambda x, w, b: jnp.tanh(x @ w + b)  # noqa: E731
    np.testing.assert_allclose(jax.jit(f)(x, w, b), reference(x, w, b), rtol=1e-12)
    ours = jax.jit(jax.grad(lambda w: loss(f, w)))(w)
    np.testing.assert_allclose(ours, jax.grad(lambda w: loss(reference, w))(w), rtol=1e-10)
