"""Sizes in the code or sizes at run time: the ADBench value-and-gradient
functions traced three ways, in one process:

- every size dynamic (``soac.jit(..., static_inner_sizes_up_to=0)``): one
  compilation for every size;
- the default: inner sizes up to 16 (the 3s and 4s of points and
  transforms, GMM's 10 coordinates) static, the others dynamic;
- every size static (``soac.jit(..., static_shapes=True)``): one compilation
  per set of shapes, as ``jax.jit`` does.

Compile time (trace, lower, LLVM, first call; disk cache off) and run time
(one thread, medians of rounds alternating the three, CPU time of the
calling thread).

    .venv/bin/python bench/static_shapes.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/static_shapes.py --no-write --only hand
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

import numpy as np
from common import ROOT, alternating_medians, on_one_thread, write_section

import soac
from soac import compiler
from soac.frontend import tracing

sys.path.insert(0, str(ROOT / "bench" / "adbench"))
ADBENCH = ("gmm", "lstm", "hand", "ba", "kmeans")


# How each column traces: soac.jit's keyword arguments.
MODES = {
    "every size dynamic": dict(static_inner_sizes_up_to=0),
    "default": dict(),
    "every size static": dict(static_shapes=True),
}


def compiled(fn, args, wrt, mode: dict):
    """The jitted value and gradient, and the seconds its first call took."""
    function = soac.jit(soac.value_and_grad(fn, argnums=wrt), **mode)
    # Where two modes trace the same IR, the second would find the first's
    # code in soac.compile's cache (the functions keep theirs).
    compiler.clear_jit_cache()
    start = time.perf_counter()
    function(*args)
    return function, time.perf_counter() - start


def run(rounds: int, only: list[str]) -> list[tuple]:
    rows = []
    with on_one_thread():
        for name in ADBENCH:
            if only and name not in only:
                continue
            module = importlib.import_module(name)
            for size in module.SIZES:
                fn, args = module.soac_version(*module.inputs(**module.SIZES[size]))
                wrt = tuple(module.WRT)
                functions, compile_times = {}, {}
                for mode, keywords in MODES.items():
                    functions[mode], compile_times[mode] = compiled(fn, args, wrt, keywords)
                values = [function(*args)[0] for function in functions.values()]
                if not np.allclose(values, values[0], rtol=1e-10):
                    raise SystemExit(f"{module.NAME} ({size}): the traces disagree: {values}")
                times = alternating_medians({mode: (lambda f=f: f(*args)) for mode, f in functions.items()},
                                            rounds, time.thread_time)
                rows.append((f"{module.NAME} ({size})", compile_times, times))
                print(f"{module.NAME} ({size}): " + ", ".join(
                    f"{mode} {compile_times[mode]:.2f} s / {times[mode] * 1e3:.3f} ms" for mode in MODES), flush=True)
    return rows


def markdown(rows, rounds: int) -> str:
    modes = list(MODES)
    lines = [
        f"Float64 value and gradient (`bench/static_shapes.py`): compile = the first call of a newly jitted function "
        f"(trace, lower, LLVM; disk cache off, soac.compile's cache cleared); run = one "
        f"thread, medians of {rounds} rounds alternating the three, CPU time of the calling thread. *Default*: inner "
        f"sizes up to {tracing.SMALL_INNER_SIZE} static, the others dynamic.",
        "",
        "| program | " + " | ".join(f"compile, {mode} (s)" for mode in modes) + " | "
        + " | ".join(f"run, {mode} (ms)" for mode in modes) + " | default / every size dynamic (run) "
        "| every size static / every size dynamic (run) |",
        "|---|" + "---:|" * (2 * len(modes) + 2),
    ]
    for label, compile_times, times in rows:
        dynamic = times[modes[0]]
        lines.append(f"| {label} | " + " | ".join(f"{compile_times[mode]:.2f}" for mode in modes) + " | "
                     + " | ".join(f"{times[mode] * 1e3:.3f}" for mode in modes)
                     + f" | {times['default'] / dynamic:.2f} | {times['every size static'] / dynamic:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", nargs="*", default=[], help=f"objectives among {', '.join(ADBENCH)}")
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    os.environ["SOAC_CACHE"] = "off"  # compile times, not loads from the disk cache
    rows = run(options.rounds, options.only)
    table = markdown(rows, options.rounds)
    print()
    print(table)
    if not options.no_write and not options.only:
        write_section("static-shapes", "Static shapes against dynamic ones", table)


if __name__ == "__main__":
    main()
