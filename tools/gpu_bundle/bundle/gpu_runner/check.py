"""The bundle's integrity, without a GPU: every file as the manifest lists
it (sha256), every library loadable (dlopen resolves all its symbols: soac's
GPU runtime beside it, the C library; the CUDA driver is opened only at run
time) and exporting its functions, every data file readable with one array
per argument and result of the signature; then whether a CUDA driver and
device are here, which is a skip, not a failure, where there are none."""

from __future__ import annotations

import ctypes
import json
import os
import pathlib

import numpy as np

import soac_runtime

from . import manifest
from .driver import Driver, DriverError

RUNTIME_SYMBOLS = ("soac_gpu_status", "soac_gpu_alloc", "soac_gpu_free", "soac_gpu_set_stream", "soac_gpu_set_memory",
                   "mgpuLaunchKernel", "mgpuModuleLoad", "soac_call_checked", "soac_failure_record")


def library_problems(bundle: pathlib.Path, program: dict, loaded: dict) -> list[str]:
    path = bundle / program["library"]
    if path not in loaded:
        try:
            # RTLD_NOW: every undefined symbol resolved now, or an error.
            loaded[path] = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as error:
            loaded[path] = error
    handle = loaded[path]
    if isinstance(handle, OSError):
        return [f"{program['library']}: does not load: {handle}"]
    missing = [s for s in ("_mlir_ciface_" + program["function"], *RUNTIME_SYMBOLS) if not hasattr(handle, s)]
    return [f"{program['library']}: lacks {', '.join(missing)}"] if missing else []


def data_problems(bundle: pathlib.Path, program: dict) -> list[str]:
    with open((bundle / program["library"]).with_suffix(".json")) as f:
        signatures = {e["name"]: soac_runtime.Signature.from_json(e) for e in json.load(f)["functions"]}
    signature = signatures.get(program["function"])
    if signature is None:
        return [f"{program['name']}: no signature for {program['function']}"]
    problems = []
    for run in program["runs"]:
        # A run that must fail has no expected outputs.
        results = () if run.get("error") else signature.results
        for prefix, specs in (("arg", signature.args), ("expected", results)):
            path = run["args" if prefix == "arg" else "expected"]
            data = np.load(bundle / path)
            for i, spec in enumerate(specs):
                key = f"{prefix}{i}"
                if key not in data.files:
                    problems.append(f"{path}: no {key}")
                elif spec.is_tensor and data[key].ndim != len(spec.shape):
                    problems.append(f"{path}: {key} has rank {data[key].ndim}, the signature {len(spec.shape)}")
    return problems


def driver_status() -> tuple[str, dict | None]:
    """("ready", the device) or ("skipped: <why>", None)."""
    try:
        return "ready", Driver().describe()
    except DriverError as error:
        return f"skipped: {error}", None


def check(bundle: pathlib.Path) -> dict:
    data = manifest.read(bundle)
    problems = manifest.verify(bundle, data)
    loaded: dict = {}
    built = [p for p in data["programs"] if "build_error" not in p]
    for program in built:
        problems += library_problems(bundle, program, loaded)
        problems += data_problems(bundle, program)
    status, device = driver_status()
    return {
        "integrity": "passed" if not problems else "failed",
        "problems": problems,
        "files": len(data["files"]),
        "bytes": data["bytes"],
        "programs": len(data["programs"]),
        "not_built": {p["name"]: p["build_error"] for p in data["programs"] if "build_error" in p},
        "libraries": len(loaded),
        "built": data["built"],
        "gpu": status,
        "device": device,
    }
