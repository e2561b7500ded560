"""A failure program's runs, inside a child process, through soac's loader
(soac_runtime.py), whose checked calls turn a failed check into an
exception: a run with an ``error`` must raise IndexOutOfRangeError with a
message that matches it (a check in a kernel recorded the failure, and the
call stopped after the launch), the others must give their expected
outputs, also right after a failed run. One JSON line per run."""

from __future__ import annotations

import json
import re

import numpy as np

import soac_runtime

from .programs import compare, rows_of


def outcome(function, args: list, spec: dict, expected: tuple) -> str | None:
    """Why the run did not do what ``spec`` says, or None."""
    try:
        results = function(*args)
    except soac_runtime.IndexOutOfRangeError as error:
        if spec.get("error") is None:
            return f"raised {error}"
        return None if re.search(spec["error"], str(error)) else f"the message {str(error)!r} does not match {spec['error']!r}"
    except Exception as error:  # anything else is the failure the run looks for
        return f"raised {type(error).__name__}: {error}"
    if spec.get("error") is not None:
        return f"returned, where an IndexOutOfRangeError matching {spec['error']!r} was expected"
    results = results if isinstance(results, tuple) else (results,)
    return compare(results, expected, rows_of(spec["label"]), "suite")


def run(bundle: str, program: dict, start: int) -> None:
    function = getattr(soac_runtime.load_library(f"{bundle}/{program['library']}"), program["function"])
    for index, spec in enumerate(program["runs"][start:], start):
        data, outputs = np.load(f"{bundle}/{spec['args']}"), np.load(f"{bundle}/{spec['expected']}")
        args = [data[f"arg{i}"] for i in range(len(function.signature.args))]
        expected = tuple(outputs[f"expected{i}"] for i in range(len(outputs.files)))
        problem = outcome(function, args, spec, expected)
        print(json.dumps({"run": index, "label": spec["label"], "passed": problem is None, "problem": problem}), flush=True)
