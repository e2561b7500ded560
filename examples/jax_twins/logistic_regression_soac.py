"""Binary logistic regression with a bias: the mean log-loss written with the
stable logaddexp, its gradient with respect to (w, b), and the accuracy."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit

ARGS = ("w", "b", "X", "y")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = (X @ rng.standard_normal(4) + 0.5 * rng.standard_normal(n) > 0.0).astype(np.float64)
    return {"w": 0.5 * rng.standard_normal(4), "b": np.float64(0.1), "X": X, "y": y}


def loss(w, b, X, y):
    logits = X @ w + b
    return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits)


def accuracy(w, b, X, y):
    predictions = jnp.where(X @ w + b > 0.0, 1.0, 0.0)
    return jnp.mean(predictions == y)


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "accuracy": jit(accuracy)(*args)}
