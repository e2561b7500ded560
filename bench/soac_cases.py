"""The SOAC benchmark programs' inputs and numpy twins, with numpy alone:
bench/cpu_soacs.py and bench/scaling.py time them here, and the scaling
bundle's runner (tools/scaling_bundle) makes the same inputs on a machine
without soac. Each case names its function in examples/soacs.mlir."""

from __future__ import annotations

import numpy as np


def scatter_numpy(dest, idx, x):
    out = dest.copy()
    out[idx] = x
    return out


def cases(n: int, rng: np.random.Generator):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    bins = rng.integers(0, 1000, n)
    permutation = rng.permutation(n).astype(np.int64)
    dest = np.zeros(n, np.float32)
    a = np.float32(2.0)
    return [
        # name, soac function, args, numpy expression, numpy callable, rtol
        ("map (saxpy)", "saxpy", (a, x, y), "a * x + y", lambda: a * x + y, 1e-6),
        ("reduce (sum)", "sum", (x,), "np.sum(x)", lambda: np.sum(x), 1e-3),
        ("reduce . map (sum of squares)", "sum_of_squares", (x,), "np.sum(x * x)", lambda: np.sum(x * x), 1e-3),
        ("scan (cumsum)", "cumsum", (x,), "np.cumsum(x)", lambda: np.cumsum(x), 1e-2),
        (
            "reduce_by_index (1000 bins)",
            "histogram",
            (np.zeros(1000, np.float32), bins, x),
            "np.bincount(idx, x, 1000)",
            lambda: np.bincount(bins, weights=x, minlength=1000),
            1e-3,
        ),
        ("scatter (permutation)", "scatter", (dest, permutation, x), "d = dest.copy(); d[idx] = x", lambda: scatter_numpy(dest, permutation, x), 0),
    ]


def relative_error(ours, reference) -> float:
    """The largest difference over the reference's largest magnitude."""
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference, np.float64)
    if not reference.size:
        return 0.0
    return float(np.max(np.abs(ours - reference)) / max(np.max(np.abs(reference)), 1e-30))
