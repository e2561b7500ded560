"""The tracing frontend: softmax regression written as plain Python, JAX-style.

1. `loss` is traced by soac.jit into soac IR (maps, reduces from soac.numpy)
   and compiled for the CPU; its value is checked against numpy;
2. soac.value_and_grad differentiates it (a soac.vjp expanded by soac-autodiff,
   reverse mode by re-execution) and the gradient is checked against numpy's
   closed form;
3. a few steps of gradient descent run inside one jitted function
   (soac.fori_loop around soac.grad) and the loss goes down;
4. a tracing mistake shows the soac.Error pointing at this file.

Run it with `.venv/bin/python examples/frontend_regression.py`.
"""

from __future__ import annotations

import numpy as np

import soac
import soac.numpy as snp


def loss(W, X, labels):
    """Mean cross-entropy of softmax(X @ W.T) against integer labels."""
    logits = soac.map(lambda x: W @ x, X)  # one row of class scores per sample
    picked = soac.map(lambda row, label: row[label], logits, labels)
    return snp.mean(soac.map(snp.logsumexp, logits) - picked)


@soac.jit
def train(W, X, labels, steps):
    step = lambda i, W: W - 0.5 * soac.grad(loss)(W, X, labels)  # noqa: E731
    return soac.fori_loop(0, steps, step, W)


def numpy_loss_and_grad(W, X, labels):
    logits = X @ W.T
    shifted = logits - logits.max(axis=1, keepdims=True)
    probabilities = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    value = np.mean(np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(len(labels)), labels])
    probabilities[np.arange(len(labels)), labels] -= 1.0
    return value, probabilities.T @ X / len(labels)


def main() -> None:
    rng = np.random.default_rng(0)
    classes, features, samples = 3, 4, 200
    X = rng.standard_normal((samples, features))
    labels = np.argmax(X @ rng.standard_normal((classes, features)).T, axis=1)
    W = np.zeros((classes, features))

    value = soac.jit(loss)(W, X, labels)
    value_ref, _ = numpy_loss_and_grad(W, X, labels)
    print(f"loss {value:.6f} (numpy {value_ref:.6f})")

    W1 = rng.standard_normal((classes, features))
    value, gradient = soac.value_and_grad(loss)(W1, X, labels)
    value_ref, gradient_ref = numpy_loss_and_grad(W1, X, labels)
    print(f"gradient: max difference to numpy {np.max(np.abs(gradient - gradient_ref)):.2e}, loss difference {abs(value - value_ref):.2e}")

    trained = train(W, X, labels, 50)
    print(f"after 50 steps of gradient descent: loss {numpy_loss_and_grad(trained, X, labels)[0]:.4f}")
    print("the traced training loop:", len(train.mlir().splitlines()), "lines of soac IR")

    try:
        soac.jit(lambda X: np.exp(X))(X)  # numpy's exp cannot run on a traced array
    except soac.Error as error:
        print("a tracing mistake:", error)


if __name__ == "__main__":
    main()
