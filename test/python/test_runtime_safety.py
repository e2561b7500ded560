"""Memory safety of compiled functions: arguments are converted only where
numpy keeps their value, results never share memory with each other or with
the arguments, and the JIT cache is bounded and releases what it drops."""

from __future__ import annotations

import fractions
import gc
import os
import re
import subprocess
import sys
import weakref

import numpy as np
import pytest

import soac
from soac.runtime.abi import ArgumentError

# One identity function per scalar type: @id_<dtype>(%a) -> %a.
SCALAR_TYPES = {
    "float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "bool": "i1",
}
SCALARS = "\n".join(
    f"func.func @id_{dtype}(%a: {mlir}) -> {mlir} {{ return %a : {mlir} }}" for dtype, mlir in SCALAR_TYPES.items()
) + """
func.func @sum(%x: tensor<?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %s = soac.reduce ins(%x : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %s : f64
}
"""


def identity(dtype: str) -> soac.runtime.abi.CompiledFunction:
    return soac.compile(SCALARS, f"id_{dtype}")


BAD_SCALARS = [
    ("float32", None, "None", "which is not a real number"),
    ("float32", "1.0", "str '1.0'", "which is not a real number"),
    ("int64", b"1", "bytes b'1'", "which is not a real number"),
    ("float64", 1 + 2j, "complex (1+2j)", "which is not a real number"),
    ("float32", np.complex64(1), "complex64 (1+0j)", "which is not a real number"),
    ("float64", fractions.Fraction(1, 2), "Fraction Fraction(1, 2)", "which is not a real number"),
    ("int64", 2.7, "float 2.7", "which is not an integer"),
    ("int64", float("nan"), "float nan", "which is not an integer"),
    ("int64", float("inf"), "float inf", "which is not an integer"),
    ("int64", 1e300, "float 1e+300", "which is out of the range of int64"),
    ("int8", 300, "int 300", "which is out of the range of int8"),
    ("int8", -129, "int -129", "which is out of the range of int8"),
    ("int64", 2**63, "int 9223372036854775808", "which is out of the range of int64"),
    ("int32", np.int64(2**31), "int64 2147483648", "which is out of the range of int32"),
    ("int64", np.uint64(2**63), "uint64 9223372036854775808", "which is out of the range of int64"),
    ("int64", np.float64(3.0), "float64 3.0", "which numpy does not cast to int64 (same_kind)"),
    ("int32", np.array(3.0), "an array of dtype float64 and shape ()",
     "which numpy does not cast to int32 (same_kind)"),
    ("float32", 1e40, "float 1e+40", "which overflows float32"),
    ("float32", np.float64(-1e40), "float64 -1e+40", "which overflows float32"),
    ("float16", 70000, "int 70000", "which overflows float16"),
    ("float16", np.float32(1e5), "float32 100000.0", "which overflows float16"),
    ("float64", 2**1024, "int 179769313486231590...5356329624224137216", "which overflows float64"),
    ("bool", 2, "int 2", "which is neither a bool nor the int 0 or 1"),
    ("bool", 1.0, "float 1.0", "which is neither a bool nor the int 0 or 1"),
    ("bool", np.int64(1), "int64 1", "which numpy does not cast to bool (same_kind)"),
]


@pytest.mark.parametrize("dtype, value, given, reason", BAD_SCALARS, ids=[repr(c[1])[:30] for c in BAD_SCALARS])
def test_a_scalar_argument_that_would_change_is_refused(dtype, value, given, reason):
    expected = f"argument #0 of id_{dtype} must be a scalar of dtype {dtype}; got {given}, {reason}"
    with pytest.raises(ArgumentError, match=f"^{re.escape(expected)}"):
        identity(dtype)(value)


