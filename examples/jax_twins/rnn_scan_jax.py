"""The Elman RNN of rnn_jax.py written with lax.scan, as JAX users usually
write it: the step maps (hidden state, (input, target)) to the next state and
that step's squared error, which scan stacks."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit
from jax.lax import scan

ARGS = ("W", "U", "b", "v", "xs", "targets")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"W": 0.4 * rng.standard_normal((8, 8)), "U": 0.4 * rng.standard_normal((8, 3)),
            "b": 0.1 * rng.standard_normal(8), "v": rng.standard_normal(8),
            "xs": rng.standard_normal((n, 3)), "targets": rng.standard_normal(n)}


def loss(W, U, b, v, xs, targets):
    def step(h, example):
        x, target = example
        h = jnp.tanh(W @ h + U @ x + b)
        return h, (v @ h - target) ** 2

    _, errors = scan(step, jnp.zeros(W.shape[0]), (xs, targets))
    return jnp.mean(errors)


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1, 2, 3)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args)}
