"""Checking derivatives: soac.vjp (compiled, and its IR interpreted) against
central finite differences."""

from __future__ import annotations

import numpy as np

import soac

rng = np.random.default_rng(11)


def finite_difference_vjp(primal, args, wrt, cotangents, step=1e-6):
    """<cotangents, ∂f/∂args[w]> for each w by central differences."""
    gradients = []
    for w in wrt:
        base = np.array(args[w])  # the argument's own dtype
        gradient = np.zeros(base.shape)
        for index in np.ndindex(*base.shape):
            shifted = []
            for sign in (1, -1):
                moved = list(args)
                value = base.copy()
                value[index] += sign * step
                moved[w] = value if base.shape else value[()]
                outputs = primal(*moved)
                outputs = outputs if isinstance(outputs, tuple) else (outputs,)
                shifted.append(sum(np.sum(np.asarray(c) * np.asarray(o)) for c, o in zip(cotangents, outputs)))
            gradient[index] = (shifted[0] - shifted[1]) / (2 * step)
        gradients.append(gradient)
    return gradients


def check_vjp(source: str, function: str, args, wrt=None, cotangents=None, rtol=1e-6, atol=1e-8, checkpoint_levels=1, mixed_mode=False):
    """soac.vjp (compiled, and its IR interpreted) against finite differences."""
    primal = soac.compile(source, function)
    outputs = primal(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if cotangents is None:
        cotangents = [
            rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) if np.ndim(o) else np.asarray(o).dtype.type(rng.standard_normal())
            for o in outputs
        ]
    wrt = list(range(len(args))) if wrt is None else wrt
    derivative = soac.mlir.vjp(source, function, wrt=wrt, checkpoint_levels=checkpoint_levels, mixed_mode=mixed_mode)
    single = any(np.asarray(args[w]).dtype == np.float32 for w in wrt)
    expected = finite_difference_vjp(primal, args, wrt, cotangents, step=1e-2 if single else 1e-6)
    _compare(derivative, [*args, *cotangents], outputs, expected, single, rtol, atol)
    return derivative


def _compare(derivative, arguments, outputs, expected, single: bool, rtol: float, atol: float) -> None:
    """The derivative's results, compiled and through the interpreter on its
    IR: the primal outputs, then the derivatives against ``expected``."""
    compiled = derivative(*arguments)
    interpreted = soac.interpret(derivative.module, derivative.function, *arguments)
    n = len(outputs)
    for got in (compiled, interpreted):
        got = got if isinstance(got, tuple) else (got,)
        for value, reference in zip(got[:n], outputs):
            # float32 sums may associate differently in the two compiled programs
            np.testing.assert_allclose(value, reference, rtol=1e-5 if single else 1e-12)
        for value, reference in zip(got[n:], expected):
            np.testing.assert_allclose(value, reference, rtol=rtol, atol=atol)


def finite_difference_jvp(primal, args, wrt, tangents, step=1e-6):
    """The derivative of every output along ``tangents`` by central differences."""
    shifted = []
    for sign in (1, -1):
        moved = list(args)
        for w, tangent in zip(wrt, tangents):
            base = np.asarray(args[w])
            value = (base + sign * step * np.asarray(tangent)).astype(base.dtype)
            moved[w] = value if base.shape else value[()]
        outputs = primal(*moved)
        shifted.append(outputs if isinstance(outputs, tuple) else (outputs,))
    return [(np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64)) / (2 * step) for p, m in zip(*shifted)]


def random_like(value):
    """A standard normal sample of ``value``'s shape and dtype."""
    value = np.asarray(value)
    sample = rng.standard_normal(value.shape).astype(value.dtype)
    return sample if sample.shape else sample[()]


def check_jvp(source: str, function: str, args, wrt=None, tangents=None, rtol=1e-6, atol=1e-8):
    """soac.jvp (compiled, and its IR interpreted) against finite differences."""
    primal = soac.compile(source, function)
    outputs = primal(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    wrt = list(range(len(args))) if wrt is None else wrt
    if tangents is None:
        tangents = [random_like(args[w]) for w in wrt]
    derivative = soac.mlir.jvp(source, function, wrt=wrt)
    single = any(np.asarray(args[w]).dtype == np.float32 for w in wrt)
    expected = finite_difference_jvp(primal, args, wrt, tangents, step=1e-2 if single else 1e-6)
    _compare(derivative, [*args, *tangents], outputs, expected, single, rtol, atol)
    return derivative


def check_dot_product(source: str, function: str, args, wrt=None, rtol=1e-6, atol=1e-8):
    """The dot-product test ⟨J v, u⟩ = ⟨v, Jᵀ u⟩ for random directions v and
    cotangents u: J v by central differences, Jᵀ u by the compiled soac.vjp."""
    primal = soac.compile(source, function)
    outputs = primal(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    wrt = list(range(len(args))) if wrt is None else wrt
    directions = [random_like(args[w]) for w in wrt]
    cotangents = [
        random_like(o) if np.issubdtype(np.asarray(o).dtype, np.floating) else np.zeros_like(o)
        for o in outputs
    ]
    forward = finite_difference_jvp(primal, args, wrt, directions)
    lhs = sum(np.sum(jv * u) for jv, u in zip(forward, cotangents))
    gradients = soac.mlir.vjp(source, function, wrt=wrt)(*args, *cotangents)[len(outputs):]
    rhs = sum(np.sum(np.asarray(v) * np.asarray(g)) for v, g in zip(directions, gradients))
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol)