GOOD_SCALARS = [
    ("float32", 1.5, 1.5),
    ("float32", 3, 3.0),  # Python ints: converted when the result is finite (rounded, as numpy does)
    ("float32", 2**24 + 1, 2.0**24),
    ("float32", np.float64(0.1), np.float32(0.1)),  # same_kind: rounded to the nearest float32
    ("float32", np.int64(5), 5.0),
    ("float32", True, 1.0),
    ("float32", np.array(2.0), 2.0),
    ("float32", float("inf"), np.inf),  # an infinity passed is no overflow
    ("float32", np.float64(-np.inf), -np.inf),
    ("float64", 1e308, 1e308),
    ("float16", 65504, 65504.0),
    ("float16", 1.5, 1.5),
    ("int8", 127, 127),
    ("int8", -128, -128),
    ("int8", np.int16(5), 5),
    ("int8", True, 1),
    ("int64", 3.0, 3),  # an integral Python float
    ("int64", 2**63 - 1, 2**63 - 1),
    ("int64", -(2**63), -(2**63)),
    ("int64", np.uint64(5), 5),
    ("int32", np.array(7), 7),
    ("bool", True, True),
    ("bool", 0, False),
    ("bool", 1, True),
    ("bool", np.False_, False),
    ("bool", np.array(True), True),
]


@pytest.mark.parametrize("dtype, value, expected", GOOD_SCALARS, ids=[repr(c[1])[:30] for c in GOOD_SCALARS])
def test_a_scalar_argument_numpy_keeps_is_converted(dtype, value, expected):
    result = identity(dtype)(value)
    assert result.dtype == np.dtype(dtype)
    assert result == np.dtype(dtype).type(expected)


def test_nan_passes_to_a_float_argument():
    assert np.isnan(identity("float32")(float("nan")))
    assert np.isnan(identity("float16")(np.float64("nan")))


BAD_TENSORS = [
    (None, "None"),
    ("abc", "str 'abc'"),
    (b"ab", "bytes b'ab'"),
    (["a", "b"], "list ['a', 'b']"),
    ([None, 1.0], "list [None, 1.0]"),
    ([[1.0], [1.0, 2.0]], "list [[1.0], [1.0, 2.0]]"),  # ragged: numpy cannot make an array of it
    (np.array([1.0, "x"], dtype=object), "an array of dtype object and shape (2,)"),
]


@pytest.mark.parametrize("value, given", BAD_TENSORS, ids=[g for _, g in BAD_TENSORS])
def test_a_tensor_argument_that_is_not_numbers_is_refused(value, given):
    expected = f"argument #0 of sum must be float64[?]; got {given}, which is not an array of numbers"
    with pytest.raises(ArgumentError, match=f"^{re.escape(expected)}$"):
        soac.compile(SCALARS, "sum")(value)


def test_tensor_arguments_keep_the_exact_dtype_rule():
    total = soac.compile(SCALARS, "sum")
    assert total([1.0, 2.0]) == 3.0  # a list of floats is float64
    for value, dtype in [(np.ones(2, np.float32), "float32"), (np.ones(2, complex), "complex128"), ([1, 2], "int64")]:
        with pytest.raises(ArgumentError, match=rf"^argument #0 of sum must be float64\[\?\]; got dtype {dtype}$"):
            total(value)


ALIASING = """
func.func @twice(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    soac.yield %s : f32
  }
  return %r, %r : tensor<?xf32>, tensor<?xf32>
}
func.func @mixed(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %s = arith.addf %v, %v : f32
    soac.yield %s : f32
  }
  return %r, %x, %r, %x : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
func.func @identity(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
func.func @constant_twice() -> (tensor<3xf32>, tensor<3xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c, %c : tensor<3xf32>, tensor<3xf32>
}
"""


def assert_no_shared_memory(arrays):
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)


def test_a_result_returned_twice_comes_back_as_two_arrays():
    twice = soac.compile(ALIASING, "twice")
    x = np.arange(5, dtype=np.float32)
    for _ in range(50):  # a double free would abort the process
        a, b = twice(x)
        assert_no_shared_memory([a, b, x])
        a[0] = -1.0  # writing one result leaves the other alone
        del a
        gc.collect()
        np.testing.assert_array_equal(b, x * x)


def test_results_share_memory_with_no_other_result_nor_argument():
    x = np.arange(4, dtype=np.float32)
    results = soac.compile(ALIASING, "mixed")(x)
    assert_no_shared_memory([*results, x])
    for result, expected in zip(results, [2 * x, x, 2 * x, x]):
        np.testing.assert_array_equal(result, expected)
    a, b = soac.compile(ALIASING, "constant_twice")()
    assert_no_shared_memory([a, b])
    a[:] = 0.0
    np.testing.assert_array_equal(soac.compile(ALIASING, "constant_twice")()[0], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("view", [slice(None), slice(None, None, 2)])
def test_an_argument_returned_unchanged_is_a_copy(view):
    x = np.arange(8, dtype=np.float32)
    result = soac.compile(ALIASING, "identity")(x[view])
    assert not np.shares_memory(result, x)
    result[:] = -1.0
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32))


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_results_returned_twice_are_freed():
    twice = soac.compile(ALIASING, "twice")
    x = np.ones(100_000, np.float32)  # 800 kB per call: 1.6 GB if leaked
    for _ in range(100):
        twice(x)
    before = rss_mb()
    for _ in range(2000):
        twice(x)
    growth = rss_mb() - before
    assert growth < 50, f"RSS grew by {growth:.0f} MB over 2,000 calls"


