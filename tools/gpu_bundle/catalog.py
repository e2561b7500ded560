"""What the GPU bundle holds: the programs to compile (one function each,
into its own library) and their runs (arguments, and the outputs the CPU
build computes).

Four kinds of program:

* ``suite``: every GPU program of the test suite (test/python/gpu_programs.py),
  at the sizes of its tests (those over 7 rows where the arguments stay small);
* ``adbench``: each ADBench objective (bench/adbench) and its value and
  gradient, at ADBench's small and large sizes, timed against the JAX and
  PyTorch twins of the same modules; with them two dense programs written
  to the same protocol (bench/adbench/mlp.py, attention.py), whose time is
  their matrix products;
* ``bandwidth``: the kernels of bandwidth.mlir, whose 1e8-element inputs the
  runner makes itself;
* ``failure``: gathers whose kernels check their indices
  (gpu_programs.CHECKED_GATHERS), with runs that must stop with an
  IndexOutOfRangeError and clean runs after them.

Expected outputs come from the CPU build of the same program, which the test
suite checks against the reference interpreter (too slow at these sizes).
"""

from __future__ import annotations

import importlib
import pathlib
import sys
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

import soac
from soac.frontend import tracing

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "bench" / "adbench"))

import gpu_programs  # noqa: E402

ADBENCH = ("gmm", "lstm", "ba", "hand", "kmeans", "mlp", "attention")
# The test suite's sizes, those over 7 rows only where a run's arguments
# stay under RUN_BYTES (the bundle must fit in 64 MiB).
SUITE_SIZES = gpu_programs.SIZES
RUN_BYTES = 2 << 20
BANDWIDTH = ("scale", "sum", "cumsum", "histogram", "scatter")
FAILURES = ("gather", "gathered_sum", "gathered_row_sums")


@dataclass
class Run:
    """One call: its label, arguments and expected outputs. Runs with the
    same ``args_key`` share one file of arguments (an objective and its
    gradient at one size)."""

    label: str
    args: tuple
    expected: tuple
    args_key: str | None = None
    error: str | None = None  # what the message of the error it must raise matches


@dataclass
class Program:
    name: str  # "suite/sum", "adbench/GMM/gradient", "bandwidth/scale"
    kind: str
    module: ir.Module
    function: str  # the one public function of its library
    runs: list[Run] = field(default_factory=list)
    details: dict = field(default_factory=dict)  # adbench: the twin module, its size, wrt

    @property
    def directory(self) -> str:
        """Its library's folder under the bundle's libraries/."""
        return self.name.replace("/", "_")


def flat(values) -> tuple:
    """Results as a flat tuple of numpy values (pytrees of tuples flattened)."""
    if isinstance(values, (tuple, list)):
        return tuple(v for value in values for v in flat(value))
    return (np.asarray(values) if isinstance(values, np.ndarray) else values,)


def suite_programs(context: ir.Context, only: set[str] | None, sizes: list[int]) -> list[Program]:
    """The functions of gpu_programs.CASES (all, or ``only``)."""
    programs = []
    for function, (source, make_args) in sorted(gpu_programs.CASES.items()):
        if only is not None and function not in only:
            continue
        cpu = soac.compile(source, function, target="cpu")
        with context:
            program = Program(f"suite/{function}", "suite", soac.parse(source), function)
        # Data grow with the rows: a run's bytes estimated from 1,000 rows'.
        bytes_per_row = sum(np.asarray(v).nbytes for v in make_args(1000)) / 1000
        for n in sizes:
            if n > 7 and n * bytes_per_row > RUN_BYTES:
                continue
            args = make_args(n)
            program.runs.append(Run(f"n{n}", args, flat(cpu(*args))))
        programs.append(program)
    return programs


def adbench_programs(names: tuple[str, ...], sizes: tuple[str, ...], derivatives: tuple[bool, ...],
                     static_inner_sizes_up_to: int = tracing.GPU_SMALL_INNER_SIZE) -> list[Program]:
    """Each objective and its value and gradient, traced by the frontend
    (dynamic sizes: one library serves every size whose trace is the same).

    A size whose trace differs (D-LSTM unrolls its layers at trace time, and
    the large size has more of them) gets a program of its own, named
    ``<objective>/<kind>@<size>``: a library traced for another size would
    compute another model on its arguments."""
    programs = []
    for name in names:
        module = importlib.import_module(name)
        for derivative in derivatives:
            kind = "gradient" if derivative else "primal"
            by_trace: dict[str, Program] = {}
            for size in sizes:
                function, args = module.soac_version(*module.inputs(**module.SIZES[size]))
                traced_function = soac.value_and_grad(function, argnums=tuple(module.WRT)) if derivative else function
                jitted = soac.jit(traced_function, static_inner_sizes_up_to=static_inner_sizes_up_to)
                traced = jitted.trace(*args)
                program = by_trace.get(str(traced.module))
                if program is None:
                    suffix = f"@{size}" if by_trace else ""
                    program = Program(
                        f"adbench/{module.NAME}/{kind}{suffix}",
                        "adbench",
                        traced.module,
                        traced.name,
                        # The twins take the first `inputs` arguments (ADBench's inputs); ours
                        # also the index tables soac_version adds after them.
                        details={"twin": name, "objective": module.NAME, "derivative": derivative,
                                 "wrt": list(module.WRT), "inputs": len(module.inputs(**module.TINY))},
                    )
                    by_trace[str(traced.module)] = program
                    programs.append(program)
                program.runs.append(Run(size, args, flat(jitted(*args)), args_key=f"adbench_{name}"))
    return programs


def bandwidth_programs(context: ir.Context) -> list[Program]:
    with context:
        module = soac.parse((HERE / "bandwidth.mlir").read_text())
    return [Program(f"bandwidth/{function}", "bandwidth", module, function) for function in BANDWIDTH]


def failure_programs(context: ir.Context, functions: tuple[str, ...] = FAILURES) -> list[Program]:
    """The gathers of gpu_programs.CHECKED_GATHERS (all, or ``functions``) and their runs
    (gpu_programs.checked_runs): a failing run has no expected outputs, but
    the message its error must match."""
    programs = []
    for function in functions:
        cpu = soac.compile(gpu_programs.CHECKED_GATHERS, function, target="cpu")
        with context:
            program = Program(f"failure/{function}", "failure", soac.parse(gpu_programs.CHECKED_GATHERS), function)
        for label, args, error in gpu_programs.checked_runs(function):
            program.runs.append(Run(label, args, () if error else flat(cpu(*args)), error=error))
        programs.append(program)
    return programs
