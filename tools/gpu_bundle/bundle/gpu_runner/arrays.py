"""soac's own Python loader (soac_runtime.py, soac_device.py) on arrays that
CuPy or PyTorch made on the GPU, inside a child process: the suite programs'
arguments passed as that library's GPU arrays (by their pointer), results
taken back as DeviceArrays through ``__cuda_array_interface__`` (CuPy) or
DLPack (PyTorch), on the library's own stream, each call timed by CUDA
events; checked against the CPU build's outputs. One JSON line per program."""

from __future__ import annotations

import json

import numpy as np

import soac_runtime

from .programs import compare, rows_of

# The suite run each program is checked on: its largest under 2 MB.
RUN_LABEL = "n1003"


class Cupy:
    def __init__(self):
        import cupy

        self.cupy = cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def to_device(self, array: np.ndarray):
        return self.cupy.asarray(array)

    def to_host(self, result) -> np.ndarray:
        return self.cupy.asnumpy(self.cupy.asarray(result))  # __cuda_array_interface__


class Torch:
    def __init__(self):
        import torch

        self.torch = torch
        self.stream = torch.cuda.Stream()

    def to_device(self, array: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(array)).cuda()

    def to_host(self, result) -> np.ndarray:
        return self.torch.from_dlpack(result).cpu().numpy()  # DLPack


LIBRARIES = {"cupy": Cupy, "torch": Torch}


def suite_runs(programs: list[dict]) -> list[tuple[dict, dict]]:
    """The suite programs and the run each is checked on."""
    chosen = []
    for program in programs:
        if program["kind"] != "suite" or "build_error" in program:
            continue
        run = next((r for r in program["runs"] if r["label"] == RUN_LABEL), None)
        if run is not None:
            chosen.append((program, run))
    return chosen


def run(bundle: str, programs: list[dict], library: str, start: int) -> None:
    arrays = LIBRARIES[library]()
    for index, (program, spec) in enumerate(suite_runs(programs)[start:], start):
        function = getattr(soac_runtime.load_library(f"{bundle}/{program['library']}"), program["function"])
        data, outputs = np.load(f"{bundle}/{spec['args']}"), np.load(f"{bundle}/{spec['expected']}")
        args = [data[f"arg{i}"] for i in range(len(function.signature.args))]
        expected = tuple(outputs[f"expected{i}"] for i in range(len(function.signature.results)))
        placed = [arrays.to_device(a) if s.is_tensor else a for a, s in zip(args, function.signature.args)]
        results, ms = function.timed(*placed, device_results=True, stream=arrays.stream)
        results = results if isinstance(results, tuple) else (results,)
        actual = tuple(arrays.to_host(r) if isinstance(r, soac_runtime.DeviceArray) else r for r in results)
        problem = compare(actual, expected, rows_of(spec["label"]), "suite")
        print(json.dumps({"run": index, "library": library, "name": program["name"], "label": spec["label"],
                          "passed": problem is None, "problem": problem, "ms": ms}), flush=True)
