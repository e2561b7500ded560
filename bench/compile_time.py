"""Compile times: ours against JAX's compile of the same function, and what
the disk cache saves a later process.

* maps nested 1 to 8 deep (sin(x)·x at the bottom), with their vjp;
* the ADBench objectives' value and gradient (bench/adbench);
* vector mode: the jvp of bench/vector_mode.py's program with 1 to 100 lanes;
* a second process loading the deepest nesting and GMM's value and gradient
  from the disk cache;
* MLIR's pass timing (``SOAC_TIMING=1``) of the slowest ones: the passes
  that take the most time.

Ours is timed with the disk cache off and the in-memory caches cleared, as a
first call (tracing, compiling, one run) minus a later call; JAX's the same
way (``jax.jit``, first call minus a later one). Ours twice: as users get
it, large functions starting on their first tier (soac.tiers), with the
time until their parallel code is in; then with the parallel code compiled
before the first call (``SOAC_TIERED=off``). One process, one run.

    .venv/bin/python bench/compile_time.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/compile_time.py --no-write
"""

from __future__ import annotations

import argparse
import collections
import importlib
import logging
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
from common import ROOT, environment, write_section

sys.path.insert(0, str(ROOT / "bench" / "adbench"))

import soac  # noqa: E402

ADBENCH = ("gmm", "lstm", "ba", "hand", "kmeans")
DEPTHS = range(1, 9)
WIDTHS = (1, 10, 25, 50, 100)


def nested_maps(depth: int) -> str:
    """@f: sin(x)·x on every element of a rank-`depth` tensor, by maps nested
    `depth` deep; @g: its vjp."""
    def type_of(rank: int) -> str:
        return "f64" if rank == 0 else "tensor<" + "?x" * rank + "f64>"

    def body(level: int, row: str, indent: str) -> list[str]:
        rank = depth - level
        if rank == 0:
            return [f"{indent}%s = math.sin {row} : f64", f"{indent}%m = arith.mulf %s, {row} : f64",
                    f"{indent}soac.yield %m : f64"]
        lines = [f"{indent}%r{level} = soac.map ins({row} : {type_of(rank)}) -> {type_of(rank)} {{",
                 f"{indent}^bb0(%a{level}: {type_of(rank - 1)}):", *body(level + 1, f"%a{level}", indent + "  ")]
        if rank > 1:
            lines.append(f"{indent}  soac.yield %r{level + 1} : {type_of(rank - 1)}")
        return lines + [f"{indent}}}"]

    t = type_of(depth)
    return "\n".join([
        f"func.func @f(%x: {t}) -> {t} {{", *body(0, "%x", "  "), f"  return %r0 : {t}", "}",
        f"func.func @g(%x: {t}, %c: {t}) -> ({t}, {t}) {{",
        f"  %r:2 = soac.vjp @f(%x, %c) : ({t}, {t}) -> ({t}, {t})",
        f"  return %r#0, %r#1 : {t}, {t}", "}",
    ])


class StageTimes(logging.Handler):
    """The soac pipeline's and LLVM's seconds, summed over the compilations
    logged since the last `take()`."""

    PATTERN = re.compile(r"soac-lower-to-\w+ ([\d.]+) s, LLVM ([\d.]+) s")

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.pipeline = self.llvm = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        match = self.PATTERN.search(record.getMessage())
        if match:
            self.pipeline += float(match.group(1))
            self.llvm += float(match.group(2))

    def take(self) -> tuple[float, float]:
        taken = (self.pipeline, self.llvm)
        self.pipeline = self.llvm = 0.0
        return taken


STAGES = StageTimes()
logging.getLogger("soac").addHandler(STAGES)
logging.getLogger("soac").setLevel(logging.DEBUG)


def first_call(make, args) -> float:
    """Seconds of the first call of `make()` beyond those of a later call."""
    STAGES.take()
    start = time.perf_counter()
    function = make()
    function(*args)
    first = time.perf_counter() - start
    start = time.perf_counter()
    function(*args)
    return max(first - (time.perf_counter() - start), 0.0)


