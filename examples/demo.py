"""The soac demo: one program, read from a file and built in Python.

1. parses and verifies examples/softmax_matvec.mlir and prints it;
2. builds the same program with soac.builders and checks that both print the same;
3. shows the error a malformed program raises (from the C++ verifier).

Run it with `make demo` (which also runs `soac-opt` on the file), or
`.venv/bin/python examples/demo.py`.
"""

from __future__ import annotations

import pathlib

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


if __name__ == "__main__":
    main()
