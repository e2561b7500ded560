"""Least-squares linear regression: the mean squared error, its gradient with
respect to the weights, and one jitted step of gradient descent."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit, value_and_grad

ARGS = ("w", "X", "y")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(n)
    return {"w": rng.standard_normal(5), "X": X, "y": y}


def loss(w, X, y):
    residual = X @ w - y
    return jnp.mean(residual ** 2)


@jit
def train_step(w, X, y):
    return w - 0.1 * grad(loss)(w, X, y)


primal = jit(loss)
gradient = jit(grad(loss))
loss_and_gradient = jit(value_and_grad(loss))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    value, g = loss_and_gradient(*args)
    return {"value": value, "grad": g, "step": train_step(*args)}
