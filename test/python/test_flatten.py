"""soac-flatten keeps results identical: the reference interpreter on the
original and on the flattened program, on random inputs with sizes 0, 1 and
more, gives the same arrays bit for bit; compiled flattened code agrees with
the interpreter. Each program also checks that its rewrite happened."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from mlir import ir
from mlir.passmanager import PassManager

import soac

rng = np.random.default_rng(7)
LIT = (pathlib.Path(__file__).resolve().parents[1] / "Transforms" / "Flatten" / "flatten.mlir").read_text()
# The lit cases, by function name (@no_distribute_effects calls an external
# function the interpreter cannot run).
CASES = {
    re.search(r"func\.func @(\w+)\(", case).group(1): case
    for case in LIT.split("// -----")
    if "@observe" not in case
}

LARGER = """
// softmax of each row: two reductions, two maps and the values between them
func.func @softmax_rows(%A: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %r = soac.map ins(%A : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %m = soac.reduce ins(%row : tensor<?xf64>) init(%ninf : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.maximumf %a, %b : f64
      soac.yield %t : f64
    }
    %e = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%x: f64):
      %d = arith.subf %x, %m : f64
      %y = math.exp %d : f64
      soac.yield %y : f64
    }
    %s = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %p = soac.map ins(%e : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%y: f64):
      %q = arith.divf %y, %s : f64
      soac.yield %q : f64
    }
    soac.yield %p : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// a linear recurrence along each row: the loop over the columns goes outside
func.func @recurrence_rows(%A: tensor<?x?xf64>, %decay: f64) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %A, %c1 : tensor<?x?xf64>
  %r = soac.map ins(%A : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %acc = scf.for %i = %c0 to %m step %c1 iter_args(%a = %zero) -> (f64) {
      %x = tensor.extract %row[%i] : tensor<?xf64>
      %p = arith.mulf %a, %decay : f64
      %q = arith.addf %p, %x : f64
      scf.yield %q : f64
    }
    soac.yield %acc : f64
  }
  return %r : tensor<?xf64>
}

