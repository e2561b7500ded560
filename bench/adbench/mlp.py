"""A two-layer tanh MLP's loss, mean squared error over a batch,
differentiated with respect to its weights and biases: dense programs whose
time is their matrix products (soac.matmul: a BLAS call on the CPU, a tiled
kernel on the GPU). Not an ADBench objective; it follows their modules'
protocol so that the GPU check bundle times it against JAX and PyTorch
(tools/gpu_bundle/catalog.py) and bench/dense.py shares its formula.
"""

from __future__ import annotations

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac.numpy as snp

NAME = "MLP"
# Sizes that fit the GPU bundle (float64 arguments travel in it);
# bench/dense.py times its own, larger one on the CPU.
SIZES = {"small": dict(batch=256, inputs=256, hidden=256, outputs=10),
         "large": dict(batch=1024, inputs=256, hidden=256, outputs=10)}
TINY = dict(batch=3, inputs=4, hidden=5, outputs=2)
WRT = (2, 3, 4, 5)  # w1, b1, w2, b2


def inputs(batch: int, inputs: int, hidden: int, outputs: int, seed: int = 1) -> tuple:
    """Seeded normal data and targets, small normal weights, zero biases."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((batch, inputs)), rng.standard_normal((batch, outputs)),
            rng.standard_normal((inputs, hidden)) * 0.05, np.zeros(hidden),
            rng.standard_normal((hidden, outputs)) * 0.05, np.zeros(outputs))


def loss(xp, x, y, w1, b1, w2, b2):
    """The formula, for a numpy-like namespace ``xp`` (numpy, soac.numpy, jax.numpy)."""
    hidden = xp.tanh(x @ w1 + b1)
    out = hidden @ w2 + b2
    return xp.sum((out - y) ** 2) / x.shape[0]


def reference(*args) -> float:
    return float(loss(np, *args))


def soac_version(*args) -> tuple:
    return (lambda *a: loss(snp, *a)), args


def jax_version(*args) -> tuple:
    _, jnp = jax_numpy()
    return (lambda *a: loss(jnp, *a)), args


def torch_version(*args) -> tuple:
    torch = torch_module()
    return (lambda *a: loss(torch, *a)), to_torch(args)
