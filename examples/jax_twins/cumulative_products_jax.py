"""Survival analysis with cumulative products: the survival curve
cumprod(1 - hazard), the expected value of a stream of cash flows paid while
alive, and its gradient with respect to the hazard rates."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit

ARGS = ("hazard", "cashflows")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"hazard": rng.uniform(0.0, 2.0 / n, n), "cashflows": rng.uniform(0.5, 1.5, n)}


def survival(hazard):
    return jnp.cumprod(1.0 - hazard)


def expected_value(hazard, cashflows):
    return jnp.sum(cashflows * survival(hazard))


primal = jit(expected_value)
gradient = jit(grad(expected_value))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "survival": jit(survival)(args[0])}
