"""Vector mode: the full Jacobian of a 100-input program, k directional
derivatives per pass (soac.jvp with width k) against one pass per input.

f(A, x) = cumsum(tanh(A·x)) · x, x of 100 inputs, A a fixed 100×100 matrix:
its 100×100 Jacobian with respect to x by soac.jacfwd with width 1 (100
passes), 10, 25 and 100 (one pass), and by soac.jacrev with width 1, 10 and
25 (the rows of a call share the forward sweep).
Medians of repeats, compile times apart, in one run.

    .venv/bin/python bench/vector_mode.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/vector_mode.py --no-write
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from common import median_seconds, write_section

import soac

PROGRAM = """
func.func @f(%A: tensor<?x?xf64>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %Ax = soac.map ins(%A : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %p = soac.map ins(%row, %x : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %m = arith.mulf %a, %b : f64
      soac.yield %m : f64
    }
    %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%u: f64, %v: f64):
      %t = arith.addf %u, %v : f64
      soac.yield %t : f64
    }
    %h = math.tanh %s : f64
    soac.yield %h : f64
  }
  %c = soac.scan ins(%Ax : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%u: f64, %v: f64):
    %t = arith.addf %u, %v : f64
    soac.yield %t : f64
  }
  %y = soac.map ins(%c, %x : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64, %v: f64):
    %t = arith.mulf %u, %v : f64
    soac.yield %t : f64
  }
  return %y : tensor<?xf64>
}
"""


def timed_build(build):
    start = time.perf_counter()
    value = build()
    return value, time.perf_counter() - start


def run(inputs: int, forward_widths: list[int], reverse_widths: list[int], repeats: int) -> list[tuple]:
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((inputs, inputs)) / np.sqrt(inputs), rng.standard_normal(inputs)
    reference = None
    rows = []
    methods = [(f"jacfwd, width {w}", lambda w=w: soac.mlir.jacfwd(PROGRAM, "f", wrt=1, width=w)) for w in forward_widths]
    methods += [(f"jacrev, width {w}", lambda w=w: soac.mlir.jacrev(PROGRAM, "f", wrt=1, width=w)) for w in reverse_widths]
    for label, build in methods:
        jacobian, compile_seconds = timed_build(build)
        value = jacobian(A, x)
        if reference is None:
            reference = value
        np.testing.assert_allclose(value, reference, rtol=1e-10, atol=1e-12)
        seconds = median_seconds(lambda: jacobian(A, x), repeats)
        rows.append((label, seconds, compile_seconds))
        print(f"{label:18s} {seconds * 1e3:8.2f} ms   (compile {compile_seconds:.2f} s)", flush=True)
    return rows


def markdown(rows, inputs: int, repeats: int) -> str:
    base = rows[0][1]
    lines = [
        f"Float64, medians of {repeats} runs (`bench/vector_mode.py`, {soac.get_num_threads()} threads). "
        f"The {inputs}×{inputs} Jacobian of `f(A, x) = cumsum(tanh(A·x))·x` with respect to x.",
        "",
        "| method | passes | time (ms) | speed-up over jacfwd, width 1 | compile (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, seconds, compile_seconds in rows:
        width = int(label.rsplit(" ", 1)[1])
        passes = -(-inputs // width)
        lines.append(f"| {label} | {passes} | {seconds * 1e3:.2f} | {base / seconds:.2f} | {compile_seconds:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--inputs", type=int, default=100)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    os.environ["SOAC_CACHE"] = "off"  # the compile column: compiled, not loaded from the disk cache
    rows = run(options.inputs, [1, 10, 25, 100], [1, 10, 25], options.repeats)
    table = markdown(rows, options.inputs, options.repeats)
    print()
    print(table)
    if not options.no_write:
        write_section("vector-mode", "Vector mode: a full Jacobian in fewer passes", table)


if __name__ == "__main__":
    main()
