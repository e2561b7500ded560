"""The examples run as tests: each must finish cleanly and print what it promises."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_demo_builds_the_file_program_in_python():
    out = subprocess.run([sys.executable, str(EXAMPLES / "demo.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "prints identically: True" in out.stdout
    assert "'soac.vjp' op has 2 results, but differentiating @softmax_matvec needs 3" in out.stdout
    assert "compiled for the CPU" in out.stdout and "max relative difference to numpy" in out.stdout
    assert "finite differences:" in out.stdout


def test_frontend_example_trains_with_traced_gradients():
    out = subprocess.run([sys.executable, str(EXAMPLES / "frontend_regression.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    value, reference = (float(t.strip("()")) for t in lines[0].split()[1::2])
    assert abs(value - reference) < 1e-12
    gradient_difference = float(lines[1].split("numpy ")[1].split(",")[0])
    assert gradient_difference < 1e-10
    assert float(lines[2].split()[-1]) < 0.5 * reference  # the loss went down
    assert "frontend_regression.py:" in lines[-1] and "use soac.numpy.exp" in lines[-1]


def test_data_parallel_training_with_torch_distributed():
    pytest.importorskip("torch", reason="PyTorch is not installed (pip install -r bench/requirements.txt)")
    out = subprocess.run([sys.executable, str(EXAMPLES / "distributed_training.py")], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "processes agree: True; equal to full-batch training in one process: True" in out.stdout
