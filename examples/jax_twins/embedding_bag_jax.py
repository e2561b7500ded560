"""An embedding bag: the rows E[tokens] summed into their bags by
.at[bag].add (variable-length bags), then a linear read-out and a
mean-square loss; the gradient with respect to the table and the read-out."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit

ARGS = ("E", "w", "tokens", "bag", "y")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    bags = max(n // 4, 1)
    return {"E": 0.5 * rng.standard_normal((50, 8)), "w": rng.standard_normal(8), "tokens": rng.integers(0, 50, n),
            "bag": np.sort(rng.integers(0, bags, n)), "y": rng.standard_normal(bags)}


def embed(E, tokens, bag, num_bags):
    return jnp.zeros((num_bags, E.shape[1])).at[bag].add(E[tokens])


def loss(E, w, tokens, bag, y):
    bags = embed(E, tokens, bag, y.shape[0])
    return jnp.mean((bags @ w - y) ** 2)


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args)}
