"""What the run-time checks of compiled code cost: every ADBench value and
gradient, the SOAC benchmarks of cpu_soacs.py and two gathers, each compiled
twice, with the index checks (the default) and without them
(``CpuOptions(check_indices=False)``), and timed in turn in one run (medians
of rounds, as bench/adbench/run.py times the tools). Allocation and size
checks stay in both builds: they cannot be turned off, and cost a compare per
allocation.

    .venv/bin/python bench/check_costs.py              # updates docs/benchmarks.md
    .venv/bin/python bench/check_costs.py --sizes small --no-write
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "adbench")]
from common import ROOT, write_section  # noqa: E402
from run import MODULES, timed_in_turn  # noqa: E402

import soac  # noqa: E402

CHECKED = soac.compiler.CpuOptions()
UNCHECKED = soac.compiler.CpuOptions(check_indices=False)
PROGRAMS = (ROOT / "examples" / "soacs.mlir").read_text()
GATHERS = """
func.func @gather(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> tensor<?xf64> {
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    soac.yield %v : f64
  }
  return %r : tensor<?xf64>
}

func.func @window_sums(%x: tensor<?xf64>, %starts: tensor<?xindex>, %width: index) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%starts : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%s: index):
    %w = tensor.extract_slice %x[%s] [%width] [1] : tensor<?xf64> to tensor<?xf64>
    %t = soac.reduce ins(%w : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %u = arith.addf %a, %b : f64
      soac.yield %u : f64
    }
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}
"""


def adbench_cases(sizes: list[str]):
    """(name, checked call, unchecked call) for each ADBench value and gradient."""
    for module in MODULES:
        for size in sizes:
            fn, args = module.soac_version(*module.inputs(**module.SIZES[size]))
            calls = []
            for options in (CHECKED, UNCHECKED):
                gradient = soac.value_and_grad(fn, argnums=tuple(module.WRT), options=options)
                gradient(*args)  # compiles
                calls.append(lambda gradient=gradient: gradient(*args))
            yield f"{module.NAME} gradient ({size})", *calls


def program_cases(n: int, rng: np.random.Generator):
    """(name, checked call, unchecked call) for the SOAC benchmarks and gathers."""
    from soac_cases import cases

    for name, function, args, *_ in cases(n, rng):
        checked, unchecked = (soac.compile(PROGRAMS, function, options=o) for o in (CHECKED, UNCHECKED))
        yield name, lambda f=checked, a=args: f(*a), lambda f=unchecked, a=args: f(*a)
    x = rng.standard_normal(n)
    gathers = {
        "gather (random indices)": ("gather", (x, rng.integers(0, n, n))),
        "slices (window sums, width 8)": ("window_sums", (x, rng.integers(0, n - 8, n // 8), 8)),
    }
    for name, (function, args) in gathers.items():
        checked, unchecked = (soac.compile(GATHERS, function, options=o) for o in (CHECKED, UNCHECKED))
        np.testing.assert_array_equal(checked(*args), unchecked(*args))
        yield name, lambda f=checked, a=args: f(*a), lambda f=unchecked, a=args: f(*a)


def measure(cases) -> list[tuple[str, float, float]]:
    rows = []
    for name, checked, unchecked in cases:
        times = timed_in_turn({"checked": checked, "unchecked": unchecked})
        rows.append((name, times["checked"], times["unchecked"]))
        print(f"{name:40s} checked {times['checked'] * 1e3:9.3f} ms  unchecked {times['unchecked'] * 1e3:9.3f} ms  "
              f"ratio {times['checked'] / times['unchecked']:.3f}", flush=True)
    return rows


def markdown(rows: list[tuple[str, float, float]], threads: int, n: int) -> str:
    lines = [
        f"Measured by `bench/check_costs.py` on {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{threads} thread(s); SOAC benchmarks at n = {n:,}. Medians of calls taken in turn; the ratio is "
        "checked / unchecked (1.00 = no cost).",
        "",
        "| program | with index checks (ms) | without (ms) | ratio |",
        "|---|---|---|---|",
    ]
    lines += [f"| {name} | {c * 1e3:.3f} | {u * 1e3:.3f} | {c / u:.2f} |" for name, c, u in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="*", default=["small", "large"])
    parser.add_argument("--n", type=int, default=10_000_000, help="elements of the SOAC benchmarks")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    soac.set_num_threads(options.threads)
    rng = np.random.default_rng(0)
    rows = measure(adbench_cases(options.sizes)) + measure(program_cases(options.n, rng))
    if not options.no_write:
        write_section("check-costs", "What the run-time checks cost", markdown(rows, options.threads, options.n))


if __name__ == "__main__":
    main()
