"""Strong scaling on the CPU: the same programs on the same inputs with 1,
2, 4, ... threads, up to every core of the machine. The SOAC benchmarks of
cpu_soacs.py (n = 1e7), every ADBench gradient at its large size, and a
1024² float64 matrix product (soac.matmul: numpy's OpenBLAS, given the same
number of threads). Each program is timed at each thread count in turn
(medians of as many calls as fit a budget, bench/adbench/run.py's
``timed``), after the previous count's idle OpenMP workers have stopped
spinning: interleaving the counts call by call let those spinning workers
take a core from the next calls. The table gives each time and its
speedup over one thread.

    .venv/bin/python bench/scaling.py              # updates docs/benchmarks.md
    .venv/bin/python bench/scaling.py --n 1000000 --no-write
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "adbench")]
from common import ROOT, write_section  # noqa: E402
from cpu_soacs import cases as soac_cases, cpu_model  # noqa: E402
from run import MODULES, settle, timed  # noqa: E402

import soac  # noqa: E402
import soac.numpy as snp  # noqa: E402

PROGRAMS = (ROOT / "examples" / "soacs.mlir").read_text()


def thread_counts(cores: int) -> list[int]:
    """1, 2, 4, ... below ``cores``, then ``cores``."""
    counts = [1]
    while counts[-1] * 2 < cores:
        counts.append(counts[-1] * 2)
    return counts + [cores] if cores > 1 else counts


def blas_threads():
    """Sets the threads of numpy's OpenBLAS (which soac.matmul calls), or
    None where numpy has another BLAS."""
    libraries = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for name in sorted(os.listdir(libraries)) if os.path.isdir(libraries) else []:
        if name.startswith("libscipy_openblas64_"):
            setter = getattr(ctypes.CDLL(os.path.join(libraries, name)), "scipy_openblas_set_num_threads64_", None)
            if setter is not None:
                return lambda count: setter(ctypes.c_int(count))
    return None


def programs(n: int):
    """(name, call) of every program, compiled and run once."""
    rng = np.random.default_rng(0)
    for name, function, args, *_ in soac_cases(n, rng):
        compiled = soac.compile(PROGRAMS, function)
        yield name, lambda f=compiled, a=args: f(*a)
    for module in MODULES:
        fn, args = module.soac_version(*module.inputs(**module.SIZES["large"]))
        gradient = soac.value_and_grad(fn, argnums=tuple(module.WRT))
        yield f"{module.NAME} gradient (large)", lambda g=gradient, a=args: g(*a)
    a, b = rng.standard_normal((1024, 1024)), rng.standard_normal((1024, 1024))
    product = soac.jit(lambda x, y: snp.matmul(x, y))
    yield "matmul 1024² f64 (soac.matmul: OpenBLAS)", lambda: product(a, b)


def measure(n: int, counts: list[int]) -> list[tuple[str, dict[int, float]]]:
    set_blas = blas_threads()

    rows = []
    for name, call in programs(n):
        times = {}
        for count in counts:
            soac.set_num_threads(count)
            if set_blas is not None:
                set_blas(count)
            settle()
            times[count] = timed(call)
        rows.append((name, times))
        print(f"{name:44s} " + "  ".join(f"{c} thr {times[c] * 1e3:9.3f} ms ({times[1] / times[c]:4.2f}x)"
                                         for c in counts), flush=True)
    soac.set_num_threads(counts[-1])
    if set_blas is not None:
        set_blas(counts[-1])
    return rows


def markdown(rows: list[tuple[str, dict[int, float]]], counts: list[int], n: int) -> str:
    header = "| program | " + " | ".join(f"{c} thread{'s' if c > 1 else ''} (ms, speedup)" for c in counts) + " |"
    lines = [
        f"Measured by `bench/scaling.py` on {cpu_model()} ({platform.machine()}), {os.cpu_count()} cores; "
        f"SOAC benchmarks at n = {n:,}, ADBench gradients at their large size. Medians of calls "
        "at each thread count in turn; the speedup is over one thread.",
        "",
        header,
        "|---|" + "---|" * len(counts),
    ]
    for name, times in rows:
        cells = [f"{times[c] * 1e3:.3f} ({times[1] / times[c]:.2f}×)" for c in counts]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    counts = thread_counts(os.cpu_count() or 1)
    rows = measure(options.n, counts)
    if not options.no_write:
        write_section("scaling", "Strong scaling on the CPU", markdown(rows, counts, options.n))


if __name__ == "__main__":
    main()
