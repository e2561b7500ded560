"""Mixed mode vs pure reverse mode on elementwise maps with branches.

The HM-LSTM cell update (examples/hm_lstm.mlir, float32, N×N inputs)
  c' = z == 1 ? σ(i)·tanh(g) : (zb == 0 ? c : σ(f)·c + σ(i)·tanh(g))
differentiated with respect to c, f, i and g: pure reverse mode (the adjoint
map re-executes the body and sweeps it backwards) against mixed mode (the
partials by forward mode inside the adjoint map), next to the primal; with
random control data (z, zb uniform in {0, 1}: branches diverge from element
to element) and uniform control data (every element takes the last branch).
Then an arity sweep: the product of k = 1 … 10 inputs through a branchy body,
gradient with respect to all k. Medians of repeats, in one run.

    .venv/bin/python bench/mixed_mode.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/mixed_mode.py --no-write
"""

from __future__ import annotations

import argparse

import numpy as np
from common import ROOT, median_seconds, write_section

import soac

HM_LSTM = (ROOT / "examples" / "hm_lstm.mlir").read_text()


def arity_program(k: int) -> str:
    """y = p > 0 ? sin(p) : p·p with p the product of k inputs, elementwise."""
    names = [f"%x{j}" for j in range(k)]
    types = ", ".join(["tensor<?xf32>"] * k)
    args = ", ".join(f"{name}: tensor<?xf32>" for name in names)
    rows = ", ".join(f"%v{j}: f32" for j in range(k))
    product = "    %p0 = arith.addf %v0, %zero : f32\n" + "".join(
        f"    %p{j} = arith.mulf %p{j - 1}, %v{j} : f32\n" for j in range(1, k)
    )
    return f"""
func.func @product(%bar: tensor<?xf32>, {args}) -> tensor<?xf32> {{
  %r = soac.map ins({", ".join(names)} : {types}) -> tensor<?xf32> {{
  ^bb0({rows}):
    %zero = arith.constant 0.0 : f32
{product}    %positive = arith.cmpf ogt, %p{k - 1}, %zero : f32
    %y = scf.if %positive -> (f32) {{
      %s = math.sin %p{k - 1} : f32
      scf.yield %s : f32
    }} else {{
      %q = arith.mulf %p{k - 1}, %p{k - 1} : f32
      scf.yield %q : f32
    }}
    soac.yield %y : f32
  }}
  return %r : tensor<?xf32>
}}
"""


def hm_lstm_rows(sizes: list[int], repeats: int) -> list[tuple]:
    primal = soac.compile(HM_LSTM, "hm_lstm_cell")
    reverse = soac.mlir.vjp(HM_LSTM, "hm_lstm_cell", wrt=[0, 1, 2, 3])
    mixed = soac.mlir.vjp(HM_LSTM, "hm_lstm_cell", wrt=[0, 1, 2, 3], mixed_mode=True)
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        values = [rng.standard_normal((n, n)).astype(np.float32) for _ in range(4)]
        bar = rng.standard_normal((n, n)).astype(np.float32)
        for control in ("random", "uniform"):
            if control == "random":
                z, zb = (rng.integers(0, 2, (n, n)).astype(np.float32) for _ in range(2))
            else:
                z, zb = np.zeros((n, n), np.float32), np.ones((n, n), np.float32)
            args = (*values, z, zb)
            for a, b in zip(reverse(*args, bar)[1:], mixed(*args, bar)[1:]):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
            times = [
                median_seconds(lambda: primal(*args), repeats),
                median_seconds(lambda: reverse(*args, bar), repeats),
                median_seconds(lambda: mixed(*args, bar), repeats),
            ]
            rows.append((n, control, *times))
            print(f"N = {n:5d} {control:8s} primal {times[0] * 1e3:8.2f} ms  reverse {times[1] / times[0]:5.2f}x  "
                  f"mixed {times[2] / times[0]:5.2f}x", flush=True)
    return rows


def arity_rows(arities: range, n: int, repeats: int) -> list[tuple]:
    rng = np.random.default_rng(1)
    rows = []
    for k in arities:
        source = arity_program(k)
        wrt = list(range(1, k + 1))
        primal = soac.compile(source, "product")
        reverse = soac.mlir.vjp(source, "product", wrt=wrt)
        mixed = soac.mlir.vjp(source, "product", wrt=wrt, mixed_mode=True)
        inputs = [rng.uniform(0.5, 1.5, n).astype(np.float32) * rng.choice([-1, 1], n).astype(np.float32) for _ in range(k)]
        bar = np.ones(n, np.float32)
        args = (bar, *inputs)
        times = [
            median_seconds(lambda: primal(*args), repeats),
            median_seconds(lambda: reverse(*args, bar), repeats),
            median_seconds(lambda: mixed(*args, bar), repeats),
        ]
        rows.append((k, *times))
        print(f"arity {k:2d}: primal {times[0] * 1e3:7.2f} ms  reverse {times[1] * 1e3:7.2f} ms  mixed {times[2] * 1e3:7.2f} ms",
              flush=True)
    return rows


def markdown(hm_rows, arity: list[tuple], n: int, repeats: int) -> str:
    lines = [
        f"Float32, medians of {repeats} runs (`bench/mixed_mode.py`, {soac.get_num_threads()} threads). Gradient of the "
        "HM-LSTM cell update with respect to c, f, i, g (one cotangent), pure reverse mode and mixed mode, "
        "as ratios to the primal.",
        "",
        "| N×N | control | primal (ms) | reverse (ms) | mixed (ms) | reverse / primal | mixed / primal | mixed / reverse |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for size, control, p, r, m in hm_rows:
        lines.append(f"| {size}×{size} | {control} | {p * 1e3:.2f} | {r * 1e3:.2f} | {m * 1e3:.2f} | {r / p:.2f} | {m / p:.2f} | {m / r:.2f} |")
    lines += [
        "",
        f"Arity sweep: `y = p > 0 ? sin(p) : p²` with `p` the product of k inputs, n = {n:,d} elements, gradient "
        "with respect to all k inputs (time per call).",
        "",
        "| k | primal (ms) | reverse (ms) | mixed (ms) | reverse / primal | mixed / primal |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for k, p, r, m in arity:
        lines.append(f"| {k} | {p * 1e3:.2f} | {r * 1e3:.2f} | {m * 1e3:.2f} | {r / p:.2f} | {m / p:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    hm = hm_lstm_rows(options.sizes, options.repeats)
    arity = arity_rows(range(1, 11), options.elements, options.repeats)
    table = markdown(hm, arity, options.elements, options.repeats)
    print()
    print(table)
    if not options.no_write:
        write_section("mixed-mode", "Mixed mode: the HM-LSTM cell and an arity sweep", table)


if __name__ == "__main__":
    main()
