"""The GPU check bundle (tools/gpu_bundle): a subset built here, its runner's
integrity check (run.py --check, which needs neither soac nor a GPU), and,
where a GPU is, a run of it. Without a GPU that run is a visible skip."""

from __future__ import annotations

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
    assert check["programs"] == 11 and check["libraries"] == 11
    assert (tmp_path / "out" / "results.md").read_text().startswith("# soac GPU bundle")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert {p["kind"] for p in manifest["programs"]} == {"suite", "adbench", "bandwidth"}
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


def test_host_accesses_are_the_reads_of_scalar_results():
    with ir.Context():
        module = soac.parse(LIBRARY)
        assert host_buffer_accesses(lower(module, options=GpuOptions(), only="saxpy")) == []
        reads = host_buffer_accesses(lower(module, options=GpuOptions(), only="sum"))
    assert len(reads) == 1 and reads[0].startswith("llvm.load at ")


def test_the_runner_survives_crashing_programs(bundle, tmp_path):
    """The whole run against a stand-in driver whose kernel launches all fail
    (fake_cuda/libcuda.c): every run crashes its child, is reported failed,
    and the next run still happens; the copy is timed; device memory is not
    tried for a program whose host code reads its result."""
    driver = tmp_path / "driver"
    driver.mkdir()
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(driver / "libcuda.so.1"),
                    str(pathlib.Path(__file__).parent / "fake_cuda" / "libcuda.c")], check=True)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(bundle / "run.py"), str(out), "--only", "/sum", "--elements", "1000"],
                          capture_output=True, text=True, env={**os.environ, "LD_LIBRARY_PATH": str(driver)})
    assert done.returncode == 1, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["check"]["device"]["name"] == "fake CUDA driver (no GPU)"
    assert results["copy"]["gb_s"] > 0
    (suite_sum,) = results["programs"]
    assert suite_sum["name"] == "suite/sum" and list(suite_sum["modes"]) == ["managed"]
    runs = suite_sum["modes"]["managed"]
    assert [r["label"] for r in runs] == ["n7", "n1003"]
    assert all(not r["passed"] and "cuLaunchKernel failed" in r["problem"] for r in runs)
    (kernel,) = results["bandwidth"]
    assert kernel["kernel"] == "sum" and not kernel["passed"]
    assert "## Bandwidth" in (out / "results.md").read_text()
