"""ADBench D-LSTM: the loss of a stack of LSTM cells predicting the next
character of a sequence, differentiated with respect to the cell weights and
the extra (input/output) weights.

Inputs (ADBench's): ``main_params`` (2l, 4b): for layer i, row 2i holds the
weights and row 2i+1 the biases of the four gates; ``extra_params`` (3, b):
the input scale, output scale and output bias; ``state`` (2l, b): each layer's
hidden and cell state; ``sequence`` (c, b): one-hot characters. As in ADBench
the gates are elementwise (``concat(x, h, x, h) * weight + bias``, no matrix
product) and the log-softmax adds 2 under the logarithm:

    loss = -Σ_t Σ sequence[t+1] · (y_t - log(2 + Σ exp(y_t))) / ((c - 1) b)
"""

from __future__ import annotations

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac
import soac.numpy as snp

NAME = "D-LSTM"
# ADBench's lstm_l2_c1024 and lstm_l4_c4096 (b = 14 characters).
SIZES = {"small": dict(layers=2, c=1024, b=14), "large": dict(layers=4, c=4096, b=14)}
TINY = dict(layers=2, c=4, b=3)
WRT = (0, 1)  # main_params, extra_params


def inputs(layers: int, c: int, b: int, seed: int = 0) -> tuple:
    """Random parameters and state, and a random one-hot sequence (seeded)."""
    rng = np.random.default_rng(seed)
    main_params = rng.uniform(-1.0, 1.0, (2 * layers, 4 * b))
    extra_params = rng.uniform(-1.0, 1.0, (3, b))
    state = rng.uniform(-1.0, 1.0, (2 * layers, b))
    sequence = np.eye(b)[rng.integers(0, b, c)]
    return main_params, extra_params, state, sequence


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference(main_params, extra_params, state, sequence) -> float:
    """The oracle: ADBench's loops in numpy."""
    layers, b = len(state) // 2, sequence.shape[1]
    state, total = state.copy(), 0.0
    for t in range(len(sequence) - 1):
        x = sequence[t] * extra_params[0]
        for i in range(layers):
            gates = np.concatenate([x, state[2 * i], x, state[2 * i]]) * main_params[2 * i] + main_params[2 * i + 1]
            forget, ingate, outgate = sigmoid(gates[:b]), sigmoid(gates[b:2 * b]), sigmoid(gates[2 * b:3 * b])
            state[2 * i + 1] = state[2 * i + 1] * forget + ingate * np.tanh(gates[3 * b:])
            state[2 * i] = outgate * np.tanh(state[2 * i + 1])
            x = state[2 * i]
        ypred = x * extra_params[1] + extra_params[2]
        total += np.sum(sequence[t + 1] * (ypred - np.log(np.sum(np.exp(ypred)) + 2)))
    return -total / ((len(sequence) - 1) * b)


def soac_version(main_params, extra_params, state, sequence) -> tuple:
    """Ours: the layers are unrolled at trace time (their number is part of the
    model, as for a jax.jit of ADBench's loops); time is an ``scf.for`` whose
    carry is each layer's hidden and cell state and the running total."""
    layers = len(state) // 2

    def objective(main_params, extra_params, state, sequence):
        b = snp.size(sequence, 1)
        lanes = soac.iota(b)

        def cell(weight, bias, hidden, memory, x):
            # Gate g of lane j reads weight[j + g b]: the slices of the packed rows, as gathers.
            def lane(j):
                forget = _sigmoid(x[j] * weight[j] + bias[j])
                ingate = _sigmoid(hidden[j] * weight[j + b] + bias[j + b])
                outgate = _sigmoid(x[j] * weight[j + 2 * b] + bias[j + 2 * b])
                change = soac.math.tanh(hidden[j] * weight[j + 3 * b] + bias[j + 3 * b])
                updated = memory[j] * forget + ingate * change
                return outgate * soac.math.tanh(updated), updated

            return soac.map(lane, lanes)

        def step(t, carry):
            hidden, memory, total = list(carry[0]), list(carry[1]), carry[2]
            x = sequence[t] * extra_params[0]
            for i in range(layers):
                hidden[i], memory[i] = cell(main_params[2 * i], main_params[2 * i + 1], hidden[i], memory[i], x)
                x = hidden[i]
            ypred = x * extra_params[1] + extra_params[2]
            normalised = ypred - soac.math.log(snp.sum(soac.math.exp(ypred)) + 2.0)
            return tuple(hidden), tuple(memory), total + snp.sum(sequence[t + 1] * normalised)

        steps = snp.size(sequence, 0) - 1
        initial = (tuple(state[2 * i] for i in range(layers)), tuple(state[2 * i + 1] for i in range(layers)), 0.0)
        total = soac.fori_loop(0, steps, step, initial)[2]
        return -total / (steps * b)

    return objective, (main_params, extra_params, state, sequence)


def _sigmoid(x):
    return 1.0 / (1.0 + soac.math.exp(-x))


def jax_version(main_params, extra_params, state, sequence) -> tuple:
    """ADBench's JAX formulation: a lax.scan over time, the layers unrolled."""
    jax, jnp = jax_numpy()
    layers, (c, b) = len(state) // 2, sequence.shape

    def f(main_params, extra_params, state, sequence):
        def step(state, pair):
            x = pair[0] * extra_params[0]
            rows = []
            for i in range(layers):
                gates = jnp.concatenate([x, state[2 * i], x, state[2 * i]]) * main_params[2 * i] + main_params[2 * i + 1]
                memory = state[2 * i + 1] * jax.nn.sigmoid(gates[:b]) + jax.nn.sigmoid(gates[b:2 * b]) * jnp.tanh(gates[3 * b:])
                x = jax.nn.sigmoid(gates[2 * b:3 * b]) * jnp.tanh(memory)
                rows += [x, memory]
            ypred = x * extra_params[1] + extra_params[2]
            return jnp.stack(rows), jnp.sum(pair[1] * (ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2)))

        _, totals = jax.lax.scan(step, state, jnp.stack([sequence[:-1], sequence[1:]], axis=1))
        return -jnp.sum(totals) / ((c - 1) * b)

    return f, (main_params, extra_params, state, sequence)


def torch_version(main_params, extra_params, state, sequence) -> tuple:
    """ADBench's PyTorch formulation: Python loops over time and layers."""
    torch = torch_module()
    layers, (c, b) = len(state) // 2, sequence.shape

    def f(main_params, extra_params, state, sequence):
        rows, total = list(state), 0.0
        for t in range(c - 1):
            x = sequence[t] * extra_params[0]
            for i in range(layers):
                gates = torch.cat([x, rows[2 * i], x, rows[2 * i]]) * main_params[2 * i] + main_params[2 * i + 1]
                rows[2 * i + 1] = rows[2 * i + 1] * torch.sigmoid(gates[:b]) + torch.sigmoid(gates[b:2 * b]) * torch.tanh(gates[3 * b:])
                rows[2 * i] = x = torch.sigmoid(gates[2 * b:3 * b]) * torch.tanh(rows[2 * i + 1])
            ypred = x * extra_params[1] + extra_params[2]
            total = total + torch.sum(sequence[t + 1] * (ypred - torch.log(torch.sum(torch.exp(ypred)) + 2)))
        return -total / ((c - 1) * b)

    return f, to_torch((main_params, extra_params, state, sequence))
