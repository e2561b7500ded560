"""k-means: five Lloyd iterations (argmin assignments, centroid sums and counts
by .at[...].add, in a fori_loop), and the gradient of the k-means objective
(the mean squared distance to the nearest centroid) with respect to the
centroids."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit
from soac.lax import fori_loop

ARGS = ("centroids", "X")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    centers = 3.0 * rng.standard_normal((4, 2))
    X = centers[rng.integers(0, 4, n)] + rng.standard_normal((n, 2))
    return {"centroids": X[:4] + 0.1 * rng.standard_normal((4, 2)), "X": X}


def squared_distances(centroids, X):
    return jnp.sum((X[:, None, :] - centroids[None, :, :]) ** 2, axis=-1)


def lloyd_step(centroids, X):
    assignment = jnp.argmin(squared_distances(centroids, X), axis=1)
    sums = jnp.zeros_like(centroids).at[assignment].add(X)
    counts = jnp.zeros(centroids.shape[0]).at[assignment].add(1.0)
    return sums / jnp.maximum(counts, 1.0)[:, None]


def kmeans(centroids, X):
    return fori_loop(0, 5, lambda i, c: lloyd_step(c, X), centroids)


def objective(centroids, X):
    return jnp.mean(jnp.min(squared_distances(centroids, X), axis=1))


primal = jit(objective)
gradient = jit(grad(objective))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "centroids": jit(kmeans)(*args)}
