"""The GPU check bundle (tools/gpu_bundle): a subset built here, its runner's
integrity check (run.py --check, which needs neither soac nor a GPU), and,
where a GPU is, a run of it. Without a GPU that run is a visible skip."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from mlir import ir

import soac
from soac.compiler import GpuOptions, lower

from gpu_programs import LIBRARY

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "gpu_bundle"))

from host_accesses import host_buffer_accesses  # noqa: E402


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("gpu") / "bundle"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_bundle" / "build.py"), "--subset", str(out)], check=True,
                   capture_output=True, text=True)
    return out


def run_py(bundle: pathlib.Path, *args: str, without_soac: bool = False) -> subprocess.CompletedProcess:
    """run.py in a fresh interpreter; ``without_soac``: soac and MLIR made
    unimportable first, as on a GPU machine."""
    if not without_soac:
        return subprocess.run([sys.executable, str(bundle / "run.py"), *args], capture_output=True, text=True)
    hide = ("import sys, runpy; sys.modules.update(soac=None, mlir=None); "
            f"sys.argv = ['run.py', *{list(args)!r}]; runpy.run_path({str(bundle / 'run.py')!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True)


def test_the_check_passes_without_soac(bundle, tmp_path):
    done = run_py(bundle, "--check", str(tmp_path / "out"), without_soac=True)
    assert done.returncode == 0, done.stdout + done.stderr
    check = json.loads((tmp_path / "out" / "results.json").read_text())["check"]
    assert check["integrity"] == "passed", check["problems"]
    assert check["programs"] == 12 and check["libraries"] == 12
    assert (tmp_path / "out" / "results.md").read_text().startswith("# soac GPU bundle")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert {p["kind"] for p in manifest["programs"]} == {"suite", "adbench", "bandwidth", "failure"}
    assert all(path in manifest["files"] for path in ("run.py", "soac_runtime.py", "adbench/kmeans.py"))


def test_a_changed_file_fails_the_check(bundle, tmp_path):
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    library = next((copy / "libraries" / "suite_sum").glob("*.so"))
    library.write_bytes(library.read_bytes() + b"\0")
    (copy / "stray.txt").write_text("not in the manifest")
    done = run_py(copy, "--check")
    assert done.returncode == 1
    assert "libraries/suite_sum/libsum.so: sha256 differs from the manifest" in done.stdout
    assert "stray.txt: not in the manifest" in done.stdout


def test_the_run_needs_a_gpu(bundle, tmp_path):
    check = json.loads(run_py(bundle, "--check", str(tmp_path / "check")).stdout and
                       (tmp_path / "check" / "results.json").read_text())["check"]
    if check["gpu"] != "ready":
        done = run_py(bundle, str(tmp_path / "out"))
        assert done.returncode == 2 and "GPU: skipped" in done.stdout
        pytest.skip(f"no GPU to run the bundle on: {check['gpu']}")
    done = run_py(bundle, str(tmp_path / "out"), "--elements", "1000000", "--budget", "300")
    assert done.returncode == 0, done.stdout + done.stderr


def test_host_reads_of_buffers_become_copies_for_device_memory():
    """A reduce's scalar result is read by host code; with device_memory
    (soac-host-buffer-copies) the read is a copy by the runtime instead."""
    with ir.Context():
        module = soac.parse(LIBRARY)
        assert host_buffer_accesses(lower(module, options=GpuOptions(), only="saxpy")) == []
        reads = host_buffer_accesses(lower(module, options=GpuOptions(), only="sum"))
        copied = lower(module, options=GpuOptions(device_memory=True), only="sum")
    assert len(reads) == 1 and reads[0].startswith("llvm.load at ")
    assert host_buffer_accesses(copied) == []
    assert "llvm.call @soac_gpu_copy" in str(copied)


def test_the_runner_survives_crashing_programs(bundle, tmp_path, fake_cuda_driver):
    """The whole run against a stand-in driver whose kernel launches all fail
    (fake_cuda/libcuda.c): every run crashes its child, is reported failed,
    and the next run still happens, in managed and in device memory (the
    bundle's host code reads buffers by copies); the copy is timed."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(bundle / "run.py"), str(out), "--only", "/sum", "--elements", "1000"],
                          capture_output=True, text=True, env={**os.environ, "LD_LIBRARY_PATH": str(fake_cuda_driver)})
    assert done.returncode == 1, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["check"]["device"]["name"] == "fake CUDA driver (no GPU)"
    assert results["copy"]["gb_s"] > 0
    (suite_sum,) = results["programs"]
    assert suite_sum["name"] == "suite/sum" and suite_sum["host_accesses"] == []
    assert list(suite_sum["modes"]) == ["managed", "device"]
    for runs in suite_sum["modes"].values():
        assert [r["label"] for r in runs] == ["n7", "n1003"]
        assert all(not r["passed"] and "cuLaunchKernel failed" in r["problem"] for r in runs)
    assert [(k["kernel"], k["mode"], k["passed"]) for k in results["bandwidth"]] == [("sum", "managed", False), ("sum", "device", False)]
    assert "## Bandwidth" in (out / "results.md").read_text()


