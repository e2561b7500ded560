"""Total-variation denoising of a 1-D signal: a smoothed TV energy built from
neighbour differences u[1:] - u[:-1], and gradient descent on it, the
gradient taken of a closure over the noisy signal inside a jitted step."""

import numpy as np
import jax.numpy as jnp
from jax import grad, jit

ARGS = ("u", "f")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    clean = np.where(np.arange(n) % 20 < 10, 1.0, -1.0)
    f = clean + 0.3 * rng.standard_normal(n)
    return {"u": f.copy(), "f": f}


def energy(u, f):
    jumps = u[1:] - u[:-1]
    return 0.5 * jnp.sum((u - f) ** 2) + 0.5 * jnp.sum(jnp.sqrt(jumps ** 2 + 1e-2))


@jit
def energy_gradient(u, f):
    return grad(lambda u: energy(u, f))(u)


@jit
def descent_step(u, f):
    return u - 0.1 * energy_gradient(u, f)


primal = jit(energy)
gradient = energy_gradient


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "step": descent_step(*args)}
