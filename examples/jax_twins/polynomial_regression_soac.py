"""Ridge regression on polynomial features of a scalar input: the features are
the powers x[:, None] ** jnp.arange(degree + 1)."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit

ARGS = ("coefficients", "x", "y")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, n)
    y = np.sin(3.0 * x) + 0.1 * rng.standard_normal(n)
    return {"coefficients": rng.standard_normal(4), "x": x, "y": y}


def features(x, degree):
    return x[:, None] ** jnp.arange(degree + 1)


def loss(coefficients, x, y):
    predictions = features(x, coefficients.shape[0] - 1) @ coefficients
    return jnp.mean((predictions - y) ** 2) + 1e-3 * jnp.sum(coefficients ** 2)


primal = jit(loss)
gradient = jit(grad(loss))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args)}
