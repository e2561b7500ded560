"""A two-layer tanh MLP classifier: softmax cross-entropy of integer labels
(log-probabilities picked by an integer-array gather), its gradient with
respect to the four parameter arrays, and the accuracy."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit
from soac.numpy import logsumexp

ARGS = ("W1", "b1", "W2", "b2", "X", "labels")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    labels = np.argmax(X @ rng.standard_normal((6, 3)), axis=1)
    return {"W1": 0.5 * rng.standard_normal((6, 16)), "b1": 0.1 * rng.standard_normal(16),
            "W2": 0.5 * rng.standard_normal((16, 3)), "b2": 0.1 * rng.standard_normal(3), "X": X, "labels": labels}


def predict(W1, b1, W2, b2, X):
    hidden = jnp.tanh(X @ W1 + b1)
    return hidden @ W2 + b2


def loss(W1, b1, W2, b2, X, labels):
    logits = predict(W1, b1, W2, b2, X)
    log_probabilities = logits - logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(log_probabilities[jnp.arange(labels.shape[0]), labels])


def accuracy(W1, b1, W2, b2, X, labels):
    return jnp.mean(jnp.argmax(predict(W1, b1, W2, b2, X), axis=1) == labels)


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1, 2, 3)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "accuracy": jit(accuracy)(*args)}
