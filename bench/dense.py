"""Dense programs against tuned libraries: a 1024² float64 matrix product
against numpy, a two-layer tanh MLP's training step and small attention
(softmax(QKᵀ)V) value-and-gradient against JAX, HAND's and GMM's gradients
(bench/adbench) against JAX. Every tool on one thread (OpenBLAS, XLA and
OpenMP are set so before they load); float64; results checked against the
peer before timing. This machine is shared, so each comparison is timed in
rounds in which ours and the peer's calls alternate, and the medians of
those rounds are reported.

The product is also timed in the two other forms soac can run it: the
runtime's own loops (what a library loaded without numpy's OpenBLAS runs)
and the SOAC form (a map over rows of a fused map-reduce, the code the
frontend emitted before soac.matmul, still what products inside SOAC
bodies compile to).

    .venv/bin/python bench/dense.py            # prints, updates docs/benchmarks.md
    .venv/bin/python bench/dense.py --no-write --rounds 3
"""

from __future__ import annotations

from common import ROOT, alternating_medians, pin_to_one_core, write_section

pin_to_one_core()  # before numpy and jax load

import argparse  # noqa: E402
import contextlib  # noqa: E402
import ctypes  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

import soac  # noqa: E402
import soac.numpy as snp  # noqa: E402
from soac.runtime import abi, native  # noqa: E402

sys.path.insert(0, str(ROOT / "bench" / "adbench"))

import attention  # noqa: E402  (the formulas, shared with the GPU bundle)
import mlp  # noqa: E402


def jax_modules():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def check(got, want, what: str) -> None:
    for g, w in zip(got, want, strict=True):
        if not np.allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10):
            raise SystemExit(f"{what}: ours and the peer disagree")


def matmul_rows(rounds: int) -> list[tuple]:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((1024, 1024)), rng.standard_normal((1024, 1024))
    product = soac.jit(lambda a, b: a @ b)
    soac_form = soac.jit(lambda a, b: soac.map(lambda row: row @ b, a))
    runtime = ctypes.CDLL(native.soac_runtime_library())
    check([product(a, b), soac_form(a, b)], [a @ b, a @ b], "matmul")

    def own_loops():
        runtime.soac_set_gemm(None, None)
        product(a, b)
        abi.register_blas(runtime)

    times = alternating_medians({"ours": lambda: product(a, b), "numpy": lambda: a @ b}, rounds)
    # The slow forms (seconds per call) apart, in fewer rounds, so that the
    # caches and clock of the fast ones are not theirs.
    times |= alternating_medians({"loops": own_loops, "soac form": lambda: soac_form(a, b)}, max(3, rounds // 4))
    return [
        ("matmul 1024² (soac.matmul → OpenBLAS)", "numpy", times["ours"], times["numpy"]),
        ("matmul 1024² (soac.matmul → runtime loops)", "numpy", times["loops"], times["numpy"]),
        ("matmul 1024² (SOAC form: map of map-reduce)", "numpy", times["soac form"], times["numpy"]),
    ]


def model_rows(rounds: int) -> list[tuple]:
    jax, jnp = jax_modules()
    rng = np.random.default_rng(1)
    rows = []
    programs = {
        "MLP 256×512→512→10, value and gradient": (
            mlp.loss, (rng.standard_normal((256, 512)), rng.standard_normal((256, 10)), rng.standard_normal((512, 512)) * 0.05,
                  np.zeros(512), rng.standard_normal((512, 10)) * 0.05, np.zeros(10)), (2, 3, 4, 5)),
        "attention 512×64, value and gradient": (
            attention.loss, tuple(rng.standard_normal((512, 64)) * 0.3 for _ in range(3)), (0, 1, 2)),
    }
    for name, (program, args, wrt) in programs.items():
        ours = soac.jit(soac.value_and_grad(lambda *a, p=program: p(snp, *a), argnums=wrt))
        theirs = jax.jit(jax.value_and_grad(lambda *a, p=program: p(jnp, *a), argnums=wrt))
        with products_as_soacs():
            before = soac.jit(soac.value_and_grad(lambda *a, p=program: p(snp, *a), argnums=wrt))
            before(*args)  # traced while products are SOACs
        value, gradients = ours(*args)
        jax_value, jax_gradients = theirs(*args)
        check([value, *gradients], [jax_value, *jax_gradients], name)
        check(before(*args)[1], jax_gradients, name)
        times = alternating_medians(
            {"ours": lambda: ours(*args), "JAX": lambda: jax.block_until_ready(theirs(*args)),
             "before": lambda: before(*args)}, rounds)
        rows.append((name, "JAX", times["ours"], times["JAX"]))
        rows.append((f"{name} (products as SOACs)", "JAX", times["before"], times["JAX"]))
    return rows


@contextlib.contextmanager
def products_as_soacs():
    """Traces products as the frontend did before soac.matmul (maps of fused
    map-reduces), for the comparison."""
    from soac.frontend._numpy import products

    contraction = products._as_contraction
    products._as_contraction = lambda a: False
    try:
        yield
    finally:
        products._as_contraction = contraction


def adbench_rows(rounds: int) -> list[tuple]:
    import importlib

    jax, _ = jax_modules()
    rows = []
    for name, size in (("hand", "small"), ("gmm", "small")):
        module = importlib.import_module(name)
        inputs = module.inputs(**module.SIZES[size])
        fn, args = module.soac_version(*inputs)
        ours = soac.value_and_grad(fn, argnums=tuple(module.WRT))
        f, jax_args = module.jax_version(*inputs)
        theirs = jax.jit(jax.value_and_grad(f, argnums=module.WRT))
        value, gradients = ours(*args)
        jax_value, jax_gradients = theirs(*jax_args)
        gradients = gradients if isinstance(gradients, tuple) else (gradients,)
        jax_gradients = jax_gradients if isinstance(jax_gradients, tuple) else (jax_gradients,)
        check([value, *gradients], [jax_value, *jax_gradients], module.NAME)
        times = alternating_medians(
            {"ours": lambda: ours(*args), "JAX": lambda: jax.block_until_ready(theirs(*jax_args))}, rounds)
        rows.append((f"{module.NAME} ({size}), value and gradient", "JAX", times["ours"], times["JAX"]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    soac.set_num_threads(1)
    rows = matmul_rows(options.rounds) + model_rows(options.rounds) + adbench_rows(options.rounds)
    lines = [
        f"Float64, one thread for every tool, medians of {options.rounds} rounds in which ours and the peer's "
        "calls alternate, after a compiling warm-up (`bench/dense.py`); the peer is numpy (OpenBLAS) or "
        "JAX (XLA, CPU), all in one process pinned to one core. Timings on a shared 2-core machine: ratios within ±10 % are noise.",
        "",
        "| program | peer | ours (ms) | peer (ms) | ours / peer |",
        "|---|---|---:|---:|---:|",
    ]
    for name, peer, ours, theirs in rows:
        lines.append(f"| {name} | {peer} | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {ours / theirs:.2f} |")
    table = "\n".join(lines)
    print(table)
    if not options.no_write:
        write_section("dense", "Dense programs against tuned libraries", table)


if __name__ == "__main__":
    main()