def test_failure_programs_run_through_the_loaders_checked_calls(bundle, tmp_path, fake_cuda_driver):
    """A failure program's runs go through soac's loader (checked calls): with
    the stand-in driver every launch fails, which each run reports as a
    DeviceError in its line, in one child (no crash, nothing aborted)."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(bundle / "run.py"), str(out), "--only", "failure/gather",
                           "--skip", "arrays,bandwidth,peers"],
                          capture_output=True, text=True, env={**os.environ, "LD_LIBRARY_PATH": str(fake_cuda_driver)})
    assert done.returncode == 1, done.stdout + done.stderr
    (gather,) = json.loads((out / "results.json").read_text())["programs"]
    assert list(gather["modes"]) == ["managed"]
    runs = gather["modes"]["managed"]
    assert [r["label"] for r in runs] == ["clean", "index57", "clean_again"]
    for run in runs:
        assert not run["passed"] and "raised DeviceError" in run["problem"] and "cuLaunchKernel failed" in run["problem"], run


def test_the_runner_leaves_out_the_sections_it_is_told_to(bundle, tmp_path, fake_cuda_driver):
    """--skip: the programs and bandwidth sections left out run nothing and
    the report says so; an unknown section is a usage error."""
    out = tmp_path / "out"
    environment = {**os.environ, "LD_LIBRARY_PATH": str(fake_cuda_driver)}
    done = subprocess.run([sys.executable, str(bundle / "run.py"), str(out), "--only", "/sum", "--elements", "1000",
                           "--skip", "programs,bandwidth,arrays,peers"], capture_output=True, text=True, env=environment)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["programs"] == [] and results["bandwidth"] == [] and results["arrays"] == [] and results["peers"] == []
    assert results["skipped_sections"] == ["arrays", "bandwidth", "peers", "programs"]
    assert "Sections left out (--skip): arrays, bandwidth, peers, programs." in (out / "results.md").read_text()
    wrong = subprocess.run([sys.executable, str(bundle / "run.py"), str(out), "--skip", "kernels"],
                           capture_output=True, text=True, env=environment)
    assert wrong.returncode == 2 and "--skip takes programs, arrays, bandwidth, peers, not kernels" in wrong.stderr


STAND_IN_CUPY = """
import numpy as np

class _Array:
    def __init__(self, array):
        self.array = np.ascontiguousarray(array)
        self.__cuda_array_interface__ = {"shape": self.array.shape, "typestr": self.array.dtype.str,
                                         "data": (self.array.ctypes.data, False), "version": 3, "strides": None}

def asarray(value):
    return _Array(value)

class cuda:
    class Stream:
        def __init__(self, non_blocking=False):
            self.ptr = 5
