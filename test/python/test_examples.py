"""The examples run as tests: each must finish cleanly and print what it promises."""

from __future__ import annotations

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_demo_builds_the_file_program_in_python():
    out = subprocess.run([sys.executable, str(EXAMPLES / "demo.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "prints identically: True" in out.stdout
    assert "'soac.vjp' op has 2 results, but differentiating @softmax_matvec needs 3" in out.stdout
    assert "compiled for the CPU" in out.stdout and "max relative difference to numpy" in out.stdout
    assert "finite differences:" in out.stdout
