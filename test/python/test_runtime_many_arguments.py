"""Functions with more arguments and results than a ctypes function type can
take (1024) are callable: compiled in process, as a shared library, and a
gradient with respect to all of them."""

from __future__ import annotations

import numpy as np
import soac
from soac.runtime import abi

COUNT = 1100


def many(count: int) -> str:
    """`@many`: `count` f64 arguments and a tensor, returned shifted by one
    (`count` results) and the tensor doubled."""
    args = ", ".join(f"%a{i}: f64" for i in range(count))
    body = "\n".join(f"  %r{i} = arith.addf %a{i}, %one : f64" for i in range(count))
    results = ", ".join(f"%r{i}" for i in range(count))
    return f"""
func.func @many({args}, %t: tensor<?xf64>) -> ({", ".join(["f64"] * count)}, tensor<?xf64>) {{
  %one = arith.constant 1.0 : f64
{body}
  %d = soac.map ins(%t : tensor<?xf64>) -> tensor<?xf64> {{
  ^bb0(%e: f64):
    %s = arith.addf %e, %e : f64
    soac.yield %s : f64
  }}
  return {results}, %d : {", ".join(["f64"] * count)}, tensor<?xf64>
}}
"""


def check_many(function) -> None:
    values = np.arange(COUNT, dtype=np.float64)
    t = np.array([1.0, 2.5])
    out = function(*values, t)
    assert len(out) == COUNT + 1
    np.testing.assert_array_equal(out[:COUNT], values + 1)
    np.testing.assert_array_equal(out[COUNT], 2 * t)


def test_a_function_with_more_than_1024_arguments_and_results():
    check_many(soac.compile(many(COUNT), "many"))


def test_a_shared_library_function_with_more_than_1024_arguments(tmp_path):
    library = soac.compile(many(COUNT), "many", emit="shared-lib", output=tmp_path)
    check_many(abi.load_library(str(library.library)).many)


def squares(count: int) -> str:
    """`@squares`: the sum of the squares of `count` f64 arguments."""
    args = ", ".join(f"%a{i}: f64" for i in range(count))
    terms = "\n".join(
        f"  %q{i} = arith.mulf %a{i}, %a{i} : f64\n  %s{i + 1} = arith.addf %s{i}, %q{i} : f64" for i in range(count)
    )
    return f"""
func.func @squares({args}) -> f64 {{
  %s0 = arith.constant 0.0 : f64
{terms}
  return %s{count} : f64
}}
"""


def test_the_gradient_of_a_function_of_more_than_1024_arguments():
    values = np.linspace(-1.0, 1.0, COUNT)
    out = soac.mlir.vjp(squares(COUNT), "squares")(*values, 1.5)
    np.testing.assert_allclose(out[0], np.sum(values**2))
    np.testing.assert_allclose(out[1:], 3.0 * values)
