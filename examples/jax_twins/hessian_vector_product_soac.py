"""The Hessian-vector product of the n-dimensional Rosenbrock function,
forward over reverse: jvp(grad(f), (x,), (v,))."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit, jvp

ARGS = ("x",)
GRADIENT_ARGS = ("x", "v")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1.0, 1.5, n), "v": rng.standard_normal(n)}


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def hvp(x, v):
    return jvp(grad(rosenbrock), (x,), (v,))[1]


primal = jit(rosenbrock)
gradient = jit(hvp)


def run(inputs):
    return {"value": primal(inputs["x"]), "grad": gradient(inputs["x"], inputs["v"]),
            "rosenbrock_grad": jit(grad(rosenbrock))(inputs["x"])}
