"""Per-example gradients the JAX way: vmap of the gradient of one example's
logistic loss over the rows of X and y (the weights shared), then clipped to
norm 1 and averaged, as in DP-SGD."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit, vmap

ARGS = ("w", "X", "y")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    y = np.sign(X @ rng.standard_normal(5) + 0.3 * rng.standard_normal(n))
    return {"w": 0.5 * rng.standard_normal(5), "X": X, "y": y}


def example_loss(w, x, y):
    return jnp.log1p(jnp.exp(-y * jnp.dot(x, w)))


def loss(w, X, y):
    return jnp.sum(vmap(example_loss, in_axes=(None, 0, 0))(w, X, y))


per_example_gradients = vmap(grad(example_loss), in_axes=(None, 0, 0))


def clipped_mean_gradient(w, X, y):
    g = per_example_gradients(w, X, y)
    norms = jnp.linalg.norm(g, axis=1)
    return jnp.mean(g / jnp.maximum(1.0, norms)[:, None], axis=0)


primal = jit(loss)
gradient = jit(per_example_gradients)


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "clipped": jit(clipped_mean_gradient)(*args)}
