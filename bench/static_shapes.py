"""Sizes in the code or sizes at run time: the ADBench value-and-gradient
functions traced with dynamic sizes (`soac.jit`'s default: one compilation
for every size) and with static ones (`soac.jit(..., static_shapes=True)`:
one compilation per set of shapes, as `jax.jit` does). Compile time (trace,
lower, LLVM, first call; disk cache off) and run time (one thread, medians
of rounds alternating the two, CPU time of the calling thread), in one
process.

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

sys.path.insert(0, str(ROOT / "bench" / "adbench"))
ADBENCH = ("gmm", "lstm", "hand", "ba", "kmeans")


def compiled(fn, args, wrt, static: bool):
    """The jitted value and gradient, and the seconds its first call took."""
    function = soac.jit(soac.value_and_grad(fn, argnums=wrt), static_shapes=static)
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
                dynamic, compile_dynamic = compiled(fn, args, wrt, static=False)
                static, compile_static = compiled(fn, args, wrt, static=True)
                value_dynamic, value_static = dynamic(*args)[0], static(*args)[0]
                if not np.isclose(value_dynamic, value_static, rtol=1e-10):
                    raise SystemExit(f"{module.NAME} ({size}): the two traces disagree")
                times = alternating_medians({"dynamic": lambda: dynamic(*args), "static": lambda: static(*args)},
                                            rounds, time.thread_time)
                rows.append((f"{module.NAME} ({size})", compile_dynamic, compile_static, times["dynamic"], times["static"]))
                print(f"{module.NAME} ({size}): compile {compile_dynamic:.2f} / {compile_static:.2f} s, "
                      f"run {times['dynamic'] * 1e3:.3f} / {times['static'] * 1e3:.3f} ms", flush=True)
    return rows


def markdown(rows, rounds: int) -> str:
    lines = [
        f"Float64 value and gradient (`bench/static_shapes.py`): compile = the first call (trace, lower, LLVM; disk "
        f"cache off; a dynamic trace compiled for the small size serves the large one, so its large row shows a "
        f"call); run = one thread, medians of {rounds} rounds alternating the two, CPU time of the calling thread.",
        "",
        "| program | compile, dynamic (s) | compile, static (s) | run, dynamic (ms) | run, static (ms) | static / dynamic (run) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, c_dynamic, c_static, t_dynamic, t_static in rows:
        lines.append(f"| {label} | {c_dynamic:.2f} | {c_static:.2f} | {t_dynamic * 1e3:.3f} | {t_static * 1e3:.3f} "
                     f"| {t_static / t_dynamic:.2f} |")
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
