"""What the benchmark scripts share: timing and writing their section of
docs/benchmarks.md."""

from __future__ import annotations

import contextlib
import os
import pathlib
import statistics
import time
from collections.abc import Callable, Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1]

# The benchmarks time parallel code, compiled before the first call rather
# than in the background while the first calls run sequential code
# (soac.tiers); compile_time.py measures both.
os.environ.setdefault("SOAC_TIERED", "off")
REPORT = ROOT / "docs" / "benchmarks.md"


def pin_to_one_core() -> None:
    """One thread everywhere and one core: call it before numpy (OpenBLAS)
    and jax (XLA) load, which read their thread counts then. The core too:
    with the flags alone XLA still ran some of its work on a second thread
    (CPU time 1.4x wall time on GMM's gradient) whenever the machine had a
    core free, which made JAX's times depend on the machine's load."""
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def median_seconds(function: Callable[[], object], repeats: int,
                   clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time of `repeats` calls by `clock` (wall time unless told),
    after one warm-up call (inputs paged in, outputs touched once)."""
    function()
    times = []
    for _ in range(repeats):
        start = clock()
        function()
        times.append(clock() - start)
    return statistics.median(times)


def alternating_medians(functions: dict[str, Callable[[], object]], rounds: int,
                        clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """The median time of each function over `rounds` rounds that call them
    in turn (after one warm-up call each): a machine that slows down or
    speeds up during the run then shifts all of them alike, so their ratios
    hold. Each round starts one function later than the one before: a
    function called right after another that read the same arguments finds
    them in the caches, which made the second of two traces of HAND's small
    gradient 1.7x as fast as the first, the same code."""
    for function in functions.values():
        function()
    samples: dict[str, list[float]] = {name: [] for name in functions}
    order = list(functions.items())
    for round_ in range(rounds):
        shift = round_ % len(order)
        for name, function in order[shift:] + order[:shift]:
            start = clock()
            function()
            samples[name].append(clock() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


@contextlib.contextmanager
def environment(**variables: str) -> Iterator[None]:
    """The environment with `variables` set inside the block (soac reads
    SOAC_TIERED, SOAC_CACHE, ... at each compile), as it was after it."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def on_one_thread() -> Iterator[None]:
    """soac's compiled code runs on one thread inside the block; the number
    of threads it had comes back after it."""
    import soac

    threads = soac.get_num_threads()
    soac.set_num_threads(1)
    try:
        yield
    finally:
        soac.set_num_threads(threads)


def write_section(name: str, title: str, table: str) -> None:
    """Replaces the section between `<!-- name:begin -->` and `<!-- name:end -->`
    of docs/benchmarks.md with `table`, or appends it under `title`."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = REPORT.read_text() if REPORT.exists() else "# Benchmarks\n"
    section = f"{begin}\n{table}\n{end}"
    if begin in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + f"\n\n## {title}\n\n{section}\n"
    REPORT.write_text(text)
    print(f"updated {REPORT.relative_to(ROOT)}")