"""


def test_the_runner_passes_gpu_arrays_through_the_loader(bundle, tmp_path, fake_cuda_driver):
    """The arrays section with a stand-in CuPy (host arrays behind
    ``__cuda_array_interface__``) and the stand-in driver: soac's loader in
    the bundle takes the arrays and launches, and the launch's failure is
    one failed entry."""
    packages = tmp_path / "packages"
    packages.mkdir()
    (packages / "cupy.py").write_text(STAND_IN_CUPY)
    out = tmp_path / "out"
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_cuda_driver), "PYTHONPATH": str(packages)}
    done = subprocess.run([sys.executable, str(bundle / "run.py"), str(out), "--only", "suite/saxpy", "--elements", "1000"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["array_libraries"] == ["cupy"] + (["torch"] if importlib.util.find_spec("torch") else [])
    (saxpy, *_) = results["arrays"]
    assert (saxpy["library"], saxpy["name"], saxpy["passed"]) == ("cupy", "suite/saxpy", False)
    assert "cuLaunchKernel failed" in saxpy["problem"]
    assert "## GPU arrays in and out" in (out / "results.md").read_text()


def test_the_report_renders_every_section():
    """report.markdown on a made-up report of one program of each kind
    (what a GPU run writes; the numbers mean nothing)."""
    sys.path.insert(0, str(ROOT / "tools" / "gpu_bundle" / "bundle"))
    from gpu_runner import report

    check = {"integrity": "passed", "problems": [], "files": 3, "bytes": 2**20, "programs": 2, "libraries": 2,
             "built": {"commit": "abc", "chip": "sm_90", "kernels": "PTX", "subset": False}, "gpu": "ready",
             "device": {"name": "GPU", "compute_capability": "9.0", "memory_gib": 80.0, "driver_version": "13.0"}}
    run = {"run": 0, "label": "small", "passed": True, "problem": None, "ms": 2.0}
    results = {
        "check": check,
        "copy": {"bytes": 800, "ms": 1.0, "gb_s": 1000.0},
        "programs": [
            {"name": "suite/sum", "kind": "suite", "host_accesses": [], "modes": {
                "managed": [{**run, "label": "n7"}], "device": [{**run, "label": "n7", "passed": False, "problem": "x | y"}]}},
            {"name": "adbench/GMM/gradient", "kind": "adbench", "host_accesses": ["llvm.load at here"],
             "modes": {"managed": [run]}},
            # run in managed memory only, though its host code reads no buffer (the failure programs)
            {"name": "failure/gather", "kind": "failure", "host_accesses": [], "modes": {"managed": [run]}},
        ],
        "bandwidth": [{"kernel": "sum", "mode": "device", "elements": 100, "bytes": 400, "ms": 0.5, "gb_s": 800.0,
                       "passed": True, "problem": None}],
        "peers": [{"name": "adbench/GMM/gradient", "tool": "jax", "failure": None,
                   "runs": [{**run, "tool": "JAX 0.0 (gpu)", "ms": 4.0}]}],
        "peer_tools": ["jax"],
        "array_libraries": ["cupy"],
        "arrays": [{"run": 0, "library": "cupy", "name": "suite/sum", "label": "n1003", "passed": False,
                    "problem": "result 0: a | b", "ms": 0.25}],
        "seconds": 1.0,
    }
    text = report.markdown(results)
    assert "| suite/sum | 1/1 passed | **0/1 passed** | device n7: x \\| y |" in text
    assert "device memory not tried: host code touches buffers in 1 place(s), first llvm.load at here" in text
    assert "| failure/gather | 1/1 passed | not run |  |" in text
    assert "| sum | device | 100 | 0.500 | 800 | 0.80 | passed |" in text
    assert "| adbench/GMM/gradient | small | 2.000 | – | 4.000 | – | 0.50 | – |  |" in text
    assert "ran as: JAX 0.0 (gpu)" in text
    assert "| cupy | suite/sum | n1003 | 0.250 | **result 0: a \\| b** |" in text
    assert "Not run: neither CuPy nor PyTorch is installed." in report.markdown({**results, "array_libraries": []})
    # Peers run with the programs left out (--skip programs): their rows still show.
    peers_only = report.markdown({**results, "programs": []})
    assert "| adbench/GMM/gradient | small | – | – | 4.000 | – | – | – |  |" in peers_only
    # The report says how the bundle was compiled.
    assert "inner sizes up to 4 static; tensor-cores=false (float64 products by mma.sync from sm_80)." in text
    flattened = {
        **results,
        "check": {**check, "built": {**check["built"], "static_inner_sizes_up_to": 16, "flatten": True, "tensor_cores": True}},
    }
    assert (
        "inner sizes up to 16 static; nested parallelism flattened (flatten=true); "
        "tensor-cores=true (float64 products by mma.sync from sm_80)." in report.markdown(flattened)
    )
