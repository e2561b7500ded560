"""GPU kernels checked without a GPU: convert-soac-to-gpu's kernels, run by
soac-emulate-gpu-launches as loops over their blocks and threads on the CPU,
compute what the reference interpreter does.

Only kernels whose threads never wait for each other can run this way (maps
run one thread per row, folds of vector rows, scatters, histograms);
reductions and scans synchronize their threads and run only on a GPU
(test_compile_gpu.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

import soac
from soac.compiler import lower, public_functions, signature
from soac.runtime import jit

from gpu_programs import CASES, SIZES, assert_same_results


class EmulatedGpu:
    """convert-soac-to-gpu, its launches made loops, then the CPU pipeline
    (which finds no SOAC left and bufferizes and lowers the kernels' code)."""

    TARGET = "cpu"

    def pipeline(self) -> str:
        return (
            "builtin.module(soac-autodiff,inline,soac-simplify,canonicalize,cse,"
            "convert-soac-to-gpu,canonicalize,cse,soac-emulate-gpu-launches,"
            "soac-lower-to-cpu{openmp=false})"
        )


# The cases whose kernels all have independent threads (not
# product_histogram: its compare-and-swap loop, LLVM ops on raw pointers,
# stops buffer deallocation once it is host code).
EMULATED = [
    "saxpy",
    "positive",
    "scatter",
    "histogram",
    "batched_matvec",
    "weighted_gather_rows",
    "windows",
    "fold_rows_per_row",
    "insert_per_row",
    "matrix_per_row",
    "histogram_per_row",
    "sum_of_matrices",
    "histogram_of_rows",
    "sum_count_min_histogram",
    "matmul",
]


def emulated(source: str, function: str):
    with ir.Context():
        module = soac.parse(source)
        entry = signature(function, public_functions(module)[function])
        lowered = lower(module, options=EmulatedGpu(), only=function)
        return jit.jit(lowered, [entry], openmp=False)[function]


@pytest.mark.parametrize("n", SIZES[:4])
@pytest.mark.parametrize("function", EMULATED)
def test_kernels_compute_what_the_interpreter_does(function, n):
    source, make_args = CASES[function]
    args = make_args(n)
    actual = emulated(source, function)(*args)
    with ir.Context():
        expected = soac.interpret(soac.parse(source), function, *args)
    assert_same_results(actual, expected, n)


def test_kernels_that_synchronize_threads_are_errors():
    source, _ = CASES["sum"]
    with pytest.raises(soac.LoweringError, match="cannot be emulated by sequential threads"):
        emulated(source, "sum")
