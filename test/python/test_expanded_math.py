"""exp, log and tanh of float64 and float32 in compiled CPU code are f64
arithmetic (soac-expand-f64-math), not libm calls: their results against
numpy's over the whole range, in ulps, and at every special value;
``CpuOptions(vector_math=False)`` calls libm instead."""

from __future__ import annotations

import numpy as np
import pytest

import soac
from soac.compiler import CpuOptions

PROGRAM = """
func.func @functions(%x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %e, %l, %t = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>, tensor<?xf64> {
  ^bb0(%a: f64):
    %1 = math.exp %a : f64
    %2 = math.log %a : f64
    %3 = math.tanh %a : f64
    soac.yield %1, %2, %3 : f64, f64, f64
  }
  return %e, %l, %t : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
"""

SPECIAL = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan,
    5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 2.225073858507201e-308,  # subnormal edges
    709.782712893384, 709.7827128933841, 709.79, 710.0, 1e300, 1.7976931348623157e308,  # exp overflow
    -708.39, -708.4, -744.44, -745.13, -745.14, -746.0, -1e300,  # exp underflow and subnormal results
    1.0, -1.0, 2.0, 0.5, np.sqrt(2.0), np.sqrt(0.5), 1 - 2**-53, 1 + 2**-52,  # log near its reduction edges
    0.17, -0.17, np.nextafter(0.17, 0), 22.0, -22.0, 19.0, 1e-300, -1e-300,  # tanh's branches
    0.3491583905756417, 227.71440614203686, 0.19002899036010845, 0.20524165416377338,  # the worst errors found
])

# Largest error against numpy's functions (themselves within an ulp), over
# 16 million samples: exp 2 ulp (1 on all but a few inputs in a million),
# log 1 ulp, tanh 4 ulp between 0.17 and 0.6 (t / (t + 2) with
# t = e^2x - 1), 1 ulp elsewhere. The worst inputs found are among SPECIAL.
MAX_ULPS = {"exp": 2.0, "log": 1.0, "tanh": 4.0}


def samples() -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.concatenate([
        rng.uniform(-750, 750, 50_000),
        rng.standard_normal(50_000),
        rng.uniform(-1e-3, 1e-3, 20_000),
        np.exp(rng.uniform(-745, 709, 50_000)),  # log over every exponent
        rng.uniform(0.5, 2.0, 50_000),
        rng.uniform(-25, 25, 50_000),
        SPECIAL,
    ])


@pytest.fixture(scope="module")
def results():
    x = samples()
    compiled = soac.compile(PROGRAM, "functions")(x)
    with np.errstate(all="ignore"):
        expected = (np.exp(x), np.log(x), np.tanh(x))
    return x, dict(zip(MAX_ULPS, compiled)), dict(zip(MAX_ULPS, expected))


@pytest.mark.parametrize("name", MAX_ULPS)
def test_within_an_ulp_or_so_of_numpy(results, name):
    x, compiled, expected = results
    got, want = compiled[name], expected[name]
    finite = np.isfinite(want)
    assert np.isfinite(got[finite]).all(), x[finite & ~np.isfinite(got)][:5]
    ulps = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
    worst = int(np.argmax(ulps))
    assert ulps.max() <= MAX_ULPS[name], (
        f"{name}({x[finite][worst]!r}) = {got[finite][worst]!r}, libm {want[finite][worst]!r}: {ulps.max()} ulp")


@pytest.mark.parametrize("name", MAX_ULPS)
def test_special_values_are_numpys(results, name):
    x, compiled, expected = results
    got, want = compiled[name], expected[name]
    special = ~np.isfinite(want) | (want == 0) | np.isin(x, SPECIAL)
    np.testing.assert_array_equal(np.isnan(got[special]), np.isnan(want[special]))
    exact = special & ~np.isnan(want) & (~np.isfinite(want) | (want == 0))
    # Infinities and zeros exactly, with their signs.
    np.testing.assert_array_equal(got[exact], want[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))


def test_the_cpu_pipeline_calls_no_libm_for_them():
    lowered = str(soac.compiler.lower(PROGRAM))
    for function in ("@exp", "@log", "@tanh"):
        assert f"llvm.call {function}(" not in lowered and f"llvm.func {function}(" not in lowered
    for intrinsic in ("llvm.intr.exp", "llvm.intr.log", "llvm.intr.tanh"):
        assert intrinsic not in lowered


def test_vector_math_false_calls_libm():
    lowered = str(soac.compiler.lower(PROGRAM, options=CpuOptions(vector_math=False)))
    for intrinsic in ("llvm.intr.exp", "llvm.intr.log", "llvm.intr.tanh"):
        assert intrinsic in lowered
    x = np.array([1.5, 0.25, 3.0])
    for got, want in zip(soac.compile(PROGRAM, "functions", options=CpuOptions(vector_math=False))(x),
                         (np.exp(x), np.log(x), np.tanh(x))):
        np.testing.assert_allclose(got, want, rtol=1e-15, equal_nan=True)


def test_float32_is_computed_in_float64_and_rounded():
    program = PROGRAM.replace("f64", "f32")
    rng = np.random.default_rng(3)
    special = SPECIAL[np.isnan(SPECIAL) | (np.abs(SPECIAL) <= np.finfo(np.float32).max)]
    x = np.concatenate([rng.uniform(-110, 110, 50_000), np.exp(rng.uniform(-100, 88, 50_000)),
                        rng.standard_normal(50_000), special, [np.inf, -np.inf]]).astype(np.float32)
    with np.errstate(all="ignore"):
        exact = [f(x.astype(np.float64)).astype(np.float32) for f in (np.exp, np.log, np.tanh)]
    for name, got, want in zip(MAX_ULPS, soac.compile(program, "functions")(x), exact):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
        # Rounded from a float64 within an ulp of the exact value: the
        # float32 result is the correctly rounded one, or at worst its
        # neighbour when the exact value is within 2^-29 ulp of a midpoint.
        ulps = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite]))
        assert ulps.max() <= 1.0, name
        assert np.mean(ulps == 0) > 0.9999, name
