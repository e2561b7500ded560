"""Plain numpy references for the JAX twins: each program's scalar loss (the
gradients are checked against central finite differences of it, in float64)
and its other results, written independently of both JAX and soac."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import erf as _erf

import numpy as np


@dataclass
class Reference:
    """``loss`` takes the program's ARGS; ``wrt`` names the arguments its
    ``grad`` result differentiates (a tuple of gradients when there are
    several); ``grad`` replaces the finite differences where the program's
    derivative is not the gradient of its loss; ``extras`` computes the
    program's other results from its inputs."""

    loss: Callable[..., float]
    wrt: tuple[str, ...]
    grad: Callable[[dict], object] | None = None
    extras: Callable[[dict], dict] = field(default=lambda inputs: {})


def finite_differences(f: Callable[..., float], args: list, position: int) -> np.ndarray:
    """Central differences of the scalar f with respect to args[position]."""
    x = np.array(args[position], dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        h = 1e-6 * max(1.0, abs(x[i]))
        plus, minus = x.copy(), x.copy()
        plus[i] += h
        minus[i] -= h
        g[i] = (f(*_with(args, position, plus)) - f(*_with(args, position, minus))) / (2 * h)
    return g


def _with(args: list, position: int, value: np.ndarray) -> list:
    return [value if i == position else a for i, a in enumerate(args)]


def expected(name: str, program, inputs: dict) -> dict:
    """The numpy results ``program.run(inputs)`` must match."""
    reference = REFERENCES[name]
    args = [inputs[a] for a in program.ARGS]
    out = {"value": reference.loss(*args)}
    if reference.grad is not None:
        out["grad"] = reference.grad(inputs)
    else:
        gradients = tuple(finite_differences(reference.loss, args, program.ARGS.index(w)) for w in reference.wrt)
        out["grad"] = gradients[0] if len(gradients) == 1 else gradients
    out.update(reference.extras(inputs))
    return out


def _softplus(z):
    return np.logaddexp(0.0, z)


# ---- regressions


def linear_regression_loss(w, X, y):
    return np.mean((X @ w - y) ** 2)


def _linear_step(inputs):
    args = [inputs["w"], inputs["X"], inputs["y"]]
    return {"step": inputs["w"] - 0.1 * finite_differences(linear_regression_loss, args, 0)}


def logistic_regression_loss(w, b, X, y):
    logits = X @ w + b
    return np.mean(_softplus(logits) - y * logits)


def _logistic_accuracy(inputs):
    predictions = (inputs["X"] @ inputs["w"] + inputs["b"] > 0.0).astype(np.float64)
    return {"accuracy": np.mean(predictions == inputs["y"])}


def polynomial_regression_loss(coefficients, x, y):
    features = np.stack([x ** k for k in range(len(coefficients))], axis=1)
    return np.mean((features @ coefficients - y) ** 2) + 1e-3 * np.sum(coefficients ** 2)


# ---- networks


def _mlp_logits(W1, b1, W2, b2, X):
    return np.tanh(X @ W1 + b1) @ W2 + b2


def mlp_loss(W1, b1, W2, b2, X, labels):
    logits = _mlp_logits(W1, b1, W2, b2, X)
    top = logits.max(axis=1, keepdims=True)
    log_probabilities = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    return -np.mean(log_probabilities[np.arange(len(labels)), labels])


def _mlp_accuracy(inputs):
    logits = _mlp_logits(*(inputs[k] for k in ("W1", "b1", "W2", "b2", "X")))
    return {"accuracy": np.mean(np.argmax(logits, axis=1) == inputs["labels"])}


def _attention(Wq, Wk, Wv, X):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    out = np.zeros_like(V)
    for b in range(X.shape[0]):
        for t in range(X.shape[1]):
            scores = K[b, : t + 1] @ Q[b, t] / np.sqrt(Q.shape[-1])
            weights = np.exp(scores - scores.max())
            out[b, t] = weights @ V[b, : t + 1] / weights.sum()
    return out


def attention_loss(Wq, Wk, Wv, X):
    return np.mean(_attention(Wq, Wk, Wv, X) ** 2)


def _conv2d(kernel, images):
    kh, kw = kernel.shape
    n, h, w = images.shape
    out = np.zeros((n, h - kh + 1, w - kw + 1))
    for b in range(n):
        for i in range(h - kh + 1):
            for j in range(w - kw + 1):
                out[b, i, j] = np.sum(kernel * images[b, i:i + kh, j:j + kw])
    return out


def conv2d_loss(kernel, images):
    return np.mean(np.maximum(_conv2d(kernel, images), 0.0) ** 2)


def _rnn_loss(W, U, b, v, xs, targets):
    h, total = np.zeros(W.shape[0]), 0.0
    for t in range(len(xs)):
        h = np.tanh(W @ h + U @ xs[t] + b)
        total += (v @ h - targets[t]) ** 2
    return total / len(xs)


# ---- finance, ODEs, clustering


def _call_price(S, K, T, r, sigma):
    cdf = np.vectorize(lambda x: 0.5 * (1.0 + _erf(x / np.sqrt(2.0))))
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * cdf(d1) - K * np.exp(-r * T) * cdf(d2)


def black_scholes_loss(S, K, T, r, sigma):
    return np.sum(_call_price(S, K, T, r, sigma))


def _lotka_volterra(alpha, beta, y0):
    def field(y):
        prey, predator = y[:, 0], y[:, 1]
        return np.stack([alpha * prey - beta * prey * predator, beta * prey * predator - 0.4 * predator], axis=1)

    y, dt = np.array(y0, dtype=np.float64), 0.02
    for _ in range(50):
        k1 = field(y)
        k2 = field(y + 0.5 * dt * k1)
        k3 = field(y + 0.5 * dt * k2)
        k4 = field(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def ode_solver_loss(alpha, beta, y0):
    return np.mean(_lotka_volterra(alpha, beta, y0)[:, 1])


def _distances(centroids, X):
    return ((X[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)


def kmeans_loss(centroids, X):
    return np.mean(_distances(centroids, X).min(axis=1))


def _kmeans(inputs):
    centroids, X = np.array(inputs["centroids"]), inputs["X"]
    for _ in range(5):
        assignment = np.argmin(_distances(centroids, X), axis=1)
        sums, counts = np.zeros_like(centroids), np.zeros(len(centroids))
        np.add.at(sums, assignment, X)
        np.add.at(counts, assignment, 1.0)
        centroids = sums / np.maximum(counts, 1.0)[:, None]
    return {"centroids": centroids}


# ---- indexing, scans, second order, reshaping


def embedding_bag_loss(E, w, tokens, bag, y):
    bags = np.zeros((len(y), E.shape[1]))
    np.add.at(bags, bag, E[tokens])
    return np.mean((bags @ w - y) ** 2)


def cumulative_products_loss(hazard, cashflows):
    survival, alive = np.empty_like(hazard), 1.0
    for i, h in enumerate(hazard):
        alive *= 1.0 - h
        survival[i] = alive
    return np.sum(cashflows * survival)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_gradient(x):
    g = np.zeros_like(x)
    inner = x[1:] - x[:-1] ** 2
    g[:-1] += -400.0 * x[:-1] * inner - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * inner
    return g


def _hvp(inputs):
    x, v, h = inputs["x"], inputs["v"], 1e-5
    return (rosenbrock_gradient(x + h * v) - rosenbrock_gradient(x - h * v)) / (2 * h)


def per_example_loss(w, X, y):
    return np.sum(_softplus(-y * (X @ w)))


def _per_example_gradients(inputs):
    w, X, y = inputs["w"], inputs["X"], inputs["y"]
    sigma = 1.0 / (1.0 + np.exp(y * (X @ w)))  # d/dm log1p(exp(-m)) = -sigmoid(-m)
    return (-y * sigma)[:, None] * X


def _clipped(inputs):
    g = _per_example_gradients(inputs)
    norms = np.linalg.norm(g, axis=1)
    return {"clipped": np.mean(g / np.maximum(1.0, norms)[:, None], axis=0)}


def _reshaping_features(images):
    b = images.shape[0]
    pooled = np.zeros((b, 4, 4))
    for i in range(4):
        for j in range(4):
            pooled[:, i, j] = images[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2].mean(axis=(1, 2))
    flat = pooled.reshape(b, 16)
    flipped = np.swapaxes(pooled, 1, 2).reshape(b, 16)
    return np.concatenate([flat, flat * flipped], axis=1)


def reshaping_loss(W, images):
    return np.sum(np.tanh(_reshaping_features(images) @ W.T)) / images.shape[0]


def tv_energy(u, f):
    return 0.5 * np.sum((u - f) ** 2) + 0.5 * np.sum(np.sqrt(np.diff(u) ** 2 + 1e-2))


def _tv_step(inputs):
    u, f = inputs["u"], inputs["f"]
    return {"step": u - 0.1 * finite_differences(tv_energy, [u, f], 0)}


# ---- a training loop on a dict of parameters


def _tree_finite_differences(f: Callable[..., float], params: dict, *rest) -> dict:
    """Central differences of the scalar f(params, *rest) in each entry of params."""
    return {key: finite_differences(lambda value: f({**params, key: value}, *rest), [params[key]], 0) for key in params}


def _mlp_predict(params, X):
    return np.tanh(X @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]


def training_loss(params, X, y):
    return np.mean((_mlp_predict(params, X) - y) ** 2)


def _hidden_bias_gradient(b1, params, X, y):
    """d training_loss / d b1, by hand (the Hessian below differences it)."""
    hidden = np.tanh(X @ params["W1"] + b1)
    residual = hidden @ params["W2"] + params["b2"] - y
    return np.sum((residual @ params["W2"].T) * (1 - hidden ** 2), axis=0) * 2 / residual.size


def _rnn_outputs_loss(rnn, xs):
    h, total = np.zeros(rnn["W"].shape[0]), 0.0
    for x in xs:
        h = np.tanh(rnn["W"] @ h + rnn["U"] @ x)
        total += (rnn["v"] @ h) ** 2
    return total


def _training_loop(inputs):
    params, X, y = inputs["params"], inputs["X"], inputs["y"]
    losses = []
    for _ in range(5):  # training_loop_*.py: STEPS, LEARNING_RATE
        losses.append(training_loss(params, X, y))
        grads = _tree_finite_differences(training_loss, params, X, y)
        params = {key: params[key] - 0.1 * grads[key] for key in params}
    norms = [np.sqrt(sum(np.sum(g ** 2) for g in _tree_finite_differences(
        lambda p, x, t: np.sum((_mlp_predict(p, x[None, :])[0] - t) ** 2), inputs["params"], x, t).values()))
        for x, t in zip(X, y)]
    b1, h = inputs["params"]["b1"], 1e-5
    hessian = np.stack([(_hidden_bias_gradient(b1 + h * e, inputs["params"], X, y)
                         - _hidden_bias_gradient(b1 - h * e, inputs["params"], X, y)) / (2 * h) for e in np.eye(len(b1))], axis=1)
    return {"losses": np.array(losses), "trained": params, "example_norms": np.array(norms), "hessian_b1": hessian,
            "rnn_grad": _tree_finite_differences(_rnn_outputs_loss, inputs["rnn"], X)}


REFERENCES: dict[str, Reference] = {
    "linear_regression": Reference(linear_regression_loss, ("w",), extras=_linear_step),
    "logistic_regression": Reference(logistic_regression_loss, ("w", "b"), extras=_logistic_accuracy),
    "polynomial_regression": Reference(polynomial_regression_loss, ("coefficients",)),
    "mlp": Reference(mlp_loss, ("W1", "b1", "W2", "b2"), extras=_mlp_accuracy),
    "attention": Reference(attention_loss, ("Wq", "Wk", "Wv"),
                           extras=lambda i: {"output": _attention(i["Wq"], i["Wk"], i["Wv"], i["X"])}),
    "conv2d": Reference(conv2d_loss, ("kernel", "images"),
                        extras=lambda i: {"feature_maps": _conv2d(i["kernel"], i["images"])}),
    "black_scholes": Reference(black_scholes_loss, ("S", "sigma"),
                               extras=lambda i: {"prices": _call_price(i["S"], i["K"], i["T"], i["r"], i["sigma"])}),
    "rnn": Reference(_rnn_loss, ("W", "U", "b", "v")),
    "rnn_scan": Reference(_rnn_loss, ("W", "U", "b", "v")),
    "ode_solver": Reference(ode_solver_loss, ("alpha", "beta", "y0"),
                            extras=lambda i: {"final_state": _lotka_volterra(i["alpha"], i["beta"], i["y0"])}),
    "kmeans": Reference(kmeans_loss, ("centroids",), extras=_kmeans),
    "embedding_bag": Reference(embedding_bag_loss, ("E", "w")),
    "cumulative_products": Reference(cumulative_products_loss, ("hazard",),
                                     extras=lambda i: {"survival": np.cumprod(1.0 - i["hazard"])}),
    "hessian_vector_product": Reference(rosenbrock, ("x",), grad=_hvp,
                                        extras=lambda i: {"rosenbrock_grad": rosenbrock_gradient(i["x"])}),
    "per_example_gradients": Reference(per_example_loss, ("w",), grad=_per_example_gradients, extras=_clipped),
    "per_example_gradients_vmap": Reference(per_example_loss, ("w",), grad=_per_example_gradients, extras=_clipped),
    "reshaping": Reference(reshaping_loss, ("W", "images"),
                           extras=lambda i: {"features": _reshaping_features(i["images"])}),
    "tv_denoising": Reference(tv_energy, ("u",), extras=_tv_step),
    "training_loop": Reference(training_loss, ("params",), grad=lambda i: _tree_finite_differences(training_loss, i["params"], i["X"], i["y"]),
                               extras=_training_loop),
}