def ours(make, args) -> tuple[float, float, float, float, float]:
    """Our compile of `make()`, from empty in-memory caches: as users get it
    (large functions start on sequential code, soac.tiers), with the
    pipeline's and LLVM's seconds of that first compile, and the seconds
    until the parallel code was ready (from the start of the first call);
    then with the parallel code compiled before the first call
    (SOAC_TIERED=off)."""
    soac.clear_caches()
    with environment(SOAC_TIERED="on"):
        start = time.perf_counter()
        tiered = first_call(make, args)
        stages = STAGES.take()
        soac.wait_for_background_compiles()
        ready = time.perf_counter() - start
    soac.clear_caches()
    with environment(SOAC_TIERED="off"):
        at_once = first_call(make, args)
    STAGES.take()
    return (tiered, *stages, ready, at_once)


def jax_available() -> bool:
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def nesting_rows(with_jax: bool) -> list[tuple]:
    rows = []
    for depth in DEPTHS:
        x = np.random.default_rng(0).standard_normal((3,) * depth)
        times = ours(lambda: soac.compile(nested_maps(depth), "g"), (x, x))
        theirs = None
        if with_jax:
            import jax
            import jax.numpy as jnp

            def f(v):
                return jnp.sin(v) * v

            for _ in range(depth):
                f = jax.vmap(f)

            def g(v, c, f=f):
                value, pullback = jax.vjp(f, v)
                return value, pullback(c)[0]

            theirs = first_call(lambda: jax.jit(g), (x, x))
        rows.append((f"maps nested {depth} deep, vjp", *times, theirs))
        print(rows[-1], flush=True)
    return rows


def adbench_rows(with_jax: bool) -> list[tuple]:
    rows = []
    for name in ADBENCH:
        module = importlib.import_module(name)
        inputs = module.inputs(**module.SIZES["small"])
        fn, args = module.soac_version(*inputs)
        times = ours(lambda: soac.value_and_grad(fn, argnums=tuple(module.WRT)), args)
        theirs = None
        if with_jax:
            import jax

            f, jax_args = module.jax_version(*inputs)
            gradient = jax.value_and_grad(f, argnums=module.WRT)
            theirs = first_call(lambda: (lambda *a, g=jax.jit(gradient): jax.block_until_ready(g(*a))), jax_args)
        rows.append((f"ADBench {module.NAME}, value and gradient", *times, theirs))
        print(rows[-1], flush=True)
    return rows


def vector_mode_rows() -> list[tuple]:
    import vector_mode

    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((100, 100)), rng.standard_normal(100)
    rows = []
    for width in WIDTHS:
        times = ours(lambda: soac.mlir.jacfwd(vector_mode.PROGRAM, "f", wrt=1, width=width), (A, x))
        rows.append((f"vector mode, jvp of width {width}", *times, None))
        print(rows[-1], flush=True)
    return rows


# Run in a fresh process, twice, with one cache directory: the second loads.
CACHED = textwrap.dedent(
    """
    import sys, time
    sys.path[:0] = [{bench!r}, {adbench!r}]
    import numpy as np
    import soac
    import compile_time, gmm
    x = np.ones((3,) * 8)
    start = time.perf_counter()
    soac.compile(compile_time.nested_maps(8), "g")(x, x)
    nested = time.perf_counter() - start
    fn, args = gmm.soac_version(*gmm.inputs(**gmm.SIZES["small"]))
    start = time.perf_counter()
    soac.value_and_grad(fn, argnums=(0, 1, 2))(*args)
    print(nested, time.perf_counter() - start)
    soac.wait_for_background_compiles()  # their parallel code too goes into the cache
    """
)


def cache_rows() -> list[tuple[str, float, float]]:
    """Per program: the first process's time (compiling), the second's (loading)."""
    script = CACHED.format(bench=str(ROOT / "bench"), adbench=str(ROOT / "bench" / "adbench"))
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SOAC_CACHE": "on", "SOAC_CACHE_DIR": cache, "SOAC_TIERED": "on"}
        runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
                for _ in range(2)]
    (nested_first, gmm_first), (nested_second, gmm_second) = [map(float, r.stdout.split()) for r in runs]
    rows = [("maps nested 8 deep, vjp: compile + first call", nested_first, nested_second),
            ("ADBench GMM value and gradient: trace + compile + first call", gmm_first, gmm_second)]
    print(rows, flush=True)
    return rows


