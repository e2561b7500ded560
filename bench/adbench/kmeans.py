"""Dense k-means (the Futhark SC22 AD benchmark): the cost
Σ_i min_k |x_i - c_k|², differentiated with respect to the centroids c.

Its gradient is 2 Σ_{i nearest to k} (c_k - x_i): each point's cotangent goes
to its nearest centroid through the adjoint of the ``min`` reduction.
"""

from __future__ import annotations

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac
import soac.numpy as snp

NAME = "k-means"
SIZES = {"small": dict(n=10_000, K=16, d=8), "large": dict(n=100_000, K=64, d=16)}
TINY = dict(n=6, K=2, d=2)
WRT = (0,)  # centroids


def inputs(n: int, K: int, d: int, seed: int = 0) -> tuple:
    """Seeded uniform points; the first K points as centroids (the usual start)."""
    points = np.random.default_rng(seed).uniform(0.0, 1.0, (n, d))
    return points[:K].copy(), points


def reference(centroids, points) -> float:
    """The oracle: all squared distances, the smallest per point."""
    return float(np.sum(np.min(((points[:, None, :] - centroids[None]) ** 2).sum(2), axis=1)))


def reference_gradient(centroids, points) -> np.ndarray:
    """The closed form: 2 Σ (c_k - x_i) over the points nearest to c_k."""
    nearest = np.argmin(((points[:, None, :] - centroids[None]) ** 2).sum(2), axis=1)
    gradient = np.zeros_like(centroids)
    np.add.at(gradient, nearest, 2 * (centroids[nearest] - points))
    return gradient


def objective(centroids, points):
    """Ours: a map over points of a min-reduce over the centroids."""

    def nearest(x):
        distances = soac.map(lambda c: snp.sum((x - c) * (x - c)), centroids)
        return soac.reduce(soac.math.minimum, distances, float("inf"))

    return snp.sum(soac.map(nearest, points))


def soac_version(*inputs) -> tuple:
    return objective, inputs


def jax_version(centroids, points) -> tuple:
    jax, jnp = jax_numpy()

    def f(centroids, points):
        return jnp.sum(jnp.min(jnp.sum((points[:, None, :] - centroids[None]) ** 2, axis=2), axis=1))

    return f, (centroids, points)


def torch_version(centroids, points) -> tuple:
    torch = torch_module()

    def f(centroids, points):
        return torch.sum(torch.min(torch.sum((points[:, None, :] - centroids[None]) ** 2, dim=2), dim=1).values)

    return f, to_torch((centroids, points))
