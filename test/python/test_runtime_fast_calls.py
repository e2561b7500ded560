"""The C++ call of compiled CPU code (soac/_ext/Calls.cpp, ``soac._calls``):
it computes what abi.py's Python call computes, and it hands abi.py every
argument it would have to convert or refuse."""

from __future__ import annotations

import re

import numpy as np
import pytest

import soac
from soac.runtime import abi

MIXED = """
func.func @mixed(%a: tensor<?xf32>, %b: tensor<2x?xi32>, %c: tensor<?xi1>, %s: i8, %t: f32, %u: i1, %w: i16,
                 %x: f64, %n: i64)
    -> (tensor<?xf32>, tensor<2x?xi32>, tensor<?xi1>, i8, f32, i1, i16, tensor<?xf64>, f64, i64, tensor<2x?xi64>) {
  %a2 = soac.map ins(%a : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %r = arith.mulf %v, %t : f32
    soac.yield %r : f32
  }
  %b2 = soac.map ins(%b : tensor<2x?xi32>) -> tensor<2x?xi32> {
  ^bb0(%row: tensor<?xi32>):
    %r = soac.map ins(%row : tensor<?xi32>) -> tensor<?xi32> {
    ^bb0(%v: i32):
      %q = arith.muli %v, %v : i32
      soac.yield %q : i32
    }
    soac.yield %r : tensor<?xi32>
  }
  %c2 = soac.map ins(%c : tensor<?xi1>) -> tensor<?xi1> {
  ^bb0(%v: i1):
    %r = arith.xori %v, %u : i1
    soac.yield %r : i1
  }
  %wide = soac.map ins(%b2 : tensor<2x?xi32>) -> tensor<2x?xi64> {
  ^bb0(%row: tensor<?xi32>):
    %r = soac.map ins(%row : tensor<?xi32>) -> tensor<?xi64> {
    ^bb0(%v: i32):
      %q = arith.extsi %v : i32 to i64
      soac.yield %q : i64
    }
    soac.yield %r : tensor<?xi64>
  }
  %s2 = arith.addi %s, %s : i8
  %t2 = arith.negf %t : f32
  %u2 = arith.xori %u, %u : i1
  %w2 = arith.subi %w, %w : i16
  %e = tensor.empty() : tensor<0xf64>
  %cast = tensor.cast %e : tensor<0xf64> to tensor<?xf64>
  %x2 = arith.mulf %x, %x : f64
  %n2 = arith.addi %n, %n : i64
  return %a2, %b2, %c2, %s2, %t2, %u2, %w2, %cast, %x2, %n2, %wide
      : tensor<?xf32>, tensor<2x?xi32>, tensor<?xi1>, i8, f32, i1, i16, tensor<?xf64>, f64, i64, tensor<2x?xi64>
}

func.func @nothing(%x: tensor<?xf64>) {
  return
}

func.func @gather(%x: tensor<?xf64>, %i: index) -> f64 {
  %v = tensor.extract %x[%i] : tensor<?xf64>
  return %v : f64
}
"""


@pytest.fixture(autouse=True)
def one_tier(monkeypatch):
    """The compiled functions themselves, not a first tier in front of them
    (`mixed` lowers to more than tiers.LARGE_BYTES)."""
    monkeypatch.setenv("SOAC_TIERED", "off")


def arguments():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal(5).astype(np.float32),
        rng.integers(-100, 100, (2, 3)).astype(np.int32),
        np.array([True, False, True]),
        7,
        1.5,
        True,
        -3,
        np.float64(2.5),  # numpy's float64 is a Python float
        2**40,
    )


def python_path(function: abi.CompiledFunction) -> abi.CompiledFunction:
    """The same compiled code, called through abi.py's Python only."""
    twin = abi.CompiledFunction(function.signature, function._packed, function._keepalive,
                                checked=function._checked)
    twin._fast = None
    return twin


