"""exp, log and tanh as soac's own float64 arithmetic (soac-expand-f64-math,
the default) against calls of libm (`CpuOptions(vector_math=False)`): the
value and gradient of the dense programs of bench/dense.py and of every
ADBench objective, both builds in one process, their calls alternating
(medians of the rounds), on one thread, in CPU time of that thread. Also
the largest difference between the two gradients, relative to the gradient's
largest entry.

    .venv/bin/python bench/vector_math.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/vector_math.py --no-write --only MLP GMM
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import numpy as np
from common import ROOT, alternating_medians, on_one_thread, write_section

import soac
import soac.numpy as snp
from soac.compiler import CpuOptions

sys.path.insert(0, str(ROOT / "bench" / "adbench"))
from dense import attention, mlp  # noqa: E402

ADBENCH = ("gmm", "lstm", "hand", "ba", "kmeans")


def programs():
    """(label, function, arguments, argnums) of every program measured."""
    rng = np.random.default_rng(1)
    yield ("MLP 256×512→512→10", lambda *a: mlp(snp, *a),
           (rng.standard_normal((256, 512)), rng.standard_normal((256, 10)), rng.standard_normal((512, 512)) * 0.05,
            np.zeros(512), rng.standard_normal((512, 10)) * 0.05, np.zeros(10)), (2, 3, 4, 5))
    yield ("attention 512×64", lambda *a: attention(snp, *a), tuple(rng.standard_normal((512, 64)) * 0.3 for _ in range(3)),
           (0, 1, 2))
    # The same two in float32 (computed in float64 and rounded back).
    single = np.random.default_rng(1)
    yield ("MLP 256×512→512→10, float32", lambda *a: mlp(snp, *a),
           tuple(a.astype(np.float32) for a in (
               single.standard_normal((256, 512)), single.standard_normal((256, 10)),
               single.standard_normal((512, 512)) * 0.05, np.zeros(512), single.standard_normal((512, 10)) * 0.05,
               np.zeros(10))), (2, 3, 4, 5))
    yield ("attention 512×64, float32", lambda *a: attention(snp, *a),
           tuple((single.standard_normal((512, 64)) * 0.3).astype(np.float32) for _ in range(3)), (0, 1, 2))
    for name in ADBENCH:
        module = importlib.import_module(name)
        for size in module.SIZES:
            fn, args = module.soac_version(*module.inputs(**module.SIZES[size]))
            yield (f"{module.NAME} ({size})", fn, args, tuple(module.WRT))


def largest_difference(a, b) -> float:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    worst = 0.0
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y)) / max(float(np.max(np.abs(y))), 1e-300)))
    return worst


def run(rounds: int, only: list[str]) -> list[tuple]:
    rows = []
    with on_one_thread():
        for label, fn, args, wrt in programs():
            if only and not any(word in label for word in only):
                continue
            ours, libm = (soac.jit(soac.value_and_grad(fn, argnums=wrt), options=CpuOptions(vector_math=vector))
                          for vector in (True, False))
            difference = largest_difference(ours(*args)[1], libm(*args)[1])
            times = alternating_medians({"own": lambda: ours(*args), "libm": lambda: libm(*args)}, rounds, time.thread_time)
            t_ours, t_libm = times["own"], times["libm"]
            rows.append((label, t_ours, t_libm, difference))
            print(f"{label:>28}: own {t_ours * 1e3:9.3f} ms  libm {t_libm * 1e3:9.3f} ms  ratio {t_ours / t_libm:5.2f}"
                  f"  gradients differ by {difference:.1e}", flush=True)
    return rows


def markdown(rows, rounds: int) -> str:
    lines = [
        f"Value and gradient (float64 unless the row says float32), one thread, medians of {rounds} rounds alternating the two builds "
        "(`bench/vector_math.py`), in CPU time of the calling thread. *difference*: the largest difference "
        "between the two gradients, relative to the largest entry of the gradient. Programs without "
        "exp, log or tanh (BA, HAND, k-means) compile to the same code both ways: their ratios show the noise.",
        "",
        "| program | own exp/log/tanh (ms) | libm calls (ms) | own / libm | difference |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, ours, libm, difference in rows:
        lines.append(f"| {label} | {ours * 1e3:.3f} | {libm * 1e3:.3f} | {ours / libm:.2f} | {difference:.0e} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", nargs="*", default=[], help="words of the programs' labels")
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    rows = run(options.rounds, options.only)
    table = markdown(rows, options.rounds)
    print()
    print(table)
    if not options.no_write and not options.only:
        write_section("vector-math", "exp, log and tanh: soac's own against libm's", table)


if __name__ == "__main__":
    main()
