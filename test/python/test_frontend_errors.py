"""Tracing errors are soac.Errors at the user's line; the IR carries Python locations."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import soac
import soac.numpy as snp

HERE = __file__


def line_of(marker: str) -> int:
    """The line of this file holding ``marker`` (a comment at the failing call)."""
    lines = inspect.getsource(inspect.getmodule(line_of)).splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "line_of(" not in text)


def expect(fn, args, message, marker):
    with pytest.raises(soac.TraceError, match=message) as info:
        soac.jit(fn)(*args)
    assert str(info.value).startswith(f"{HERE}:{line_of(marker)}:"), str(info.value)
    assert isinstance(info.value, soac.Error)


def test_shape_mismatch_in_a_map():
    def f(x):
        a = soac.map(lambda v: v * 2.0, x)
        return soac.map(lambda u, w: u + w, a, np.ones(3))  # MAP-SIZES

    expect(lambda x: f(np.ones(4)) + snp.sum(x), [np.ones(2)], r"map inputs have different outer sizes \[3, 4\]", "MAP-SIZES")


def test_broadcasting_mismatch():
    expect(lambda x: np.ones(3) + np.ones(4) * x, [np.float64(1.0)], r"shapes \(3,\) and \(4,\) do not broadcast", "BROADCAST")  # BROADCAST


def test_wrong_operator_arity():
    def f(x):
        return soac.reduce(lambda a: a, x, 0.0)  # ARITY

    expect(f, [np.ones(2)], "the function given to reduce must take 2 arguments", "ARITY")


def test_values_that_cannot_be_traced():
    def f(x):
        return x + "one"  # NOT-TRACEABLE

    expect(f, [np.ones(2)], "cannot trace a value of type str", "NOT-TRACEABLE")
    with pytest.raises(soac.TraceError, match="cannot pass a set"):
        soac.jit(lambda x: x)({1.0, 2.0})  # lists, tuples and dicts are pytrees; a set is not


def test_python_control_flow_on_traced_values():
    def f(x):
        if x > 0.0:  # PYTHON-IF
            return x
        return -x

    expect(f, [np.float64(1.0)], "no Python truth value", "PYTHON-IF")


def test_dtype_mismatches():
    # Operands promote as in JAX; a loop's carry keeps its dtype.
    def g(x):
        return soac.fori_loop(0, 3, lambda i, c: c * 0.5, 1)  # CARRY

    expect(g, [np.float64(1.0)], "the body of fori_loop returns float64 where int64 is expected", "CARRY")


def test_numpy_functions_on_traced_arrays_name_their_soac_twin():
    expect(lambda x: np.exp(x), [np.ones(2)], r"numpy.exp cannot run on a traced array .*; use soac.numpy.exp", "NP-EXP")  # NP-EXP
    expect(lambda x: np.sum(x), [np.ones(2)], r"numpy.sum cannot run .*; use soac.numpy.sum", "NP-SUM")  # NP-SUM
    expect(lambda x: np.asarray(x), [np.ones(2)], r"cannot become a numpy array", "NP-ASARRAY")  # NP-ASARRAY
    # numpy values on the left of an operator are fine: the operator is soac's.
    out = soac.jit(lambda x: (np.float32(2) * x, np.ones(2) - x, np.float64(1.5) < x))(np.ones(2, np.float32))
    assert out[0].dtype == np.float32 and np.array_equal(out[0], [2, 2])
    assert np.array_equal(out[1], [0, 0]) and np.array_equal(out[2], [False, False])


def test_grad_needs_a_float_scalar():
    with pytest.raises(soac.TraceError, match=r"grad needs <lambda> to return one float scalar; it returns \(float64\[\?\]\)"):
        soac.grad(lambda x: x * 2.0)(np.ones(3))


def test_closures_over_values_of_another_trace():
    # A function differentiated inside a trace may use the trace's values (as constants, as in JAX).
    assert soac.jit(lambda x: soac.grad(lambda v: v * x)(x))(np.float64(2.0)) == 2.0
    kept = []
    soac.jit(lambda x: kept.append(x) or x)(np.float64(1.0))

    def f(x):
        return x + kept[0]  # KEPT

    expect(f, [np.float64(2.0)], "belongs to another traced function", "KEPT")


def test_ops_carry_python_locations():
    def f(x):
        y = soac.math.exp(x)  # EXP-LINE
        return snp.sum(y)

    text = soac.jit(f).mlir(np.ones(2), debug_info=True)
    assert f'loc("{HERE}":{line_of("EXP-LINE")}:' in text
    assert "math.exp" in text


def test_verifier_errors_point_to_the_user_line():
    # Broadcasting is static-size checked only; a body whose type the verifier rejects reports the user's line.
    def f(x):
        return soac.scan(lambda a, b: (a + b) > 0.0, x, 0.0)  # SCAN-TYPE

    with pytest.raises(soac.TraceError, match="the operator of scan returns bool where float64 is expected") as info:
        soac.jit(f)(np.ones(2))
    assert f":{line_of('SCAN-TYPE')}:" in str(info.value)


def test_tracebacks_show_the_users_frames(monkeypatch):
    import os
    import traceback

    package = os.path.dirname(soac.__file__)

    def frames():
        with pytest.raises(soac.TraceError) as info:
            soac.jit(lambda x: x[0, 0])(np.ones(3))
        return [f.filename for f in traceback.extract_tb(info.value.__traceback__)]

    assert sum(f.startswith(package) for f in frames()) == 1  # the re-raise in soac.jit, then the user's lambda
    monkeypatch.setenv("SOAC_TRACEBACK_FILTERING", "off")
    assert sum(f.startswith(package) for f in frames()) > 3


def test_compilations_are_logged(caplog):
    import logging

    soac.clear_caches()  # so that this compiles, whatever ran before
    with caplog.at_level(logging.DEBUG, logger="soac"):
        soac.jit(lambda x: x * 3.0 + 1.0)(np.ones(2))
    assert any("compiled @lambda for the CPU in" in r.getMessage() and "soac-lower-to-cpu" in r.getMessage() for r in caplog.records)


def test_functions_named_like_the_c_library():
    # A compiled function named exp would be called by its own math.exp (libm's exp).
    def exp(x):
        return soac.math.exp(x) * 2.0

    np.testing.assert_allclose(soac.jit(exp)(np.ones(3)), 2 * np.e)
    np.testing.assert_allclose(soac.jit(soac.math.exp)(np.zeros(2)), [1.0, 1.0])
    assert "func.func @exp_traced" in soac.jit(exp).mlir(np.ones(3))
