"""The ADBench objectives (GMM, D-LSTM, BA, HAND, k-means) timed side by side:
ours (soac.jit of the objective, soac.jit'ed soac.value_and_grad), JAX
(jax.jit of the objective and of jax.value_and_grad) and PyTorch (eager,
a forward pass then torch.autograd.grad), on the same float64 inputs, at two
sizes each. Every tool runs on one thread, as Futhark's published
overheads were measured, and because timings with two threads on this shared
2-core machine depend on whatever else runs; ours is also timed on all
threads. Every result is checked against the numpy oracle (small size)
and against JAX (both sizes) before it is timed. The one-thread timings are
taken in rounds in which every tool runs in turn (a burst of calls each),
so that the slower and faster spells of this shared VM weigh on every tool
alike; medians, in one run; writes a table into docs/benchmarks.md and a chart
to docs/adbench.png.

    .venv/bin/python bench/adbench/run.py              # prints, updates docs/benchmarks.md and the chart
    .venv/bin/python bench/adbench/run.py --no-write
    .venv/bin/python bench/adbench/run.py --only GMM D-LSTM --sizes small
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import environment, write_section  # noqa: E402

import soac  # noqa: E402

# Every tool on one thread (see the docstring); XLA reads its flags when jax is imported.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

MODULES = [importlib.import_module(name) for name in ("gmm", "lstm", "ba", "hand", "kmeans")]
# Ours on all threads: the count before any peer runs (torch.set_num_threads
# sets the thread count of the OpenMP runtime it shares with us).
ALL_THREADS = soac.get_num_threads()
# Futhark's published gradient/primal overheads, sequential CPU (Schenck et al., SC22).
FUTHARK_OVERHEAD = {"GMM": 5.1, "D-LSTM": 3.2, "BA": 13.0, "HAND": 45.0}
BUDGET_S = 1.5  # seconds of timed runs per measurement, when a run takes less
BURST_S = 0.1  # seconds of back-to-back calls of one tool within a round


@dataclass
class Row:
    name: str
    size: str
    shape: str
    times: dict[str, float] = field(default_factory=dict)  # "<tool> primal|gradient" -> seconds
    compile_s: dict[str, float] = field(default_factory=dict)


def timed(function) -> float:
    """The median of as many runs as fit the budget (1 to 21), after a warm-up
    call that also sizes the budget."""
    once = seconds(function)
    return statistics.median([seconds(function) for _ in range(int(np.clip(BUDGET_S / max(once, 1e-9), 1, 21)))])


def timed_in_turn(functions: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Medians of calls taken in rounds in which every function runs in turn:
    a burst of back-to-back calls (about BURST_S, after one call that warms
    the caches the others used), as many rounds as fit the budget of each
    function (1 to 15). Calls of one tool then see the machine's slower and
    faster spells as often as the others' do."""
    once = {name: seconds(function) for name, function in functions.items()}
    burst = {name: int(np.clip(BURST_S / max(t, 1e-9), 1, 50)) for name, t in once.items()}
    per_round = sum(t * (burst[name] + (burst[name] > 1)) for name, t in once.items())
    rounds = int(np.clip(BUDGET_S * len(functions) / max(per_round, 1e-9), 1, 15))
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            if burst[name] > 1:
                function()
            samples[name] += [seconds(function) for _ in range(burst[name])]
    return {name: statistics.median(times) for name, times in samples.items()}


def settle() -> None:
    """Waits for the previous tool's idle worker threads to stop spinning
    (OpenMP runtimes spin about 200 ms before sleeping), so that they do not
    take a core from the next measurement on this 2-core machine."""
    time.sleep(0.3)


