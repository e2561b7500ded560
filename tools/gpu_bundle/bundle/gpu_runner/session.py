"""A whole run on a GPU machine: the integrity check, the device's copy
bandwidth, every program against its expected outputs (in managed memory,
and in device memory where its host code reads no buffer), the suite
programs on CuPy's and PyTorch's GPU arrays through soac's loader, the bandwidth
kernels, then the ADBench twins in JAX and PyTorch, all in children under
one time budget (what does not fit is reported as skipped)."""

from __future__ import annotations

import importlib.util
import pathlib
import time
from typing import Callable

from . import arrays
from .check import check
from .children import Deadline, run_child

# The sections of a run, in their order; `--skip` leaves some out.
SECTIONS = ("programs", "arrays", "bandwidth", "peers")
PROGRAM_TIMEOUT_S = 60
BANDWIDTH_TIMEOUT_S = 120
PEER_TIMEOUT_S = 240
# JAX takes most of the GPU's memory at start by default.
PEER_ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


def modes(program: dict) -> list[str]:
    """Failures are called as soac's loader calls (managed memory)."""
    if program["kind"] == "failure" or program["host_accesses"]:
        return ["managed"]
    return ["managed", "device"]


def program_runs(program: dict, mode: str, deadline: Deadline) -> list[dict]:
    """Every run of ``program`` in ``mode``."""
    return runs_in_children(lambda start: ["program", program["name"], mode, str(start)],
                            [r["label"] for r in program["runs"]], deadline)


def runs_in_children(arguments: Callable[[int], list[str]], labels: list[str], deadline: Deadline) -> list[dict]:
    """A JSON line per run of ``labels``: a child (``arguments(start)``) from
    the first run not yet done, again after each crash (the run it crashed in
    is failed)."""
    results: list[dict] = []
    total = len(labels)
    while len(results) < total:
        child = run_child(arguments(len(results)), PROGRAM_TIMEOUT_S, deadline)
        results += child["lines"]
        if child["failure"] is not None and len(results) < total:
            results.append({"run": len(results), "label": labels[len(results)], "passed": False, "problem": child["failure"]})
            if child["failure"].startswith("skipped"):
                results += [{"run": i, "label": labels[i], "passed": False, "problem": child["failure"]}
                            for i in range(len(results), total)]
    return results


def array_runs(selected: list[dict], only: str | None, deadline: Deadline) -> tuple[list[str], list[dict]]:
    """The suite programs called by soac's Python loader on GPU arrays of
    each of CuPy and PyTorch that is installed (gpu_runner/arrays.py)."""
    libraries = [name for name in arrays.LIBRARIES if importlib.util.find_spec(name)]
    labels = [program["name"] for program, _ in arrays.suite_runs(selected)]
    results = []
    for library in libraries:
        lines = runs_in_children(lambda start: ["arrays", library, str(start), only or ""], labels, deadline)
        results += [{"library": library, "name": labels[line["run"]], **line} for line in lines]
    return libraries, results


def run(bundle: pathlib.Path, data: dict, only: str | None, elements: int, budget_s: float,
        skipped: set[str] = frozenset()) -> dict:
    began = time.monotonic()
    deadline = Deadline(budget_s)
    report: dict = {"check": check(bundle), "skipped_sections": sorted(skipped)}
    if report["check"]["integrity"] != "passed" or report["check"]["gpu"] != "ready":
        return report
    selected = [p for p in data["programs"] if only is None or only in p["name"]]
    copy = run_child(["copy", str(elements)], BANDWIDTH_TIMEOUT_S, deadline)
    report["copy"] = copy["lines"][0] if copy["lines"] else {"failure": copy["failure"]}

    report["programs"] = []
    for program in (p for p in selected if p["kind"] != "bandwidth" and "programs" not in skipped):
        entry = {"name": program["name"], "kind": program["kind"], "host_accesses": program.get("host_accesses", []),
                 "modes": {}}
        if "build_error" in program:
            entry["build_error"] = program["build_error"]
            report["programs"].append(entry)
            continue
        for mode in modes(program):
            entry["modes"][mode] = program_runs(program, mode, deadline)
        report["programs"].append(entry)
        print(f"  {program['name']}: " + ", ".join(
            f"{mode} {sum(r['passed'] for r in runs)}/{len(runs)}" for mode, runs in entry["modes"].items()), flush=True)

    report["array_libraries"], report["arrays"] = array_runs(selected, only, deadline) if "arrays" not in skipped else ([], [])
    print(f"  GPU arrays in and out ({', '.join(report['array_libraries']) or 'neither CuPy nor PyTorch installed'}): "
          f"{sum(r['passed'] for r in report['arrays'])}/{len(report['arrays'])} passed", flush=True)

    report["bandwidth"] = []
    for program in (p for p in selected if p["kind"] == "bandwidth" and "build_error" not in p
                    and "bandwidth" not in skipped):
        for mode in modes(program):
            child = run_child(["bandwidth", program["name"], mode, str(elements)], BANDWIDTH_TIMEOUT_S, deadline)
            line = child["lines"][0] if child["lines"] else {
                "kernel": program["function"], "mode": mode, "passed": False, "problem": child["failure"]}
            report["bandwidth"].append(line)
            print(f"  {program['name']} ({mode}): {line.get('gb_s', 0):.0f} GB/s {line.get('problem') or ''}", flush=True)

    report["peers"] = []
    tools = [t for t, package in (("jax", "jax"), ("torch", "torch"))
             if importlib.util.find_spec(package) and "peers" not in skipped]
    report["peer_tools"] = tools
    for program in (p for p in selected if p["kind"] == "adbench" and "build_error" not in p):
        for tool in tools:
            child = run_child(["peer", program["name"], tool], PEER_TIMEOUT_S, deadline, PEER_ENV)
            report["peers"].append({"name": program["name"], "tool": tool, "runs": child["lines"], "failure": child["failure"]})
    report["seconds"] = round(time.monotonic() - began, 1)
    return report
