"""The JAX twins (examples/jax_twins/): does a gradient cost a constant
multiple of its program, at every size, as the programs are written by JAX
users?

For each program whose soac twin runs, at sizes n, 4n and 16n: the median
times of the jitted primal and gradient (after a warm-up call that compiles),
their ratio, the growth of the gradient's time from n to 16n (16 when the
cost is linear), and, with JAX installed (float64, on the CPU), JAX's
gradient time on the same inputs. Programs whose soac twin does not run yet
are listed with the error they stop at.

    .venv/bin/python bench/jax_twins.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/jax_twins.py --no-write --repeats 3
    .venv/bin/python bench/jax_twins.py --all-threads  # soac, OpenBLAS and XLA on every core

soac, OpenBLAS and XLA run on one thread and one core unless --all-threads:
on a machine with few cores, with every core busy, threads waiting for one
another (OpenMP's, OpenBLAS's idle workers) wait for the scheduler's next
tick, and times come in multiples of it (4 ms on this project's 2-core
machine), which made the table vary more between runs than it differed.
"""

from __future__ import annotations

import sys

from common import ROOT, median_seconds, pin_to_one_core, write_section

ONE_THREAD = "--all-threads" not in sys.argv
if ONE_THREAD:
    pin_to_one_core()  # before numpy and jax load

import argparse  # noqa: E402
import importlib.util  # noqa: E402

import soac  # noqa: E402

# examples/jax_twins/common.py, under a name of its own (this directory has a common.py too)
_spec = importlib.util.spec_from_file_location("jax_twins_common", ROOT / "examples" / "jax_twins" / "common.py")
twins = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(twins)

# The smallest size of each program: 16 times it keeps a gradient well under a second.
BASE_SIZE = {
    "linear_regression": 100_000,
    "logistic_regression": 100_000,
    "polynomial_regression": 100_000,
    "mlp": 5_000,
    "attention": 500,
    "conv2d": 200,
    "black_scholes": 100_000,
    "rnn": 1_000,
    "rnn_scan": 1_000,
    "ode_solver": 1_000,
    "kmeans": 5_000,
    "embedding_bag": 100_000,
    "cumulative_products": 100_000,
    "hessian_vector_product": 100_000,
    "per_example_gradients": 100_000,
    "per_example_gradients_vmap": 100_000,
    "reshaping": 1_000,
    "tv_denoising": 100_000,
    "training_loop": 10_000,
}


def jax_module():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)  # soac computes in float64
    return jax


def time_program(name: str, jax, repeats: int) -> list[tuple] | str:
    """Rows (n, primal s, gradient s, JAX gradient s or None), or the error
    the soac twin stops at."""
    try:
        program = twins.load(name, "soac")
    except Exception as error:  # noqa: BLE001  (reported, not hidden)
        return f"{type(error).__name__}: {error}"
    peer = twins.load(name, "jax") if jax else None
    gradient_args = getattr(program, "GRADIENT_ARGS", program.ARGS)
    rows = []
    for scale in (1, 4, 16):
        n = BASE_SIZE[name] * scale
        inputs = program.inputs(n, 0)
        primal_args = [inputs[a] for a in program.ARGS]
        derivative_args = [inputs[a] for a in gradient_args]
        try:
            primal = median_seconds(lambda: program.primal(*primal_args), repeats)
            gradient = median_seconds(lambda: program.gradient(*derivative_args), repeats)
        except Exception as error:  # noqa: BLE001
            return f"{type(error).__name__}: {error}"
        peer_gradient = None
        if peer is not None:
            peer_args = [jax.tree_util.tree_map(jax.numpy.asarray, a) for a in derivative_args]
            peer_gradient = median_seconds(lambda: jax.block_until_ready(peer.gradient(*peer_args)), repeats)
        rows.append((n, primal, gradient, peer_gradient))
        print(f"{name:28s} n = {n:>9,d}  primal {primal * 1e3:8.3f} ms  gradient {gradient * 1e3:8.3f} ms"
              f"  ratio {gradient / primal:6.2f}" + (f"  JAX gradient {peer_gradient * 1e3:8.3f} ms" if peer_gradient else ""),
              flush=True)
    return rows


def markdown(results: dict[str, list[tuple] | str], repeats: int, jax) -> str:
    peer = f"JAX {jax.__version__} (CPU, float64)" if jax else "JAX (not installed)"
    lines = [
        f"Float64, medians of {repeats} runs after a compiling warm-up (`bench/jax_twins.py`), on "
        + ("one thread and one core, JAX's and OpenBLAS's too" if ONE_THREAD else f"{soac.get_num_threads()} threads")
        + ". Each program is an unchanged JAX program (examples/jax_twins/, "
        "`import soac.numpy as jnp`); *gradient* is its jitted derivative (a `grad`, the HVP's `jvp(grad(f))`, "
        "per-example gradients), *ratio* its time over the primal's, *growth* its time at 16n over n "
        f"(16 when the cost is linear in n). *vs JAX*: soac's gradient time over {peer}'s.",
        "",
        "| program | n | primal (ms) | gradient (ms) | ratio | growth n→16n | JAX gradient (ms) | vs JAX |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    failures = []
    for name, rows in results.items():
        if isinstance(rows, str):
            failures.append(f"- `{name}`: {rows.splitlines()[0].replace(str(ROOT) + '/', '')}")
            continue
        growth = rows[-1][2] / rows[0][2]
        for i, (n, primal, gradient, peer_gradient) in enumerate(rows):
            peer_columns = f"{peer_gradient * 1e3:.3f} | {gradient / peer_gradient:.2f}" if peer_gradient else "– | –"
            lines.append(f"| {name if i == 0 else ''} | {n:,d} | {primal * 1e3:.3f} | {gradient * 1e3:.3f} | "
                         f"{gradient / primal:.2f} | {f'{growth:.1f}' if i == len(rows) - 1 else ''} | {peer_columns} |")
    if failures:
        lines += ["", "Not run: the soac twin stops at", "", *failures]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--all-threads", action="store_true", help="soac, OpenBLAS and JAX on every core")
    parser.add_argument("programs", nargs="*", help="a subset of the programs (all by default)")
    options = parser.parse_args()
    if ONE_THREAD:
        soac.set_num_threads(1)
    jax = jax_module()
    results = {name: time_program(name, jax, options.repeats) for name in options.programs or twins.PROGRAMS}
    table = markdown(results, options.repeats, jax)
    print()
    print(table)
    if not options.no_write and not options.programs:
        write_section("jax-twins", "Unchanged JAX programs: gradient cost against size, and against JAX", table)


if __name__ == "__main__":
    main()