def program(i: int) -> str:
    """A small program of its own: compiling it misses the cache."""
    return (
        f"func.func @f(%x: f32) -> f32 {{\n  %c = arith.constant {i}.0 : f32\n"
        "  %r = arith.addf %x, %c : f32\n  return %r : f32\n}"
    )


@pytest.fixture
def cache_size():
    """soac.set_jit_cache_size, with the size restored after the test."""
    previous = soac.get_jit_cache_size()
    yield soac.set_jit_cache_size
    soac.set_jit_cache_size(previous)


def test_the_jit_cache_keeps_at_most_its_size_and_releases_what_it_drops(cache_size):
    cache_size(4)
    first = soac.compile(program(0), "f")
    dropped = weakref.ref(first)
    kept = soac.compile(program(1), "f")
    for i in range(2, 100):
        soac.compile(program(i), "f")
        assert len(soac.compiler._jit_cache) <= 4
    assert len(soac.compiler._jit_cache) == 4
    del first
    gc.collect()
    assert dropped() is None  # its ExecutionEngine went with it
    assert kept(1.0) == 2.0  # a dropped function someone holds still runs
    assert soac.compile(program(1), "f") is not kept  # and compiles anew
    assert soac.compile(program(99), "f") is soac.compile(program(99), "f")


def test_the_jit_cache_drops_the_least_recently_used(cache_size):
    cache_size(3)
    a, b, c = (soac.compile(program(i), "f") for i in range(1000, 1003))
    assert soac.compile(program(1000), "f") is a  # a used again: b is now the oldest
    soac.compile(program(1003), "f")
    assert soac.compile(program(1000), "f") is a
    assert soac.compile(program(1002), "f") is c
    assert soac.compile(program(1001), "f") is not b
    cache_size(1)  # shrinking drops the oldest
    assert len(soac.compiler._jit_cache) == 1
    cache_size(0)  # nothing is cached
    assert soac.compile(program(1000), "f") is not soac.compile(program(1000), "f")
    assert len(soac.compiler._jit_cache) == 0


@pytest.mark.parametrize("size", [-1, 1.5, True, "4"])
def test_a_bad_cache_size_is_an_error(cache_size, size):
    with pytest.raises(soac.Error, match=re.escape(f"the JIT cache size must be an integer >= 0, got {size!r}")):
        cache_size(size)


@pytest.mark.parametrize("text, printed", [("3", "3"), ("0", "0"), (None, "64")])
def test_the_cache_size_comes_from_the_environment(text, printed):
    environment = {k: v for k, v in os.environ.items() if k != "SOAC_JIT_CACHE_SIZE"}
    if text is not None:
        environment["SOAC_JIT_CACHE_SIZE"] = text
    script = "import soac; print(soac.get_jit_cache_size())"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == printed


def test_a_bad_cache_size_in_the_environment_is_an_error():
    environment = dict(os.environ, SOAC_JIT_CACHE_SIZE="lots")
    out = subprocess.run([sys.executable, "-c", "import soac"], capture_output=True, text=True, env=environment)
    assert out.returncode != 0
    assert "SOAC_JIT_CACHE_SIZE must be an integer >= 0, got 'lots'" in out.stderr


def test_clear_caches_releases_compiled_code_of_compile_and_jit():
    compiled = soac.compile(program(2000), "f")
    from_compile = weakref.ref(compiled)
    del compiled

    @soac.jit
    def double(x):
        return x + x

    assert double(2.0) == 4.0
    traced = double.trace(2.0)
    from_jit = weakref.ref(traced._compiled)
    soac.clear_caches()
    gc.collect()
    assert from_compile() is None and from_jit() is None
    assert double(3.0) == 6.0  # compiled again
    assert traced._compiled is not None
