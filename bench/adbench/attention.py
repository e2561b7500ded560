"""Small attention, sum((softmax(Q Kᵀ / 8) V)²), differentiated with respect
to Q, K and V: three matrix products and a softmax per row. Not an ADBench
objective; it follows their modules' protocol so that the GPU check bundle
times it against JAX and PyTorch (tools/gpu_bundle/catalog.py) and
bench/dense.py shares its formula.
"""

from __future__ import annotations

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac.numpy as snp

NAME = "attention"
SIZES = {"small": dict(n=512, d=64), "large": dict(n=1024, d=64)}
TINY = dict(n=3, d=2)
WRT = (0, 1, 2)  # q, k, v


def inputs(n: int, d: int, seed: int = 1) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, d)) * 0.3 for _ in range(3))


def loss(xp, q, k, v):
    """The formula, for a numpy-like namespace ``xp`` (numpy, soac.numpy,
    jax.numpy; PyTorch names its axes otherwise: torch_version)."""
    scores = q @ k.T / 8.0
    weights = xp.exp(scores - xp.max(scores, axis=1, keepdims=True))
    weights = weights / xp.sum(weights, axis=1, keepdims=True)
    return xp.sum((weights @ v) ** 2)


def reference(*args) -> float:
    return float(loss(np, *args))


def soac_version(*args) -> tuple:
    return (lambda *a: loss(snp, *a)), args


def jax_version(*args) -> tuple:
    _, jnp = jax_numpy()
    return (lambda *a: loss(jnp, *a)), args


def torch_version(*args) -> tuple:
    torch = torch_module()

    def f(q, k, v):
        scores = q @ k.T / 8.0
        weights = torch.exp(scores - torch.amax(scores, dim=1, keepdim=True))
        weights = weights / torch.sum(weights, dim=1, keepdim=True)
        return torch.sum((weights @ v) ** 2)

    return f, to_torch(args)
