"""The ADBench twins in JAX (jax.jit) and PyTorch (CUDA) on the inputs of
our runs, checked against the same expected outputs and timed the same way
(median wall time of synchronized calls), where the package is installed.

The twins are bench/adbench's modules, shipped in adbench/. They import soac
at their top for their soac halves, which this never calls: a placeholder
module stands in for it (and says so if anything reaches it).
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import sys
import time
import types

import numpy as np

from .programs import compare

TIME_BUDGET_S = 1.0


class _Absent(types.ModuleType):
    def __getattr__(self, name):
        raise AttributeError(f"soac.{name}: soac is not in the bundle; only the JAX and PyTorch twins run here")


def twin_module(bundle: str, name: str):
    for placeholder in ("soac", "soac.numpy"):
        sys.modules.setdefault(placeholder, _Absent(placeholder))
    sys.modules["soac"].numpy = sys.modules["soac.numpy"]
    sys.path.insert(0, os.path.join(bundle, "adbench"))
    return importlib.import_module(name)


def median_ms(call) -> float:
    def once() -> float:
        began = time.perf_counter()
        call()
        return time.perf_counter() - began

    first = once()
    repeats = int(min(50, max(3, TIME_BUDGET_S / max(first, 1e-6))))
    return 1e3 * statistics.median(once() for _ in range(repeats))


def jax_callables(module, inputs: tuple, details: dict):
    import jax

    f, args = module.jax_version(*inputs)
    args = jax.device_put(args)
    jitted = jax.jit(jax.value_and_grad(f, argnums=tuple(details["wrt"])) if details["derivative"] else f)

    def call():
        return jax.block_until_ready(jitted(*args))

    return call, lambda out: (out[0], *out[1]) if details["derivative"] else (out,), f"JAX {jax.__version__} ({jax.devices()[0].platform})"


def torch_callables(module, inputs: tuple, details: dict):
    import torch

    torch.set_default_device("cuda")
    f, args = module.torch_version(*inputs)
    wrt = [args[i].requires_grad_(True) for i in details["wrt"]] if details["derivative"] else []

    def call():
        if details["derivative"]:
            value = f(*args)
            out = (value, *torch.autograd.grad(value, wrt))
        else:
            with torch.no_grad():
                out = (f(*args),)
        torch.cuda.synchronize()
        return out

    return call, lambda out: out, f"PyTorch {torch.__version__} (CUDA)"


def run(bundle: str, program: dict, tool: str) -> None:
    details = program["details"]
    module = twin_module(bundle, details["twin"])
    make = jax_callables if tool == "jax" else torch_callables
    for index, spec in enumerate(program["runs"]):
        data, outputs = np.load(f"{bundle}/{spec['args']}"), np.load(f"{bundle}/{spec['expected']}")
        inputs = tuple(data[f"arg{i}"] for i in range(details["inputs"]))
        expected = tuple(outputs[f"expected{i}"] for i in range(len(outputs.files)))
        call, results, version = make(module, inputs, details)
        actual = tuple(np.asarray(_host(v)) for v in results(call()))
        problem = compare(actual, expected, 1, "adbench")
        print(json.dumps({"run": index, "label": spec["label"], "tool": version, "passed": problem is None,
                          "problem": problem, "ms": median_ms(call)}), flush=True)


def _host(value):
    """A JAX array or a CUDA tensor as something numpy reads."""
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return value
