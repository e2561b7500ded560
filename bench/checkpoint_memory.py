"""Peak memory of reverse mode through a 1000-iteration loop, with and without
strip-mined checkpoints, next to the primal's.

The loop carries a vector of m float64 values; reverse mode keeps the carried
values of every iteration (1000 · m · 8 bytes) unless the loop is strip-mined
into k levels (about k · 1000^(1/k) saved states, for more re-execution). Each
configuration runs in a fresh process; the figure is the growth of the peak
resident set during the call (after compiling and allocating the inputs).
Medians of repeated timings in the same processes.

    .venv/bin/python bench/checkpoint_memory.py            # prints, updates docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from common import write_section

PROGRAM = """
func.func @iterate(%x: tensor<?xf64>, %w: f64, %steps: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %steps step %c1 iter_args(%v = %x) -> (tensor<?xf64>) {
    %next = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%e: f64):
      %s = math.sin %e : f64
      %a = arith.mulf %s, %w : f64
      %b = arith.mulf %e, %half : f64
      %c = arith.addf %a, %b : f64
      soac.yield %c : f64
    }
    scf.yield %next : tensor<?xf64>
  }
  %total = soac.reduce ins(%r : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%p: f64, %q: f64):
    %t = arith.addf %p, %q : f64
    soac.yield %t : f64
  }
  return %total : f64
}
"""

# Runs in a fresh interpreter: prints {"mb": peak growth, "ms": median time}.
MEASURE = r"""
import json, resource, statistics, sys, time
import numpy as np, soac
program, mode, levels, m, steps, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
x = np.random.default_rng(0).uniform(-1, 1, m)
if mode == "primal":
    f = soac.compile(program, "iterate")
else:
    f = soac.mlir.grad(program, "iterate", wrt=[0], checkpoint_levels=levels)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = f(x, 0.9, steps)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
times = []
for _ in range(repeats):
    start = time.perf_counter(); f(x, 0.9, steps); times.append(time.perf_counter() - start)
print(json.dumps({"mb": (peak - before) / 1024, "ms": statistics.median(times) * 1e3,
                  "check": float(np.sum(result))}))
"""


def measure(mode: str, levels: int, m: int, steps: int, repeats: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, PROGRAM, mode, str(levels), str(m), str(steps), str(repeats)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--m", type=int, default=20_000, help="length of the carried vector")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    rows = [("primal", "", measure("primal", 1, options.m, options.steps, options.repeats))]
    gradients = {}
    for levels in (1, 2, 3):
        result = measure("gradient", levels, options.m, options.steps, options.repeats)
        gradients[levels] = result["check"]
        rows.append(("gradient", f"{levels}", result))
    # every level count computes the same gradient
    reference = gradients[1]
    for levels, value in gradients.items():
        if abs(value - reference) > 1e-9 * max(1.0, abs(reference)):
            raise SystemExit(f"checkpoint-levels={levels} changed the gradient: {value} vs {reference}")
    state_mb = options.m * 8 / 2**20
    lines = [
        f"A loop of {options.steps} iterations carrying {options.m:,d} float64 values "
        f"({state_mb:.2f} MB per saved state; {options.steps * state_mb:.0f} MB for one per iteration). "
        "Peak resident-set growth during one call, in a fresh process; time: median of "
        f"{options.repeats} calls (`bench/checkpoint_memory.py`).",
        "",
        "| run | checkpoint levels | peak growth (MB) | time (ms) |",
        "|---|---:|---:|---:|",
    ]
    for name, levels, result in rows:
        lines.append(f"| {name} | {levels} | {result['mb']:.1f} | {result['ms']:.1f} |")
    table = "\n".join(lines)
    print(table)
    if not options.no_write:
        write_section("checkpoint-memory", "Reverse mode: loop checkpoints and memory", table)


if __name__ == "__main__":
    main()
