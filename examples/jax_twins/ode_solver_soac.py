"""Classical Runge-Kutta (RK4) integration of n independent Lotka-Volterra
predator-prey systems for 50 steps (fori_loop), and the sensitivity of the
final mean predator population to the parameters and the initial state."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit
from soac.lax import fori_loop

ARGS = ("alpha", "beta", "y0")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"alpha": rng.uniform(0.8, 1.2, n), "beta": rng.uniform(0.3, 0.6, n), "y0": rng.uniform(0.5, 1.5, (n, 2))}


def vector_field(y, alpha, beta):
    prey, predator = y[..., 0], y[..., 1]
    return jnp.stack([alpha * prey - beta * prey * predator, beta * prey * predator - 0.4 * predator], axis=-1)


def rk4_step(y, dt, alpha, beta):
    k1 = vector_field(y, alpha, beta)
    k2 = vector_field(y + 0.5 * dt * k1, alpha, beta)
    k3 = vector_field(y + 0.5 * dt * k2, alpha, beta)
    k4 = vector_field(y + dt * k3, alpha, beta)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def solve(alpha, beta, y0):
    return fori_loop(0, 50, lambda i, y: rk4_step(y, 0.02, alpha, beta), y0)


def loss(alpha, beta, y0):
    return jnp.mean(solve(alpha, beta, y0)[:, 1])


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1, 2)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "final_state": jit(solve)(*args)}
