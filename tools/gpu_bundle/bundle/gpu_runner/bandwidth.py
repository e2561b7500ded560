"""Bandwidth of the SOAC kernels of bandwidth.mlir at 1e8 f32 elements,
against the device's own copy bandwidth measured in the same run.

Bytes are the ones a kernel must move at the least (each input read once,
each output written once); the copy moves 2 bytes per byte copied (a read
and a write). GB/s = bytes / 1e9 / seconds; the ratio is the kernel's GB/s
over the copy's. Inputs are made here (no need to ship 400 MB each) and
each result is checked against numpy.
"""

from __future__ import annotations

import json
import statistics

import numpy as np

from .calls import Library
from .driver import Driver

REPEATS = 10
BINS = 1 << 20


def inputs(kernel: str, n: int, rng: np.random.Generator) -> list:
    x = rng.random(n, dtype=np.float32)
    if kernel in ("scale", "sum", "cumsum"):
        return [x]
    if kernel == "histogram":
        return [np.zeros(BINS, np.float32), rng.integers(0, BINS, n, dtype=np.int32), np.ones(n, np.float32)]
    if kernel == "scatter":
        return [np.zeros(n, np.float32), rng.permutation(n).astype(np.int32), x]
    raise KeyError(kernel)


def least_bytes(kernel: str, n: int) -> int:
    return {"scale": 8 * n, "sum": 4 * n, "cumsum": 8 * n, "histogram": 8 * n + 8 * BINS, "scatter": 12 * n}[kernel]


def check(kernel: str, args: list, result, rng: np.random.Generator) -> str | None:
    """Why ``result`` is wrong, or None (sampled where a full check costs too much)."""
    x = args[-1]
    sample = rng.integers(0, len(x), 100_000)
    if kernel == "scale":
        ok = np.allclose(result[sample], 2 * x[sample] + 1, rtol=1e-6)
    elif kernel == "sum":
        ok = abs(float(result) - float(x.sum(dtype=np.float64))) <= 1e-4 * len(x)
    elif kernel == "cumsum":
        exact = np.cumsum(x, dtype=np.float64)
        ok = np.allclose(result[sample], exact[sample], rtol=1e-3)
    elif kernel == "histogram":
        ok = np.array_equal(result, np.bincount(args[1], minlength=BINS).astype(np.float32))
    else:
        ok = np.array_equal(result[args[1][sample]], x[sample])
    return None if ok else "the result differs from numpy's"


def copy_bandwidth(n: int) -> dict:
    """cuMemcpyDtoD of n f32 elements, timed by events."""
    driver = Driver()
    nbytes = 4 * n
    source, target = driver.alloc(nbytes), driver.alloc(nbytes)
    driver.fill_random(source, nbytes)
    ms = statistics.median(driver.time_ms(lambda: driver.copy_device_to_device(target, source, nbytes), REPEATS))
    driver.free(source)
    driver.free(target)
    return {"kernel": "cuMemcpyDtoD", "bytes": 2 * nbytes, "ms": ms, "gb_s": 2 * nbytes / 1e6 / ms, "device": driver.describe()}


def run(bundle: str, program: dict, mode: str, n: int) -> None:
    kernel = program["function"]
    driver = Driver()
    library = Library(f"{bundle}/{program['library']}")
    library.prepare(driver, mode)
    function = library.function(kernel, driver)
    rng = np.random.default_rng(1)
    args = inputs(kernel, n, rng)
    placed = function.place(args, mode)
    result = function.fetch(function.call(placed), placed)[0]
    problem = check(kernel, args, result, rng)
    del result
    ms = statistics.median(driver.time_ms(lambda: function.fetch(function.call(placed), placed, copy=False), REPEATS))
    function.release(placed)
    nbytes = least_bytes(kernel, n)
    print(json.dumps({"kernel": kernel, "mode": mode, "elements": n, "bytes": nbytes, "ms": ms,
                      "gb_s": nbytes / 1e6 / ms, "passed": problem is None, "problem": problem}), flush=True)
