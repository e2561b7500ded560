"""Property tests: compiled code equals the interpreter on inputs Hypothesis
chooses (sizes from 0 up, ties, negative and out-of-range indices)."""

from __future__ import annotations

import pathlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from mlir import ir

import soac

LIBRARY = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "soacs.mlir").read_text()
SETTINGS = settings(max_examples=40, deadline=None)

sizes = st.integers(0, 300)


def float_arrays(dtype, n, low=-100.0, high=100.0):
    # small integers as floats: many ties, and sums that are exact in float32
    return hnp.arrays(dtype, n, elements=st.integers(int(low), int(high)).map(float))


def interpret(function, *args):
    with ir.Context():
        return soac.interpret(soac.parse(LIBRARY), function, *args)


@SETTINGS
@given(st.data())
def test_argmin_and_cumsum(data):
    n = data.draw(sizes)
    x = data.draw(float_arrays(np.float32, n, -5, 5))
    assert soac.compile(LIBRARY, "argmin")(x) == interpret("argmin", x)
    np.testing.assert_array_equal(soac.compile(LIBRARY, "cumsum")(x), interpret("cumsum", x))


@SETTINGS
@given(st.data())
def test_linear_recurrence(data):
    n = data.draw(sizes)
    a = data.draw(hnp.arrays(np.float64, n, elements=st.floats(-1.0, 1.0)))
    b = data.draw(hnp.arrays(np.float64, n, elements=st.floats(-10.0, 10.0)))
    compiled = soac.compile(LIBRARY, "recurrence")(a, b)
    expected = interpret("recurrence", a, b)
    for ours, reference in zip(compiled, expected):
        np.testing.assert_allclose(ours, reference, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(st.data())
def test_histograms_and_scatter_skip_out_of_range_indices(data):
    n = data.draw(sizes)
    bins = data.draw(st.integers(0, 20))
    idx = data.draw(hnp.arrays(np.int64, n, elements=st.integers(-3, bins + 3)))
    x = data.draw(float_arrays(np.float32, n))
    start = data.draw(float_arrays(np.float32, bins))
    np.testing.assert_array_equal(
        soac.compile(LIBRARY, "histogram")(start, idx, x), interpret("histogram", start, idx, x)
    )
    unique = data.draw(st.permutations(range(-2, bins + 2)))[: min(n, bins + 4)]
    targets = np.array(unique, dtype=np.int64)
    values = x[: len(targets)]
    np.testing.assert_array_equal(
        soac.compile(LIBRARY, "scatter")(start, targets, values), interpret("scatter", start, targets, values)
    )
