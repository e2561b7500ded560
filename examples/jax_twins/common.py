"""What the JAX twins' test and benchmark share: the list of programs, loading
either twin of one, and comparing results.

Each program is two files, ``<name>_jax.py`` and ``<name>_soac.py``, whose
texts are identical except for their import lines. Both define ``ARGS`` (the
names, in the inputs, of the arguments of ``primal`` and, unless
``GRADIENT_ARGS`` is given, of ``gradient``), ``inputs(n, seed)`` (numpy
float64 inputs sized by n), the jitted ``primal`` (a scalar) and
``gradient``, and ``run(inputs)``, a dict of results. Run the JAX twin with
float64 enabled (``jax.config.update("jax_enable_x64", True)``), as soac
computes in float64.
"""

from __future__ import annotations

import ast
import pathlib
import types

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

PROGRAMS = [
    "linear_regression",
    "logistic_regression",
    "polynomial_regression",
    "mlp",
    "attention",
    "conv2d",
    "black_scholes",
    "rnn",
    "rnn_scan",
    "ode_solver",
    "kmeans",
    "embedding_bag",
    "cumulative_products",
    "hessian_vector_product",
    "per_example_gradients",
    "per_example_gradients_vmap",
    "reshaping",
    "tv_denoising",
    "training_loop",
]


def path(name: str, flavor: str) -> pathlib.Path:
    return HERE / f"{name}_{flavor}.py"


def load(name: str, flavor: str) -> types.ModuleType:
    """Imports ``<name>_<flavor>.py`` (flavor "jax" or "soac") as a fresh module."""
    return _module(f"jax_twins_{name}_{flavor}", path(name, flavor), path(name, flavor).read_text())


def _module(module_name: str, file: pathlib.Path, text: str) -> types.ModuleType:
    module = types.ModuleType(module_name)
    module.__file__ = str(file)
    exec(compile(text, str(file), "exec"), module.__dict__)
    return module


def code_without_imports(file: pathlib.Path) -> list[str]:
    """The lines of ``file`` less those of its import statements (found by
    parsing, so imports spanning lines go too)."""
    text = file.read_text()
    dropped: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            dropped.update(range(node.lineno, node.end_lineno + 1))
    return [line for number, line in enumerate(text.splitlines(), 1) if number not in dropped]


def to_numpy(value):
    if isinstance(value, (tuple, list)):
        return tuple(to_numpy(v) for v in value)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    return np.asarray(value)


def assert_close(actual, expected, what: str, rtol: float = 1e-6) -> None:
    """Same structure, and every array within rtol of the largest magnitude
    of its expected value."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), (
            f"{what}: expected a dict of {sorted(expected)}, got {_describe(actual)}")
        for key in expected:
            assert_close(actual[key], expected[key], f"{what}[{key!r}]", rtol)
        return
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (
            f"{what}: expected a tuple of {len(expected)}, got {_describe(actual)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, f"{what}[{i}]", rtol)
        return
    assert not isinstance(actual, (tuple, list)), f"{what}: expected one array, got {_describe(actual)}"
    actual, expected = np.asarray(actual), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def _describe(value) -> str:
    if isinstance(value, dict):
        return f"a dict of {sorted(value)}"
    if isinstance(value, (tuple, list)):
        return f"a tuple of {len(value)} ({', '.join(_describe(v) for v in value)})"
    return f"an array of shape {np.shape(value)}"
