"""The soac demo: one program, read from a file and built in Python, then run.

1. parses and verifies examples/softmax_matvec.mlir and prints it;
2. builds the same program with soac.builders and checks that both print the same;
3. shows the error a malformed program raises (from the C++ verifier);
4. compiles softmax(A @ x) for the CPU (all cores), runs it on a 2000 x 1000
   matrix and prints it next to numpy's result and the reference interpreter's;
5. compiles @grad, the vector-Jacobian product of softmax(A @ x) with respect
   to x (soac-autodiff: reverse mode by re-execution), and prints it next to
   central finite differences.

Run it with `make demo` (which also runs `soac-opt` on the file), or
`.venv/bin/python examples/demo.py`.
"""

from __future__ import annotations

import pathlib
import time

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, math

import soac
from soac import builders

PROGRAM = pathlib.Path(__file__).with_name("softmax_matvec.mlir")


def build_softmax_matvec() -> ir.Module:
    """softmax(A · x) and its vjp with respect to x, built from Python callables."""
    f32 = ir.F32Type.get()
    dyn = ir.ShapedType.get_dynamic_size()
    matrix, vector = ir.RankedTensorType.get([dyn, dyn], f32), ir.RankedTensorType.get([dyn], f32)
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):

        @func.FuncOp.from_py_func(matrix, vector)
        def softmax_matvec(A, x):
            zero = arith.constant(f32, 0.0)
            ninf = arith.constant(f32, float("-inf"))

            def row_dot(row):
                products = builders.map([row, x], arith.mulf)
                return builders.reduce(products, zero, arith.addf)

            scores = builders.map(A, row_dot)
            largest = builders.reduce(scores, ninf, arith.maximumf)
            exps = builders.map(scores, lambda s: math.exp(arith.subf(s, largest)))
            total = builders.reduce(exps, zero, arith.addf)
            return builders.map(exps, lambda e: arith.divf(e, total))

        @func.FuncOp.from_py_func(matrix, vector, vector)
        def grad(A, x, cotangent):
            _, gradient = builders.vjp(softmax_matvec.func_op, [A, x, cotangent], wrt=[1])
            return gradient

    return module


def main() -> None:
    with ir.Context(), ir.Location.unknown():
        parsed = soac.parse_file(PROGRAM)
        soac.verify(parsed)
        print(f"== {PROGRAM.name}, parsed and verified by Python")
        print(parsed)

        built = build_softmax_matvec()
        soac.verify(built)
        same = str(built) == str(parsed)
        print(f"== the same program built with soac.builders prints identically: {same}")
        if not same:
            print(built)
            raise SystemExit("the Python-built program differs from the file")

        print("== a malformed program (a gradient missing for `wrt [0, 1]`) raises soac.ParseError:")
        broken = PROGRAM.read_text().replace("wrt [1]", "wrt [0, 1]")
        try:
            soac.parse(broken)
        except soac.ParseError as error:
            print(str(error).splitlines()[1])
        else:
            raise SystemExit("the malformed program was accepted")

        run_on_the_cpu(parsed)
    differentiate()


def run_on_the_cpu(module: ir.Module) -> None:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2000, 1000)).astype(np.float32) / 30
    x = rng.standard_normal(1000).astype(np.float32)
    start = time.perf_counter()
    softmax_matvec = soac.compile(module, "softmax_matvec")
    compile_time = time.perf_counter() - start
    ours = softmax_matvec(A, x)
    scores = A @ x
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    oracle = soac.interpret(module, "softmax_matvec", A[:50], x)  # the interpreter is slow: 50 rows
    print(f"== softmax(A @ x) compiled for the CPU in {compile_time:.2f} s, run on {soac.get_num_threads()} threads")
    print(f"   soac : {np.array2string(ours[:5], precision=6)}")
    print(f"   numpy: {np.array2string(expected[:5], precision=6)}")
    print(f"   max relative difference to numpy: {np.max(np.abs(ours - expected)) / expected.max():.1e}")
    compiled_rows = softmax_matvec(A[:50], x)
    print(f"   max difference to the interpreter on 50 rows: {np.max(np.abs(compiled_rows - oracle)):.1e}")
    if not np.allclose(ours, expected, rtol=1e-4, atol=1e-7):
        raise SystemExit("the compiled program disagrees with numpy")


def differentiate() -> None:
    # In float64, so that finite differences are accurate.
    program = PROGRAM.read_text().replace("f32", "f64")
    rng = np.random.default_rng(1)
    A = rng.standard_normal((300, 8))
    x = rng.standard_normal(8)
    cotangent = rng.standard_normal(300)
    start = time.perf_counter()
    grad = soac.compile(program, "grad")  # the soac.vjp in @grad is expanded by soac-autodiff
    compile_time = time.perf_counter() - start
    gradient = grad(A, x, cotangent)
    primal = soac.compile(program, "softmax_matvec")
    step = 1e-6
    finite = np.array(
        [
            (cotangent @ primal(A, x + step * e) - cotangent @ primal(A, x - step * e)) / (2 * step)
            for e in np.eye(len(x))
        ]
    )
    print(f"== d/dx <c, softmax(A @ x)> (soac.vjp, reverse mode), compiled in {compile_time:.2f} s")
    print(f"   soac              : {np.array2string(gradient[:5], precision=8)}")
    print(f"   finite differences: {np.array2string(finite[:5], precision=8)}")
    error = np.max(np.abs(gradient - finite)) / np.max(np.abs(finite))
    print(f"   max relative difference: {error:.1e}")
    if error > 1e-6:
        raise SystemExit("the gradient disagrees with finite differences")

    start = time.perf_counter()
    jacobian = soac.mlir.jacfwd(program, "softmax_matvec", wrt=1)  # forward mode: 8 tangent lanes per pass
    compile_time = time.perf_counter() - start
    J = jacobian(A, x)
    agreement = np.max(np.abs(cotangent @ J - gradient)) / np.max(np.abs(gradient))
    print(f"== the Jacobian of softmax(A @ x) w.r.t. x (soac.jacfwd: forward mode, vector lanes), compiled in {compile_time:.2f} s")
    print(f"   shape {J.shape}; c @ J against the reverse-mode gradient: max relative difference {agreement:.1e}")
    if agreement > 1e-10:
        raise SystemExit("forward and reverse mode disagree")


if __name__ == "__main__":
    main()