def seconds(function) -> float:
    """The wall time of one call."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def close(got, want, what: str) -> None:
    for g, w in zip(got, want, strict=True):
        if not np.allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10):
            raise SystemExit(f"{what}: ours and the reference disagree")


def prepare_ours(module, inputs, row: Row) -> tuple:
    """Compiles (the first calls); returns the value, the gradients and the
    functions to time."""
    fn, args = module.soac_version(*inputs)
    primal, gradient = soac.jit(fn), soac.value_and_grad(fn, argnums=tuple(module.WRT))
    # The compile as users get it: no code on disk, large functions on their
    # first tier (soac.tiers); then the parallel code, which is what is timed.
    with environment(SOAC_TIERED="on", SOAC_CACHE="off"):
        row.compile_s["ours"] = seconds(lambda: primal(*args)) + seconds(lambda: gradient(*args))
    soac.wait_for_background_compiles()
    value, gradients = gradient(*args)
    functions = {"ours primal": lambda: primal(*args), "ours gradient": lambda: gradient(*args)}
    return value, gradients if isinstance(gradients, tuple) else (gradients,), functions


def prepare_jax(module, inputs, row: Row) -> tuple:
    import jax

    f, args = module.jax_version(*inputs)
    primal, gradient = jax.jit(f), jax.jit(jax.value_and_grad(f, argnums=module.WRT))
    row.compile_s["JAX"] = seconds(lambda: jax.block_until_ready(primal(*args))) + seconds(
        lambda: jax.block_until_ready(gradient(*args)))
    functions = {
        "JAX primal": lambda: jax.block_until_ready(primal(*args)),
        "JAX gradient": lambda: jax.block_until_ready(gradient(*args)),
    }
    return gradient(*args), functions


def prepare_torch(module, inputs) -> dict:
    import torch

    torch.set_num_threads(1)
    f, args = module.torch_version(*inputs)
    wrt = [args[i].requires_grad_(True) for i in module.WRT]

    def primal():
        with torch.no_grad():
            return f(*args)

    return {"PyTorch primal": primal, "PyTorch gradient": lambda: torch.autograd.grad(f(*args), wrt)}


def measure(functions: dict, row: Row) -> None:
    """Every tool on one thread, in turn; then ours on all threads."""
    soac.set_num_threads(1)
    settle()
    row.times.update(timed_in_turn(functions))
    soac.set_num_threads(ALL_THREADS)
    settle()
    row.times["ours all-threads primal"] = timed(functions["ours primal"])
    row.times["ours all-threads gradient"] = timed(functions["ours gradient"])


def available(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def run(modules, sizes: list[str]) -> list[Row]:
    rows = []
    peers = {"JAX": available("jax"), "PyTorch": available("torch")}
    for module in modules:
        for size in sizes:
            shape = ", ".join(f"{k}={v:,}" for k, v in module.SIZES[size].items())
            row = Row(module.NAME, size, shape)
            inputs = module.inputs(**module.SIZES[size])
            value, gradients, functions = prepare_ours(module, inputs, row)
            if size == "small":
                close([value], [module.reference(*inputs)], f"{module.NAME} {size}: value vs numpy")
            if peers["JAX"]:
                (jax_value, jax_gradients), more = prepare_jax(module, inputs, row)
                close([value, *gradients], [jax_value, *jax_gradients], f"{module.NAME} {size}: value and gradient vs JAX")
                functions.update(more)
            if peers["PyTorch"]:
                functions.update(prepare_torch(module, inputs))
            measure(functions, row)
            print(f"{module.NAME:8s} {size:5s} " + "  ".join(f"{k} {v * 1e3:.2f} ms" for k, v in row.times.items()), flush=True)
            rows.append(row)
    return rows


def ratio(row: Row, a: str, b: str) -> str:
    return f"{row.times[a] / row.times[b]:.2f}" if a in row.times and b in row.times else "–"


def ms(row: Row, key: str) -> str:
    return f"{row.times[key] * 1e3:.2f}" if key in row.times else "–"


def markdown(rows: list[Row], load: tuple[float, float]) -> str:
    versions = [f"numpy {np.__version__}"] + [f"{n} {importlib.import_module(m).__version__}" for n, m in (("JAX", "jax"), ("PyTorch", "torch")) if available(m)]
    lines = [
        f"float64; {os.cpu_count()} logical cores ({platform.processor() or platform.machine()}); every tool on one thread, ours also on "
        f"{ALL_THREADS}; {', '.join(versions)}; one thread: medians of calls taken in rounds in which every tool runs in turn "
        f"(bursts of about 0.1 s after a call that warms the caches; 1–15 rounds, as many as fit 1.5 s per measurement); "
        f"{ALL_THREADS} threads: medians of 1–21 runs; load average "
        f"{load[0]:.1f} at the start, {load[1]:.1f} at the end. Measured by `bench/adbench/run.py` in one run. *gradient* is value and "
        "gradient together; *overhead* is gradient / primal of the same tool. BA and HAND: the gradient of ½|r|² (one vjp), not ADBench's Jacobian.",
        "",
        "| objective | size | ours primal (ms) | ours gradient (ms) | overhead | JAX primal (ms) | JAX gradient (ms) | overhead "
        "| PyTorch primal (ms) | PyTorch gradient (ms) | overhead | ours / JAX (gradient) | ours / PyTorch (gradient) "
        f"| ours, {ALL_THREADS} threads: primal (ms) | gradient (ms) |",
        "|---|---|" + "---:|" * 13,
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.shape} | {ms(r, 'ours primal')} | {ms(r, 'ours gradient')} | {ratio(r, 'ours gradient', 'ours primal')} "
            f"| {ms(r, 'JAX primal')} | {ms(r, 'JAX gradient')} | {ratio(r, 'JAX gradient', 'JAX primal')} "
            f"| {ms(r, 'PyTorch primal')} | {ms(r, 'PyTorch gradient')} | {ratio(r, 'PyTorch gradient', 'PyTorch primal')} "
            f"| {ratio(r, 'ours gradient', 'JAX gradient')} | {ratio(r, 'ours gradient', 'PyTorch gradient')} "
            f"| {ms(r, 'ours all-threads primal')} | {ms(r, 'ours all-threads gradient')} |"
        )
    lines += ["", targets(rows)]
    return "\n".join(lines)


def targets(rows: list[Row]) -> str:
    """Our overheads next to Futhark's published ones, and compile times."""
    lines = [
        "| objective | our overhead, small / large | Futhark's (sequential CPU) | met | ours / JAX gradient, small / large "
        "| compile, small: ours, first tier (s) | JAX (s) |",
        "|---|---|---:|---|---|---:|---:|",
    ]
    for name in dict.fromkeys(r.name for r in rows):
        mine = [r for r in rows if r.name == name]
        overheads = [r.times["ours gradient"] / r.times["ours primal"] for r in mine]
        futhark = FUTHARK_OVERHEAD.get(name)
        met = "–" if futhark is None else ("yes" if max(overheads) <= futhark else "no")
        compile_jax = f"{mine[0].compile_s['JAX']:.1f}" if "JAX" in mine[0].compile_s else "–"
        lines.append(
            f"| {name} | {' / '.join(f'{o:.1f}' for o in overheads)} | {'–' if futhark is None else futhark} | {met} "
            f"| {' / '.join(ratio(r, 'ours gradient', 'JAX gradient') for r in mine)} | {mine[0].compile_s['ours']:.1f} | {compile_jax} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="objective names (default: all)")
    parser.add_argument("--sizes", nargs="*", default=["small", "large"])
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    modules = [m for m in MODULES if not options.only or m.NAME in options.only]
    load_start = os.getloadavg()[0]
    start = time.perf_counter()
    rows = run(modules, options.sizes)
    table = markdown(rows, (load_start, os.getloadavg()[0]))
    print(f"\n{table}\n\n(the whole run took {time.perf_counter() - start:.0f} s)")
    if not options.no_write:
        from chart import save_chart

        write_section("adbench", "ADBench: ours against JAX and PyTorch", table + "\n\n![ADBench gradient overheads and times](adbench.png)")
        save_chart(rows, FUTHARK_OVERHEAD)


if __name__ == "__main__":
    main()
