"""Black-Scholes prices of a book of European calls, and two greeks of the
book's value by reverse mode: delta (d/dS) and vega (d/dsigma)."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit
from jax.scipy.special import erf

ARGS = ("S", "K", "T", "r", "sigma")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"S": rng.uniform(80.0, 120.0, n), "K": rng.uniform(90.0, 110.0, n), "T": rng.uniform(0.25, 2.0, n),
            "r": rng.uniform(0.0, 0.05, n), "sigma": rng.uniform(0.1, 0.4, n)}


def norm_cdf(x):
    return 0.5 * (1.0 + erf(x / np.sqrt(2.0)))


def call_price(S, K, T, r, sigma):
    d1 = (jnp.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * jnp.sqrt(T))
    d2 = d1 - sigma * jnp.sqrt(T)
    return S * norm_cdf(d1) - K * jnp.exp(-r * T) * norm_cdf(d2)


def book_value(S, K, T, r, sigma):
    return jnp.sum(call_price(S, K, T, r, sigma))


primal = jit(book_value)
gradient = jit(grad(book_value, argnums=(0, 4)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "prices": jit(call_price)(*args)}
