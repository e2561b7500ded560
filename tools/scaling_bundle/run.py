"""Strong scaling of soac's CPU code on a machine without soac: the programs
of bench/scaling.py compiled here into shared libraries (`bench/scaling.py
--bundle DIR` writes this directory), run there with python3 and numpy.

    python3 run.py OUTDIR               # OUTDIR/results.json and results.md
    python3 run.py OUTDIR --n 1000000 --budget 120

Each program runs at 1, 2, 4, ... threads up to every core, each count in a
process of its own (OMP_NUM_THREADS set to it, and OPENBLAS_NUM_THREADS for
the matrix product, so that no spinning worker of another count or library
takes a core), on the inputs
bench/scaling.py makes (made here from the same seeds: the SOAC benchmarks
by soac_cases.py, ADBench's large size by its modules in adbench/), checked
against numpy (the SOAC benchmarks, the matrix product) or against entries
of the outputs the CPU build computed where the bundle was made (ADBench),
then timed: the median of as many calls as fit about a second.

Exit status: 0 when every run passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
import types

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "adbench")]

from scaling_table import markdown, thread_counts  # noqa: E402
from soac_cases import cases, relative_error  # noqa: E402

CALLS_BUDGET_S = 1.0
CHILD_TIMEOUT_S = 120
# Largest difference from the CPU build's sampled outputs, over their
# largest magnitude: threads may add in another order.
ADBENCH_RTOL = 1e-8


class _Absent(types.ModuleType):
    def __getattr__(self, name):
        raise AttributeError(f"soac.{name}: soac is not in the bundle; its compiled libraries are")


def adbench_module(name: str):
    """A bench/adbench module, whose soac half (never called here) imports a
    placeholder for soac."""
    for placeholder in ("soac", "soac.numpy"):
        sys.modules.setdefault(placeholder, _Absent(placeholder))
    sys.modules["soac"].numpy = sys.modules["soac.numpy"]
    return importlib.import_module(name)


def inputs_and_check(program: dict, n: int):
    """The arguments of ``program`` and a function telling why its outputs
    are wrong (None when they are right)."""
    if program["kind"] == "soac":
        for _, function, args, _, numpy_call, rtol in cases(n, np.random.default_rng(0)):
            if function == program["function"]:
                def check(outputs, call=numpy_call, rtol=rtol):
                    error = relative_error(outputs[0], call())
                    return None if error <= rtol else f"differs from numpy: relative error {error:.2e} > {rtol}"
                return args, check
        raise KeyError(program["function"])
    if program["kind"] == "matmul":
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((1024, 1024)), rng.standard_normal((1024, 1024))

        def check(outputs):
            error = relative_error(outputs[0], a @ b)
            return None if error <= 1e-10 else f"differs from numpy: relative error {error:.2e}"
        return (a, b), check
    module = adbench_module(program["module"])
    _, args = module.soac_version(*module.inputs(**module.SIZES["large"]))

    def check(outputs):
        for i, (output, sample) in enumerate(zip(outputs, program["expected"], strict=True)):
            got = np.asarray(output, np.float64).reshape(-1)[sample["positions"]]
            error = relative_error(got, sample["values"])
            if error > ADBENCH_RTOL:
                return f"output {i} differs from the CPU build's: relative error {error:.2e}"
        return None
    return args, check


def child(name: str, n: int) -> None:
    """One program at the thread count of this process: a JSON line."""
    import soac_runtime

    manifest = json.loads((HERE / "manifest.json").read_text())
    program = next(p for p in manifest["programs"] if p["name"] == name)
    function = getattr(soac_runtime.load_library(str(HERE / program["library"])), program["function"])
    args, check = inputs_and_check(program, n)
    outputs = function(*args)
    problem = check(outputs if isinstance(outputs, tuple) else (outputs,))

    def seconds() -> float:
        began = time.perf_counter()
        function(*args)
        return time.perf_counter() - began

    once = seconds()
    calls = int(np.clip(CALLS_BUDGET_S / max(once, 1e-9), 1, 21))
    median = statistics.median(seconds() for _ in range(calls))
    print(json.dumps({"seconds": median, "calls": calls, "passed": problem is None, "problem": problem}), flush=True)


def run_child(program: dict, threads: int, n: int) -> dict:
    # OpenBLAS's threads spin after numpy's own work (making inputs) and take
    # cores from OpenMP's: only the matrix product, which calls it, has them.
    blas = threads if program["kind"] == "matmul" else 1
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(blas)}
    name = program["name"]
    try:
        done = subprocess.run([sys.executable, __file__, "--child", name, str(n)], capture_output=True, text=True,
                              env=env, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"passed": False, "problem": f"timed out after {CHILD_TIMEOUT_S} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"passed": False, "problem": f"exit status {done.returncode}: {' | '.join(tail)}"}
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", nargs="?")
    parser.add_argument("--n", type=int, default=10_000_000, help="elements of the SOAC benchmarks")
    parser.add_argument("--budget", type=float, default=240, help="seconds for all runs; later ones are skipped")
    parser.add_argument("--child", nargs=2, metavar=("PROGRAM", "N"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child[0], int(options.child[1]))
        return 0
    if options.outdir is None:
        parser.error("OUTDIR is needed")
    manifest = json.loads((HERE / "manifest.json").read_text())
    counts = thread_counts(os.cpu_count() or 1)
    deadline = time.monotonic() + options.budget
    runs = []
    for program in manifest["programs"]:
        for threads in counts:
            if time.monotonic() > deadline:
                result = {"passed": False, "problem": "skipped: out of time"}
            else:
                result = run_child(program, threads, options.n)
            runs.append({"name": program["name"], "threads": threads, **result})
            print(f"  {program['name']} on {threads} thread(s): "
                  + (f"{result['seconds'] * 1e3:.3f} ms" if result["passed"] else result["problem"]), flush=True)
    rows = [(p["name"], {r["threads"]: r["seconds"] for r in runs if r["name"] == p["name"] and r["passed"]})
            for p in manifest["programs"]]
    rows = [(name, times) for name, times in rows if 1 in times]
    text = markdown(rows, counts, options.n, f"the scaling bundle (built from commit {manifest['commit']})")
    problems = [f"- {r['name']} on {r['threads']} thread(s): {r['problem']}" for r in runs if not r["passed"]]
    text += "\n\n" + ("\n".join(problems) if problems else "Every run passed its check.") + "\n"
    out = pathlib.Path(options.outdir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"counts": counts, "n": options.n, "runs": runs}, indent=1))
    (out / "results.md").write_text(text)
    print(text)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
