"""The JAX twins (examples/jax_twins/): realistic JAX programs whose soac
versions differ only in their import lines.

For each program: the two texts differ only in imports; the soac twin agrees
with a plain numpy reference (values, and gradients against central finite
differences in float64); the JAX twin, when JAX is installed, agrees with the
same reference and with soac. A soac twin that does not run yet is marked
xfail(strict) with the error it stops at, so the suite reports it and fails
once it passes (remove its entry from SOAC_FAILURES then).
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

TWINS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "jax_twins"


def _load(name: str):
    """examples/jax_twins/<name>.py, as jax_twins_<name> (bench/ has a common.py too)."""
    spec = importlib.util.spec_from_file_location(f"jax_twins_{name}", TWINS / f"{name}.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


common = _load("common")
reference = _load("reference")

SIZE, SEED = 7, 0

# The first error each soac twin stops at (run the program to see the whole message).
SOAC_FAILURES: dict[str, str] = {}


def _soac_param(name: str):
    if name in SOAC_FAILURES:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=SOAC_FAILURES[name]))
    return name


def _check(results: dict, expected: dict, who: str, rtol: float = 1e-6) -> None:
    results = common.to_numpy(results)
    assert set(results) == set(expected), f"{who} returns {sorted(results)}, expected {sorted(expected)}"
    for key, value in expected.items():
        common.assert_close(results[key], value, f"{who}: {key}", rtol)


def _jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install -r bench/requirements.txt)")
    jax.config.update("jax_enable_x64", True)  # soac computes in float64
    return jax


@pytest.mark.parametrize("name", common.PROGRAMS)
def test_twins_differ_only_in_imports(name):
    jax_code = common.code_without_imports(common.path(name, "jax"))
    soac_code = common.code_without_imports(common.path(name, "soac"))
    assert jax_code == soac_code
    imported = [line for line in common.path(name, "soac").read_text().splitlines() if line.startswith(("import", "from"))]
    assert not any("jax" in line for line in imported), imported


def test_every_program_has_a_reference():
    assert sorted(common.PROGRAMS) == sorted(reference.REFERENCES)
    assert set(SOAC_FAILURES) <= set(common.PROGRAMS)


@pytest.mark.parametrize("name", [_soac_param(name) for name in common.PROGRAMS])
def test_soac_twin_matches_numpy(name):
    program = common.load(name, "soac")
    inputs = program.inputs(SIZE, SEED)
    _check(program.run(inputs), reference.expected(name, program, inputs), f"soac {name}")


@pytest.mark.parametrize("name", common.PROGRAMS)
def test_jax_twin_matches_numpy(name):
    _jax()
    program = common.load(name, "jax")
    inputs = program.inputs(SIZE, SEED)
    _check(program.run(inputs), reference.expected(name, program, inputs), f"JAX {name}")


@pytest.mark.parametrize("name", [_soac_param(name) for name in common.PROGRAMS])
def test_soac_twin_matches_jax(name):
    _jax()
    soac_program, jax_program = common.load(name, "soac"), common.load(name, "jax")
    inputs = soac_program.inputs(SIZE, SEED)
    common.assert_close(jax_program.inputs(SIZE, SEED), inputs, "the JAX twin's inputs", rtol=0.0)
    _check(soac_program.run(inputs), common.to_numpy(jax_program.run(inputs)), f"soac {name} against JAX", rtol=1e-9)
