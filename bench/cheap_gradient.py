"""The cheap-gradient benchmark: gradient time / primal time as n grows.

f(x, idx) = sum_i x[idx[i]]^2 reads x at data-dependent indices. A gradient
within a constant factor of the primal needs the adjoint of each read to be a
sparse scatter-add (reduce_by_index (+)), not a dense one-hot per read; the
ratio must then stay flat from n = 1e3 to 1e6. Next to it, a program with a
loop around a map, a scan and a reduce. Medians of repeats, compiled for the
CPU, in one run: on all cores, then on one (the gradient's scatter-add runs on
one core, so the ratio on one core is the work ratio).

    .venv/bin/python bench/cheap_gradient.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/cheap_gradient.py --no-write
"""

from __future__ import annotations

import argparse

import numpy as np
from common import ROOT, median_seconds, write_section

import soac

# @gather_squares comes from the library of examples.
PROGRAM = (ROOT / "examples" / "soacs.mlir").read_text() + """
// three steps of x <- cumsum(sin(x) * w) / n, then the sum of squares
func.func @mixed(%x: tensor<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%v = %x) -> (tensor<?xf64>) {
    %s = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%e: f64):
      %t = math.sin %e : f64
      %u = arith.mulf %t, %w : f64
      soac.yield %u : f64
    }
    %c = soac.scan ins(%s : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %next = soac.map ins(%c : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%e: f64):
      %t = arith.divf %e, %nf : f64
      soac.yield %t : f64
    }
    scf.yield %next : tensor<?xf64>
  }
  %sq = soac.map ins(%r : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%e: f64):
    %t = arith.mulf %e, %e : f64
    soac.yield %t : f64
  }
  %total = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %total : f64
}

"""



def run(sizes: list[int], repeats: int) -> list[tuple]:
    gather = soac.compile(PROGRAM, "gather_squares")
    gather_grad = soac.mlir.grad(PROGRAM, "gather_squares", wrt=[0])
    mixed = soac.compile(PROGRAM, "mixed")
    mixed_grad = soac.mlir.grad(PROGRAM, "mixed", wrt=[0])
    rng = np.random.default_rng(0)
    all_cores = soac.get_num_threads()
    rows = []
    for n in sizes:
        x = rng.standard_normal(n)
        idx = rng.integers(0, n, n)
        expected = np.zeros(n)
        np.add.at(expected, idx, 2 * x[idx])
        np.testing.assert_allclose(gather_grad(x, idx), expected, rtol=1e-12)
        for threads in sorted({all_cores, 1}, reverse=True):
            soac.set_num_threads(threads)
            times = [
                median_seconds(lambda: gather(x, idx), repeats),
                median_seconds(lambda: gather_grad(x, idx), repeats),
                median_seconds(lambda: mixed(x, 0.7), repeats),
                median_seconds(lambda: mixed_grad(x, 0.7), repeats),
            ]
            rows.append((n, threads, *times))
            print(f"n = {n:>9,d}  {threads} thread(s)  gather: ratio {times[1] / times[0]:5.2f}"
                  f"   loop/scan/reduce: ratio {times[3] / times[2]:5.2f}", flush=True)
    soac.set_num_threads(all_cores)
    return rows


def markdown(rows, repeats: int) -> str:
    lines = [
        f"Float64, medians of {repeats} runs (`bench/cheap_gradient.py`), on all {soac.get_num_threads()} cores and on one. "
        "*gather*: `f(x, idx) = Σᵢ x[idx[i]]²`, idx uniform in [0, n). "
        "*loop/scan/reduce*: three steps of `x ← cumsum(sin(x)·w)/n`, then `Σ x²`.",
        "",
        "| n | threads | gather: primal (ms) | gradient (ms) | ratio | loop/scan/reduce: primal (ms) | gradient (ms) | ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, threads, t1, g1, t2, g2 in rows:
        lines.append(
            f"| {n:,d} | {threads} | {t1 * 1e3:.3f} | {g1 * 1e3:.3f} | {g1 / t1:.2f} | {t2 * 1e3:.3f} | {g2 * 1e3:.3f} | {g2 / t2:.2f} |"
        )
    return "\n".join(lines)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    rows = run([1_000, 10_000, 100_000, 1_000_000], options.repeats)
    table = markdown(rows, options.repeats)
    print()
    print(table)
    if not options.no_write:
        write_section("cheap-gradient", "Reverse mode: the cheap-gradient principle", table)


if __name__ == "__main__":
    main()