def assert_same(got, want):
    """Same types, dtypes (the very dtype: numpy's int64 prints as plain
    ints, its equal longlong as dtype=int64), shapes, values."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        assert np.asarray(g).dtype.char == np.asarray(w).dtype.char and np.shape(g) == np.shape(w)
        assert repr(g) == repr(w)
        np.testing.assert_array_equal(g, w)


def test_common_calls_take_the_cpp_path():
    mixed = soac.compile(MIXED, "mixed")
    assert mixed._fast is not None
    results = mixed._fast(*arguments())
    assert results is not abi._DECLINED
    assert_same(results, python_path(mixed)(*arguments()))


def test_both_paths_compute_the_same_results_of_every_dtype():
    mixed = soac.compile(MIXED, "mixed")
    a, b, c, s, t, u, w, x, n = arguments()
    got = mixed(*arguments())
    assert_same(got, python_path(mixed)(*arguments()))
    np.testing.assert_array_equal(got[0], a * np.float32(t))
    np.testing.assert_array_equal(got[1], b * b)
    np.testing.assert_array_equal(got[2], c ^ u)
    assert (got[3], got[4], got[5], got[6]) == (14, -1.5, False, 0)
    assert got[7].shape == (0,) and got[8] == 6.25 and got[9] == 2**41
    assert repr(got[10]) == repr((b * b).astype(np.int64))
    # Results own their memory: writable, and alive after the call's others.
    got[1][0, 0] = 5
    assert got[1][0, 0] == 5


def test_functions_without_results_and_with_one_scalar():
    nothing = soac.compile(MIXED, "nothing")
    assert nothing(np.ones(3)) is None
    assert nothing._fast(np.ones(3)) is None
    gather = soac.compile(MIXED, "gather")
    value = gather._fast(np.arange(4.0), 2)
    assert value == 2.0 and type(value) is np.float64


@pytest.mark.parametrize(
    "change",
    [
        "a strided view",
        "another dtype",
        "a list",
        "a numpy integer scalar",
        "a float for an integer",
        "an int beyond int64",
        "an f32 overflow",
        "an int for a bool that is not 0 or 1",
        "an array subclass",
        "too few arguments",
    ],
)
def test_what_the_cpp_path_declines_python_converts_or_refuses(change):
    mixed = soac.compile(MIXED, "mixed")
    args = list(arguments())
    if change == "a strided view":
        args[0] = np.arange(10, dtype=np.float32)[::2]
    elif change == "another dtype":
        args[1] = args[1].astype(np.int64)
    elif change == "a list":
        args[0] = [1.0, 2.0]
    elif change == "a numpy integer scalar":
        args[3] = np.int8(7)
    elif change == "a float for an integer":
        args[8] = 2.0
    elif change == "an int beyond int64":
        args[8] = 2**70
    elif change == "an f32 overflow":
        args[4] = 1e300
    elif change == "an int for a bool that is not 0 or 1":
        args[5] = 2
    elif change == "an array subclass":
        args[0] = np.ma.masked_array(args[0])
    elif change == "too few arguments":
        args.pop()
    assert mixed._fast(*args) is abi._DECLINED
    try:
        want = python_path(mixed)(*args)
    except soac.Error as error:
        with pytest.raises(type(error), match=re.escape(str(error))):
            mixed(*args)
    else:
        assert_same(mixed(*args), want)


def test_a_failed_check_raises_the_same_error():
    gather = soac.compile(MIXED, "gather")
    with pytest.raises(soac.IndexOutOfRangeError) as fast:
        gather._fast(np.arange(4.0), 9)
    with pytest.raises(soac.IndexOutOfRangeError) as slow:
        python_path(gather)(np.arange(4.0), 9)
    assert str(fast.value) == str(slow.value)
    assert gather(np.arange(4.0), 3) == 3.0  # and the next call is unaffected


def test_read_only_and_single_row_inputs_are_passed_by_address():
    """Sizes of 1 have any stride in a C-contiguous array (numpy's rule)."""
    gather = soac.compile(MIXED, "gather")
    x = np.arange(4.0)
    x.flags.writeable = False
    assert gather._fast(x, 1) == 1.0
    column = np.arange(8.0).reshape(4, 2)[:1, 0]  # shape (1,), stride 16 bytes
    assert column.flags.c_contiguous
    assert gather._fast(column, 0) == 0.0
