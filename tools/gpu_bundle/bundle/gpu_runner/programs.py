"""One program's runs in one memory mode, inside a child process: each run's
results against the expected ones (the CPU build's), and for ADBench
programs the time of a call. Prints one JSON line per run as it finishes, so
that the parent knows where a crash happened."""

from __future__ import annotations

import json
import math
import statistics
import time

import numpy as np

from .calls import Library
from .driver import Driver

# Seconds of timed calls per ADBench measurement (at least 3 calls, at most 50).
TIME_BUDGET_S = 1.0


def compare(actual: tuple, expected: tuple, rows: int, kind: str) -> str | None:
    """Why ``actual`` is not ``expected``, or None. The test suite's rule
    (test/python/gpu_programs.py): dtypes, shapes of non-empty arrays, values
    to a rounding that grows with the rows folded; ADBench's objectives and
    gradients (float64) to 1e-7 of their largest entry."""
    if len(actual) != len(expected):
        return f"{len(actual)} results, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a), np.asarray(e)
        if a.dtype != e.dtype:
            return f"result {i}: dtype {a.dtype}, expected {e.dtype}"
        if e.size == 0:
            if a.size != 0:
                return f"result {i}: shape {a.shape}, expected an empty array"
            continue
        if a.shape != e.shape:
            return f"result {i}: shape {a.shape}, expected {e.shape}"
        if kind == "adbench":
            rtol, atol = 1e-7, 1e-7 * max(1.0, float(np.max(np.abs(e))))
        else:
            rtol = 1e-4 if e.dtype == np.float32 else 1e-9
            atol = rtol * max(1.0, math.sqrt(max(rows, 1)))
        if e.dtype.kind in "biu":
            wrong = np.asarray(a != e)
        else:
            wrong = ~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        if wrong.any():
            where = np.argwhere(wrong)[0]
            at = tuple(int(j) for j in where)
            return f"result {i}: {int(wrong.sum())} of {e.size} values differ, first at {at}: {a[at]} vs {e[at]}"
    return None


def rows_of(label: str) -> int:
    """The rows of a suite run ("n1003"); 1 for the others ("small")."""
    return int(label[1:]) if label[:1] == "n" and label[1:].isdigit() else 1


def run(bundle: str, program: dict, mode: str, start: int) -> None:
    driver = Driver()
    library = Library(f"{bundle}/{program['library']}")
    library.prepare(driver, mode)
    function = library.function(program["function"], driver)
    for index, spec in enumerate(program["runs"][start:], start):
        data, outputs = np.load(f"{bundle}/{spec['args']}"), np.load(f"{bundle}/{spec['expected']}")
        args = [data[f"arg{i}"] for i in range(len(function.signature.args))]
        expected = tuple(outputs[f"expected{i}"] for i in range(len(function.signature.results)))
        placed = function.place(args, mode)
        began = time.perf_counter()
        raw = function.call(placed)
        driver.synchronize()
        first_call_s = time.perf_counter() - began
        actual = function.fetch(raw, placed)
        problem = compare(actual, expected, rows_of(spec["label"]), program["kind"])
        line = {"run": index, "label": spec["label"], "passed": problem is None, "problem": problem,
                "first_call_s": first_call_s}
        if program["kind"] == "adbench" and problem is None:
            line["ms"] = call_ms(function, placed, driver)
        function.release(placed)
        print(json.dumps(line), flush=True)


def call_ms(function, placed: list, driver: Driver) -> float:
    """Median wall time of a call (launches are synchronous, so a call's end
    is its kernels' end), results freed after each."""
    def once() -> float:
        began = time.perf_counter()
        function.fetch(function.call(placed), placed, copy=False)
        driver.synchronize()
        return time.perf_counter() - began

    first = once()
    repeats = int(min(50, max(3, TIME_BUDGET_S / max(first, 1e-6))))
    return 1e3 * statistics.median(once() for _ in range(repeats))