TIMED = textwrap.dedent(
    """
    import sys
    sys.path[:0] = [{bench!r}, {adbench!r}]
    import soac, importlib, compile_time
    if {name!r} == "nested":
        soac.compile(compile_time.nested_maps(8), "g")
    else:
        m = importlib.import_module({name!r})
        fn, args = m.soac_version(*m.inputs(**m.SIZES["small"]))
        soac.value_and_grad(fn, argnums=tuple(m.WRT))(*args)
    """
)
PASS_LINE = re.compile(r"^\s+[\d.]+ \(\s*[\d.]+%\)\s+([\d.]+) \(\s*[\d.]+%\)\s+(\S.*)$")


def pass_timing(name: str, top: int = 4) -> tuple[float, list[tuple[str, float]]]:
    """The pipeline's wall time and its `top` passes (summed over their
    runs), from MLIR's timing report of a fresh process."""
    script = TIMED.format(bench=str(ROOT / "bench"), adbench=str(ROOT / "bench" / "adbench"), name=name)
    env = {**os.environ, "SOAC_TIMING": "1", "SOAC_CACHE": "off"}
    report = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stderr
    passes: dict[str, float] = collections.defaultdict(float)
    total = 0.0
    for line in report.splitlines():
        match = PASS_LINE.match(line)
        if not match:
            continue
        seconds, pass_name = float(match.group(1)), match.group(2).strip()
        if pass_name == "Total":
            total += seconds
        elif not pass_name.startswith(("'", "Pipeline Collection", "(A)", "Rest")):
            passes[pass_name] += seconds
    return total, sorted(passes.items(), key=lambda item: -item[1])[:top]


def markdown(rows, cached, timings) -> str:
    lines = [
        "Seconds, one run on this machine (`bench/compile_time.py`), the disk cache off: *ours* is "
        "a first call minus a later one (tracing, the pipeline, LLVM) as users get it, large functions "
        "starting on sequential code (`soac.tiers`), with its soac pipeline and LLVM seconds; *parallel "
        "ready*: seconds from that first call until the parallel code compiled in the background was "
        "in; *parallel first*: the first call with the parallel code compiled before it "
        "(`SOAC_TIERED=off`, what every compile did before); JAX's `jax.jit` as *ours*.",
        "",
        "| program | ours (s) | of which soac pipeline (s) | LLVM (s) | parallel ready (s) "
        "| parallel first (s) | JAX (s) | ours / JAX |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, tiered, pipeline, llvm, ready, at_once, theirs in rows:
        jax_text = "–" if theirs is None else f"{theirs:.2f}"
        ratio = "–" if not theirs else f"{tiered / theirs:.2f}"
        lines.append(f"| {label} | {tiered:.2f} | {pipeline:.2f} | {llvm:.2f} | {ready:.2f} | {at_once:.2f} "
                     f"| {jax_text} | {ratio} |")
    lines += ["", "A later process, the disk cache holding the code (`SOAC_CACHE_DIR`):", "",
              "| program | first process (s) | second process (s) |", "|---|---:|---:|"]
    lines += [f"| {label} | {first:.2f} | {second:.3f} |" for label, first, second in cached]
    lines += ["", "Where the pipeline's time goes (`SOAC_TIMING=1`: MLIR's pass timing, summed per pass):", "",
              "| program | pipeline (s) | slowest passes (s) |", "|---|---:|---|"]
    for name, (total, passes) in timings.items():
        lines.append(f"| {name} | {total:.2f} | {', '.join(f'{p} {s:.2f}' for p, s in passes)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    options = parser.parse_args()
    os.environ["SOAC_CACHE"] = "off"  # every compilation of this process is timed from scratch
    with_jax = not options.no_jax and jax_available()
    rows = nesting_rows(with_jax) + adbench_rows(with_jax) + vector_mode_rows()
    cached = cache_rows()
    timings = {"maps nested 8 deep, vjp": pass_timing("nested")}
    timings.update({f"ADBench {name}": pass_timing(name) for name in ("gmm", "hand")})
    table = markdown(rows, cached, timings)
    print()
    print(table)
    if not options.no_write:
        write_section("compile-time", "Compile time", table)


if __name__ == "__main__":
    main()
