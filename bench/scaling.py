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
    .venv/bin/python bench/scaling.py --bundle build/scaling-bundle

``--bundle DIR`` writes the same programs as shared libraries into DIR,
with a runner that needs only python3 and numpy (tools/scaling_bundle/run.py),
for a machine with more cores than this one where soac cannot be installed
(the GPU machine's CPU: docs/gpu.md).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "adbench")]
from common import ROOT, write_section  # noqa: E402
from scaling_table import markdown, thread_counts  # noqa: E402
from soac_cases import cases as soac_cases  # noqa: E402
from run import MODULES, settle, timed  # noqa: E402

import soac  # noqa: E402
import soac.numpy as snp  # noqa: E402
from soac.runtime import aot  # noqa: E402

PROGRAMS = (ROOT / "examples" / "soacs.mlir").read_text()


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


# Entries of each ADBench output the bundle's runner compares.
SAMPLED_ENTRIES = 1000


def sampled(outputs) -> list[dict]:
    """Up to SAMPLED_ENTRIES entries of each output (value, then gradients),
    at seeded positions: what the bundle checks a run against."""
    rng = np.random.default_rng(0)
    samples = []
    for output in outputs:
        flat = np.asarray(output, np.float64).reshape(-1)
        positions = np.sort(rng.choice(flat.size, min(flat.size, SAMPLED_ENTRIES), replace=False))
        samples.append({"positions": positions.tolist(), "values": flat[positions].tolist()})
    return samples


def write_bundle(out: pathlib.Path) -> None:
    """Every program of the table as a shared library under ``out`` (one
    directory each: their functions share names), the runner, the modules
    that make its inputs, soac's standalone loader and a manifest."""
    tools = ROOT / "tools" / "scaling_bundle"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(tools, out, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("soac_cases.py", "scaling_table.py"):
        shutil.copy2(ROOT / "bench" / name, out / name)
    (out / "adbench").mkdir()
    for name in (*(m.__name__ for m in MODULES), "peers"):
        shutil.copy2(ROOT / "bench" / "adbench" / f"{name}.py", out / "adbench" / f"{name}.py")
    aot.copy_loader(out)
    programs = []

    def compile_into(directory: str, module, function: str) -> str:
        soac.compile(module, function, emit="shared-lib", output=out / "libraries" / directory)
        return f"libraries/{directory}/lib{function}.so"

    for name, function, *_ in soac_cases(1, np.random.default_rng(0)):
        programs.append({"name": name, "kind": "soac", "function": function,
                         "library": compile_into(function, PROGRAMS, function)})
    for module in MODULES:
        fn, args = module.soac_version(*module.inputs(**module.SIZES["large"]))
        gradient = soac.value_and_grad(fn, argnums=tuple(module.WRT))
        traced = gradient.trace(*args)
        value, gradients = gradient(*args)
        programs.append({"name": f"{module.NAME} gradient (large)", "kind": "adbench", "module": module.__name__,
                         "function": traced.name, "library": compile_into(module.__name__, traced.module, traced.name),
                         "expected": sampled([value, *gradients])})
    square = np.zeros((1024, 1024))
    traced = soac.jit(lambda x, y: snp.matmul(x, y)).trace(square, square)
    programs.append({"name": "matmul 1024² f64 (soac.matmul: OpenBLAS)", "kind": "matmul", "function": traced.name,
                     "library": compile_into("matmul", traced.module, traced.name)})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    (out / "manifest.json").write_text(json.dumps({"commit": commit.strip() or "unknown", "programs": programs}))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"{out}: {len(programs)} programs, {size / 2**20:.1f} MiB; run there: python3 run.py OUTDIR")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--bundle", type=pathlib.Path, metavar="DIR", help="write the scaling bundle into DIR")
    options = parser.parse_args()
    if options.bundle:
        write_bundle(options.bundle)
        return
    counts = thread_counts(os.cpu_count() or 1)
    rows = measure(options.n, counts)
    if not options.no_write:
        write_section("scaling", "Strong scaling on the CPU", markdown(rows, counts, options.n, "`bench/scaling.py`"))


if __name__ == "__main__":
    main()
