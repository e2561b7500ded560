"""The cheap-gradient benchmark of nested programs: gradient time / primal
time as n grows, for reads at computed indices one level or more inside maps
(examples/nested_gathers.mlir).

A read of a free array inside nested maps, reduces or loops must have a
sparse adjoint (its reads stacked into one reduce_by_index (+) after the
outermost map), not a dense adjoint of the whole array per row; the ratio
must then stay flat from n = 1e3 to 1e6 (1e7). Programs:

- conv1d: out[i] = Σ_j w[j]·x[i+j] (8 taps), n outputs, then Σ out²;
- rows conv1d: the same convolution of each of 16 rows of n/16, in a map
  over the rows (a row of the map read two maps deeper);
- stencil: the 5-point stencil on a √n × √n grid, edges clamped, then Σ out²;
- embedding bag: n/4 bags of 4 rows of a table of n/4 rows of 8, in a map
  over bags, then Σ tanh(bag)·bag;
- loop gathers: n/8 rows, each a loop of 8 steps acc ← acc/2 + sin(x[path]),
  x of n elements, then Σ acc².

Medians of repeats, primal and gradient called in turn (so that a machine
slowing down during the run shifts both alike), compiled for the CPU, on
one thread (the gradient's
scatter-adds run on one thread; on one thread the ratio is the work ratio),
timed by the CPU time of the calling thread, which runs the compiled code:
time the machine gives to other processes does not count (on a shared
machine, wall times of the same call varied 6-fold from run to run).

    .venv/bin/python bench/cheap_gradient_nested.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/cheap_gradient_nested.py --no-write --sizes 1000 10000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from common import ROOT, alternating_medians, on_one_thread, write_section

import soac

PROGRAM = (ROOT / "examples" / "nested_gathers.mlir").read_text()
TAPS = 8
ROWS = 16
BAG = 4
WIDTH = 8
STEPS = 8


def inputs(name: str, n: int, rng: np.random.Generator) -> tuple:
    """The arguments of program `name` at size n (about n reads of the
    gathered array per call)."""
    if name == "conv1d":
        return rng.standard_normal(n + TAPS - 1), rng.standard_normal(TAPS)
    if name == "rows_conv1d":
        return rng.standard_normal((ROWS, max(n // ROWS, 1) + TAPS - 1)), rng.standard_normal(TAPS)
    if name == "stencil2d":
        side = math.isqrt(n)
        return (rng.standard_normal((side, side)),)
    if name == "embedding_bag":
        rows = max(n // BAG, 1)
        return rng.standard_normal((rows, WIDTH)) * 0.1, rng.integers(0, rows, (rows, BAG)).astype(np.intp)
    if name == "loop_gathers":
        return rng.standard_normal(n), rng.integers(0, n, (max(n // STEPS, 1), STEPS)).astype(np.intp)
    raise ValueError(name)


NAMES = {"conv1d": "conv1d", "rows_conv1d": "rows conv1d", "stencil2d": "stencil", "embedding_bag": "embedding bag", "loop_gathers": "loop gathers"}


def run(sizes: list[int], repeats: int) -> list[tuple]:
    rng = np.random.default_rng(0)
    rows = []
    with on_one_thread():
        for name in NAMES:
            primal = soac.compile(PROGRAM, name)
            gradient = soac.mlir.grad(PROGRAM, name, wrt=[0])
            for n in sizes:
                args = inputs(name, n, rng)
                times = alternating_medians(
                    {"primal": lambda: primal(*args), "gradient": lambda: gradient(*args)}, repeats, time.thread_time)
                t_primal, t_gradient = times["primal"], times["gradient"]
                rows.append((name, n, t_primal, t_gradient))
                print(f"{NAMES[name]:>14}  n = {n:>10,d}  primal {t_primal * 1e3:9.3f} ms  gradient {t_gradient * 1e3:9.3f} ms"
                      f"  ratio {t_gradient / t_primal:5.2f}", flush=True)
    return rows


def markdown(rows, repeats: int) -> str:
    lines = [
        f"Float64, medians of {repeats} runs, primal and gradient called in turn (`bench/cheap_gradient_nested.py`, programs in "
        "`examples/nested_gathers.mlir`), on one thread, in CPU time of that thread; gradient with respect "
        "to the gathered array. "
        f"*conv1d*: {TAPS} taps, n outputs. *rows conv1d*: the same on each of {ROWS} rows of n/{ROWS}, in a map "
        "over the rows. *stencil*: 5 points on a √n × √n grid. "
        f"*embedding bag*: n/{BAG} bags of {BAG} rows of {WIDTH}, table of n/{BAG} rows, in a map over bags. "
        f"*loop gathers*: n/{STEPS} rows, each a loop of {STEPS} reads of x (n elements) in a map. "
        "*flatness*: the largest ratio over the smallest.",
        "",
        "| program | n | primal (ms) | gradient (ms) | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, n, t, g in rows:
        lines.append(f"| {NAMES[name]} | {n:,d} | {t * 1e3:.3f} | {g * 1e3:.3f} | {g / t:.2f} |")
    lines += ["", "| program | ratio, smallest n | ratio, largest n | flatness |", "|---|---:|---:|---:|"]
    for name in NAMES:
        ratios = [g / t for other, _, t, g in rows if other == name]
        if ratios:
            lines.append(f"| {NAMES[name]} | {ratios[0]:.2f} | {ratios[-1]:.2f} | {max(ratios) / min(ratios):.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000, 10_000_000])
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    rows = run(options.sizes, options.repeats)
    table = markdown(rows, options.repeats)
    print()
    print(table)
    if not options.no_write:
        write_section("cheap-gradient-nested", "Reverse mode: cheap gradients of nested reads", table)


if __name__ == "__main__":
    main()
