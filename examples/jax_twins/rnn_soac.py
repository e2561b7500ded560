"""An Elman RNN run over a sequence by fori_loop, carrying the hidden state
and the running loss; the gradient with respect to its four parameters
(backpropagation through time)."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit
from soac.lax import fori_loop

ARGS = ("W", "U", "b", "v", "xs", "targets")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"W": 0.4 * rng.standard_normal((8, 8)), "U": 0.4 * rng.standard_normal((8, 3)),
            "b": 0.1 * rng.standard_normal(8), "v": rng.standard_normal(8),
            "xs": rng.standard_normal((n, 3)), "targets": rng.standard_normal(n)}


def loss(W, U, b, v, xs, targets):
    def step(t, carry):
        h, total = carry
        h = jnp.tanh(W @ h + U @ xs[t] + b)
        return h, total + (v @ h - targets[t]) ** 2

    h0 = jnp.zeros(W.shape[0])
    _, total = fori_loop(0, xs.shape[0], step, (h0, 0.0))
    return total / xs.shape[0]


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1, 2, 3)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args)}
