"""A JAX training loop as JAX users write it: a dict of parameters, a loss
returning its predictions as auxiliary data (``has_aux``), a jitted SGD step
mapping over the parameter tree, per-example gradient norms by ``vmap`` of
``grad``, the Hessian of the loss in the hidden bias, and the gradient of an
RNN written with ``lax.scan``."""

import numpy as np
import jax.numpy as jnp
from jax import grad, hessian, jit, value_and_grad, vmap
from jax.lax import scan
from jax.tree_util import tree_map

ARGS = ("params", "X", "y")
STEPS, LEARNING_RATE = 5, 0.1


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    params = {"W1": 0.5 * rng.standard_normal((3, 8)), "b1": 0.1 * rng.standard_normal(8),
              "W2": 0.5 * rng.standard_normal((8, 2)), "b2": 0.1 * rng.standard_normal(2)}
    rnn = {"W": 0.4 * rng.standard_normal((4, 4)), "U": 0.4 * rng.standard_normal((4, 3)),
           "v": rng.standard_normal(4)}
    return {"params": params, "X": X, "y": np.sin(X[:, :2]), "rnn": rnn}


def predict(params, X):
    hidden = jnp.tanh(X @ params["W1"] + params["b1"])
    return hidden @ params["W2"] + params["b2"]


def loss(params, X, y):
    predictions = predict(params, X)
    return jnp.mean((predictions - y) ** 2), predictions


def value(params, X, y):
    return loss(params, X, y)[0]


@jit
def sgd_step(params, X, y):
    (value, predictions), grads = value_and_grad(loss, has_aux=True)(params, X, y)
    return tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads), value


def example_loss(params, x, y):
    return jnp.sum((predict(params, x[None, :])[0] - y) ** 2)


@jit
def per_example_gradient_norms(params, X, y):
    grads = vmap(grad(example_loss), in_axes=(None, 0, 0))(params, X, y)
    return jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in grads.values()))


def loss_in_hidden_bias(b1, params, X, y):
    return value({**params, "b1": b1}, X, y)


def rnn_loss(rnn, xs):
    def step(h, x):
        h = jnp.tanh(rnn["W"] @ h + rnn["U"] @ x)
        return h, jnp.dot(rnn["v"], h)

    _, outputs = scan(step, jnp.zeros(rnn["W"].shape[0]), xs)
    return jnp.sum(outputs ** 2)


primal = jit(value)
gradient = jit(grad(value))


def run(inputs):
    params, X, y = inputs["params"], inputs["X"], inputs["y"]
    losses = []
    for _ in range(STEPS):
        params, step_loss = sgd_step(params, X, y)
        losses.append(step_loss)
    return {"value": primal(inputs["params"], X, y), "grad": gradient(inputs["params"], X, y),
            "losses": jnp.stack(losses), "trained": params,
            "example_norms": per_example_gradient_norms(inputs["params"], X, y),
            "hessian_b1": jit(hessian(loss_in_hidden_bias))(inputs["params"]["b1"], inputs["params"], X, y),
            "rnn_grad": jit(grad(rnn_loss))(inputs["rnn"], X)}
