"""The scaling bundle (bench/scaling.py --bundle, tools/scaling_bundle): its
programs compiled here into shared libraries run from it with python3 and
numpy alone, checked at every thread count, and a wrong output fails."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from scaling_table import thread_counts  # noqa: E402


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("scaling") / "bundle"
    subprocess.run([sys.executable, str(ROOT / "bench" / "scaling.py"), "--bundle", str(out)], check=True,
                   capture_output=True, text=True, timeout=900)
    return out


def runner(bundle: pathlib.Path, *arguments: str) -> subprocess.CompletedProcess:
    # Isolated from this checkout: the runner finds soac's loader and the
    # inputs' modules in the bundle, never the soac package.
    env = {**os.environ, "PYTHONPATH": ""}
    return subprocess.run([sys.executable, "-I", str(bundle / "run.py"), *arguments], capture_output=True, text=True,
                          timeout=900, env=env, cwd=bundle)


def test_every_program_runs_and_passes_at_every_thread_count(bundle, tmp_path):
    done = runner(bundle, str(tmp_path / "out"), "--n", "2000")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    counts = thread_counts(os.cpu_count() or 1)
    assert results["counts"] == counts
    programs = json.loads((bundle / "manifest.json").read_text())["programs"]
    assert len(results["runs"]) == len(programs) * len(counts)
    assert all(run["passed"] and run["seconds"] > 0 for run in results["runs"])
    table = (tmp_path / "out" / "results.md").read_text()
    assert all(f"| {program['name']} | " in table for program in programs)
    assert "Every run passed its check." in table


def test_an_output_unlike_the_cpu_builds_fails(bundle, tmp_path):
    path = bundle / "manifest.json"
    original = path.read_text()
    manifest = json.loads(original)
    gmm = next(p for p in manifest["programs"] if p["name"].startswith("GMM"))
    gmm["expected"][1]["values"][0] += 1e-3 * max(abs(v) for v in gmm["expected"][1]["values"])
    path.write_text(json.dumps(manifest))
    try:
        done = runner(bundle, "--child", gmm["name"], "1000")
    finally:
        path.write_text(original)
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert not line["passed"] and "output 1 differs from the CPU build's" in line["problem"], line
