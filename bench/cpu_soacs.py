"""CPU benchmark of every SOAC against numpy, side by side in one run.

For n = 1e7 float32 elements: map (saxpy), reduce (sum), reduce . map (sum of
squares, fused into one pass), scan (cumsum), reduce_by_index (1e7 values into
1000 bins) and scatter (a permutation). Each is timed as the median of repeats,
with soac on all cores and on one thread, next to numpy's idiomatic equivalent.
Results are checked against numpy before timing.

    .venv/bin/python bench/cpu_soacs.py            # prints the table, updates docs/benchmarks.md
    .venv/bin/python bench/cpu_soacs.py --n 100000 --no-write
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from common import ROOT, median_seconds, write_section
from scaling_table import cpu_model
from soac_cases import cases, relative_error

import soac

PROGRAMS = (ROOT / "examples" / "soacs.mlir").read_text()


def run(n: int, repeats: int) -> list[dict]:
    rng = np.random.default_rng(0)
    threads = soac.get_num_threads()
    rows = []
    for name, function, args, numpy_expression, numpy_call, rtol in cases(n, rng):
        compiled = soac.compile(PROGRAMS, function)
        error = relative_error(compiled(*args), numpy_call())
        if error > rtol:
            raise SystemExit(f"{name}: soac differs from numpy (relative error {error:.2e} > {rtol})")
        numpy_time = median_seconds(numpy_call, repeats)
        soac.set_num_threads(threads)
        all_cores = median_seconds(lambda: compiled(*args), repeats)
        soac.set_num_threads(1)
        one_thread = median_seconds(lambda: compiled(*args), repeats)
        soac.set_num_threads(threads)
        rows.append(
            dict(name=name, numpy_expression=numpy_expression, numpy=numpy_time, soac=all_cores, soac_1=one_thread)
        )
        print(
            f"{name:32s} numpy {numpy_time * 1e3:8.2f} ms   soac {all_cores * 1e3:8.2f} ms "
            f"({threads} threads)   {one_thread * 1e3:8.2f} ms (1 thread)",
            flush=True,
        )
    return rows


def markdown(rows: list[dict], n: int, repeats: int) -> str:
    threads = soac.get_num_threads()
    lines = [
        f"n = {n:.0e} float32 elements; median of {repeats} runs after a warm-up; "
        f"{os.cpu_count()} logical cores ({cpu_model()}), "
        f"numpy {np.__version__}. Measured by `bench/cpu_soacs.py` in one run.",
        "",
        f"| operation | numpy expression | numpy (ms) | soac, {threads} threads (ms) | soac, 1 thread (ms) "
        "| numpy / soac | 2nd-core speed-up |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | `{r['numpy_expression']}` | {r['numpy'] * 1e3:.2f} | {r['soac'] * 1e3:.2f} | "
            f"{r['soac_1'] * 1e3:.2f} | {r['numpy'] / r['soac']:.2f}x | {r['soac_1'] / r['soac']:.2f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000, help="elements per array (default 1e7)")
    parser.add_argument("--repeats", type=int, default=11, help="timed runs per measurement (default 11)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    options = parser.parse_args()
    rows = run(options.n, options.repeats)
    table = markdown(rows, options.n, options.repeats)
    print()
    print(table)
    if not options.no_write:
        write_section("cpu-soacs", "CPU: SOACs against numpy", table)


if __name__ == "__main__":
    main()
