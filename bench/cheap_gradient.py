"""The cheap-gradient benchmark: gradient time / primal time as n grows.

f(x, idx) = sum_i x[idx[i]]^2 reads x at data-dependent indices. A gradient
within a constant factor of the primal needs the adjoint of each read to be a
sparse scatter-add (reduce_by_index (+)), not a dense one-hot per read; the
ratio must then stay flat from n = 1e3 to 1e6. Medians of repeats, compiled
for the CPU with all cores, in one run.

    .venv/bin/python bench/cheap_gradient.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/cheap_gradient.py --no-write
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import time

import numpy as np

import soac

ROOT = pathlib.Path(__file__).resolve().parents[1]
REPORT = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- cheap-gradient:begin -->", "<!-- cheap-gradient:end -->"

PROGRAM = """
func.func @gather_squares(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %g = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %s = arith.mulf %v, %v : f64
    soac.yield %s : f64
  }
  %r = soac.reduce ins(%g : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : f64
}
"""


def median_seconds(function, repeats: int) -> float:
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(sizes: list[int], repeats: int) -> list[tuple[int, float, float]]:
    primal = soac.compile(PROGRAM, "gather_squares")
    gradient = soac.grad(PROGRAM, "gather_squares", wrt=[0])
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        x = rng.standard_normal(n)
        idx = rng.integers(0, n, n)
        expected = np.zeros(n)
        np.add.at(expected, idx, 2 * x[idx])
        np.testing.assert_allclose(gradient(x, idx), expected, rtol=1e-12)
        t_primal = median_seconds(lambda: primal(x, idx), repeats)
        t_gradient = median_seconds(lambda: gradient(x, idx), repeats)
        rows.append((n, t_primal, t_gradient))
        print(f"n = {n:>9,d}  primal {t_primal * 1e3:8.3f} ms  gradient {t_gradient * 1e3:8.3f} ms  "
              f"ratio {t_gradient / t_primal:5.2f}", flush=True)
    return rows


def markdown(rows, repeats: int) -> str:
    lines = [
        f"`f(x, idx) = Σᵢ x[idx[i]]²` in float64, idx uniform in [0, n), medians of {repeats} runs "
        f"(`bench/cheap_gradient.py`, {soac.get_num_threads()} threads).",
        "",
        "| n | primal (ms) | gradient (ms) | gradient / primal |",
        "|---:|---:|---:|---:|",
    ]
    for n, t_primal, t_gradient in rows:
        lines.append(f"| {n:,d} | {t_primal * 1e3:.3f} | {t_gradient * 1e3:.3f} | {t_gradient / t_primal:.2f} |")
    return "\n".join(lines)


def write_report(table: str) -> None:
    text = REPORT.read_text()
    section = f"{BEGIN}\n{table}\n{END}"
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip() + "\n\n## Reverse mode: the cheap-gradient principle\n\n" + section + "\n"
    REPORT.write_text(text)


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
        write_report(table)


if __name__ == "__main__":
    main()
