"""The gradient-cost report (soac.gradient_cost) of every JAX twin and every
ADBench objective: the work and memory of the vjp soac-autodiff generates as
a multiple of the primal's (every size set to 1000, from the IR, not timed)
and the constructs it flags as growing faster than the primal.

Run it with `.venv/bin/python bench/gradient_cost.py`; it writes its section
of docs/benchmarks.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys

from common import ROOT, write_section

import soac

sys.path.insert(0, str(ROOT / "bench" / "adbench"))
_spec = importlib.util.spec_from_file_location("jax_twins_common", ROOT / "examples" / "jax_twins" / "common.py")
twins = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(twins)


def twin_costs(name: str) -> list:
    program = twins.load(name, "soac")
    inputs = program.inputs(7, 0)
    return program.gradient.gradient_cost(*[inputs[a] for a in getattr(program, "GRADIENT_ARGS", program.ARGS)])


def adbench_costs(name: str) -> list:
    module = importlib.import_module(name)
    function, args = module.soac_version(*module.inputs(**module.TINY))
    return soac.value_and_grad(function, argnums=tuple(module.WRT)).gradient_cost(*args)


def row(suite: str, name: str, cost) -> str:
    flags = "; ".join(f"{flag.cost} as {flag.grows_as} (primal {flag.primal})"
                      + (f", at {flag.operations[0]}" if flag.operations else "") for flag in cost.flags) or "none"
    return f"| {suite} | {name} | `@{cost.function}` | {cost.work_ratio(1e3):.2f} | {cost.memory_ratio(1e3):.2f} | {flags} |"


def main() -> None:
    rows = []
    for name in twins.PROGRAMS:
        rows += [row("JAX twin", name, cost) for cost in twin_costs(name)]
    for name in ("gmm", "lstm", "ba", "hand", "kmeans"):
        rows += [row("ADBench", name, cost) for cost in adbench_costs(name)]
    table = "\n".join([
        "From the IR alone (`soac.gradient_cost`): the work and memory of each vjp as a multiple of its primal's, "
        "every size set to 1000, and the terms of the gradient no term of the primal bounds (sizes are symbols "
        "`x<i>` for argument i's leading size, `x<i>_<d>` for its dimension d). A flag on sizes that are fixed "
        "in practice (a camera's 11 parameters) is the cost of a dense adjoint of a row the primal reads a few "
        "elements of.",
        "",
        "| suite | program | function | work × | memory × | grows faster than the primal |",
        "| --- | --- | --- | ---: | ---: | --- |",
        *rows,
    ])
    print(table)
    write_section("gradient-cost", "The gradient-cost report", table)


if __name__ == "__main__":
    main()
