"""Per-example gradients of a logistic loss without vmap: the weights are
broadcast to one row per example, so the gradient of the summed loss with
respect to those rows holds each example's own gradient; then the gradients
are clipped to norm 1 and averaged, as in DP-SGD."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit

ARGS = ("w", "X", "y")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    y = np.sign(X @ rng.standard_normal(5) + 0.3 * rng.standard_normal(n))
    return {"w": 0.5 * rng.standard_normal(5), "X": X, "y": y}


def summed_loss(W, X, y):
    margins = y * jnp.sum(W * X, axis=1)
    return jnp.sum(jnp.log1p(jnp.exp(-margins)))


def loss(w, X, y):
    return jnp.sum(jnp.log1p(jnp.exp(-y * (X @ w))))


def per_example_gradients(w, X, y):
    W = jnp.broadcast_to(w, X.shape)
    return grad(summed_loss)(W, X, y)


def clipped_mean_gradient(w, X, y):
    g = per_example_gradients(w, X, y)
    norms = jnp.sqrt(jnp.sum(g ** 2, axis=1))
    return jnp.mean(g / jnp.maximum(1.0, norms)[:, None], axis=0)


primal = jit(loss)
gradient = jit(per_example_gradients)


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "clipped": jit(clipped_mean_gradient)(*args)}
