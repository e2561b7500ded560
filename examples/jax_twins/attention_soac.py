"""Causal single-head self-attention over a batch of sequences: projections,
scaled scores by einsum, a lower-triangular mask, softmax over the keys, and
the gradient of a mean-square loss with respect to the three projections."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit
from soac.numpy import softmax

ARGS = ("Wq", "Wk", "Wv", "X")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"Wq": 0.3 * rng.standard_normal((8, 8)), "Wk": 0.3 * rng.standard_normal((8, 8)),
            "Wv": 0.3 * rng.standard_normal((8, 8)), "X": rng.standard_normal((n, 6, 8))}


def attention(Wq, Wk, Wv, X):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = jnp.einsum("btd,bsd->bts", Q, K) / jnp.sqrt(Q.shape[-1])
    length = X.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    scores = jnp.where(causal, scores, -jnp.inf)
    return softmax(scores, axis=-1) @ V


def loss(Wq, Wk, Wv, X):
    return jnp.mean(attention(Wq, Wk, Wv, X) ** 2)


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1, 2)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "output": jit(attention)(*args)}