// row sums of squares, and a scalar function of each sum
func.func @row_sums(%A: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %r:2 = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %sq = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%x: f32):
      %y = arith.mulf %x, %x : f32
      soac.yield %y : f32
    }
    %s = soac.reduce ins(%sq : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    %n = math.sqrt %s : f32
    soac.yield %s, %n : f32, f32
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// three nested maps over a rank-3 tensor: one map over all elements
func.func @collapse3(%A: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = soac.map ins(%A : tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%plane: tensor<?x?xf32>):
    %p = soac.map ins(%plane : tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%row: tensor<?xf32>):
      %q = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%x: f32):
        %y = math.tanh %x : f32
        soac.yield %y : f32
      }
      soac.yield %q : tensor<?xf32>
    }
    soac.yield %p : tensor<?x?xf32>
  }
  return %r : tensor<?x?x?xf32>
}
"""
CASES.update({name: LARGER for name in ("softmax_rows", "recurrence_rows", "row_sums", "collapse3")})


def floats(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# Inputs of each function for n rows of m columns.
ARGS = {
    "collapse": lambda n, m: (floats(n, m), 1.5),
    "collapse_static": lambda n, m: (floats(4, 5, 3), floats(4, 5)),
    "no_collapse_row_value": lambda n, m: (floats(n, max(m, 1)),),
    "segmented_reduce": lambda n, m: (np.abs(floats(n, m)),),
    "matvec": lambda n, m: (floats(n, m), floats(m)),
    "segmented_scan": lambda n, m: (floats(n, max(m, 1)),),
    "no_segmented_row_init": lambda n, m: (floats(n, m), np.full(n, -np.inf, dtype=np.float32)),
    "distribute": lambda n, m: (floats(n, m),),
    "interchange": lambda n, m: (floats(n), m, 0.25),
    "interchange_row_init": lambda n, m: (floats(8, dtype=np.float64), floats(8, dtype=np.float64)),
    "no_interchange_row_trip_count": lambda n, m: (floats(n), rng.integers(0, 5, n).astype(np.int64)),
    "no_interchange_tensor_carry": lambda n, m: (floats(n), floats(2)),
    "no_distribute_irregular": lambda n, m: (floats(n, m), rng.integers(0, m + 2, n).astype(np.int64)),
    "softmax_rows": lambda n, m: (floats(n, m, dtype=np.float64),),
    "recurrence_rows": lambda n, m: (floats(n, m, dtype=np.float64), 0.75),
    "row_sums": lambda n, m: (floats(n, m),),
    "collapse3": lambda n, m: (floats(n, m, m // 2),),
    "no_collapse_in_operator": lambda n, m: (floats(n, max(m, 1), 3), np.zeros((max(m, 1), 3), np.float32)),
    "distribute_nested_regular": lambda n, m: (floats(n, 3), floats(max(m, 1), 3)),
    "distribute_iota": lambda n, m: (floats(n, m),),
    "collapse_by_index": lambda n, m: (floats(n, 3), floats(n, m), floats(m)),
    "no_distribute_row_dim_index": lambda n, m: (rng.integers(0, 2, n).astype(np.int64), floats(2, m + 3)),
}

# What the flattened program of each function must show, so that the test
# fails when the pass does nothing: (text, number of occurrences) per function.
EXPECTED = {
    "collapse": {"tensor.collapse_shape": 1, "soac.map": 1},
    "collapse_static": {"tensor.collapse_shape": 2, "tensor.expand_shape": 1},
    "no_collapse_row_value": {"tensor.collapse_shape": 0, "soac.map": 2},
    "segmented_reduce": {"soac.segmented": 1, "soac.map": 2},
    "matvec": {"soac.segmented": 1, "soac.map": 2},
    "segmented_scan": {"soac.segmented": 1, "soac.map": 3},
    "no_segmented_row_init": {"soac.segmented": 0, "soac.map": 1},
    "distribute": {"soac.segmented": 2, "tensor.collapse_shape": 1, "soac.map": 3},
    "interchange": {"scf.for": 1, "tensor.splat": 1},
    "interchange_row_init": {"scf.for": 1},
    "no_interchange_row_trip_count": {"tensor.splat": 0},
    "no_interchange_tensor_carry": {"tensor.splat": 0},
    "no_distribute_irregular": {"soac.map": 1},
    "softmax_rows": {"soac.segmented": 2, "soac.map": 6},
    "recurrence_rows": {"tensor.splat": 1},
    "row_sums": {"soac.segmented": 1, "soac.map": 3},
    "collapse3": {"tensor.collapse_shape": 2, "tensor.expand_shape": 2, "soac.map": 1},
    "no_collapse_in_operator": {"tensor.collapse_shape": 0, "soac.map": 2},
    "distribute_nested_regular": {"soac.segmented": 2, "soac.iota": 1, "soac.map": 4},
    "distribute_iota": {"soac.segmented": 2, "soac.iota": 1, "soac.map": 5},
    "collapse_by_index": {"soac.iota": 1, "soac.map": 1, "tensor.expand_shape": 1},
    "no_distribute_row_dim_index": {"soac.map": 2, "soac.segmented": 0},
}

SIZES = [(0, 0), (0, 3), (1, 1), (3, 0), (1, 7), (5, 4)]


def flatten(source: str) -> str:
    """The program after soac-flatten (run from Python, as pipelines do)."""
    with ir.Context():
        module = soac.parse(source)
        PassManager.parse("builtin.module(soac-flatten)").run(module.operation)
        return str(module)


def function_text(source: str, name: str) -> str:
    """The text of @name in the printed module."""
    start = source.index(f"func.func @{name}(")
    end = source.find("\n  func.func ", start + 1)
    return source[start : end if end >= 0 else len(source)]


def interpret(source: str, function: str, *args):
    with ir.Context():
        return soac.interpret(soac.parse(source), function, *args)


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def assert_identical(actual, expected):
    for a, e in zip(as_tuple(actual), as_tuple(expected), strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_array_equal(a, e)


def assert_close(actual, expected):
    """Compiled code may reassociate reductions: floats up to rounding."""
    for a, e in zip(as_tuple(actual), as_tuple(expected), strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape
        rtol = 1e-4 if e.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol)


_flattened: dict[str, str] = {}


def flattened(source: str) -> str:
    if source not in _flattened:
        _flattened[source] = flatten(source)
    return _flattened[source]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rewrite_happened(name):
    text = function_text(flattened(CASES[name]), name)
    for pattern, count in EXPECTED[name].items():
        assert text.count(pattern) == count, f"{pattern} in @{name}:\n{text}"


@pytest.mark.parametrize("n,m", SIZES)
@pytest.mark.parametrize("name", sorted(ARGS))
def test_same_results(name, n, m):
    source = CASES[name]
    args = ARGS[name](n, m)
    expected = interpret(source, name, *args)
    assert_identical(interpret(flattened(source), name, *args), expected)


@pytest.mark.parametrize("n,m", SIZES)
@pytest.mark.parametrize("name", sorted(ARGS))
def test_compiled(name, n, m):
    args = ARGS[name](n, m)
    expected = interpret(CASES[name], name, *args)
    assert_close(soac.compile(flattened(CASES[name]), name)(*args), expected)


def test_every_case_has_inputs():
    assert set(CASES) == set(ARGS) == set(EXPECTED)


def test_pass_leaves_programs_valid():
    """The pass never fails on the examples and the integration programs."""
    root = pathlib.Path(__file__).resolve().parents[2]
    for path in [*sorted((root / "examples").glob("*.mlir")), root / "test" / "Integration" / "CPU" / "soacs.mlir"]:
        text = flatten(path.read_text())
        with ir.Context():
            assert soac.parse(text).operation.verify()
