"""The README's Python examples run as written, in order (each continues the
ones before it, as a reader's session would), from a scratch directory that
sees the repository's examples/."""

from __future__ import annotations

import ctypes
import os
import pathlib
import re

import pytest

from soac.runtime import native

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def is_gpu_example(block: str) -> bool:
    return 'target="gpu"' in block


def gpu_status() -> str:
    library = ctypes.CDLL(native.soac_cuda_runtime_library())
    library.soac_gpu_status.restype = ctypes.c_char_p
    return library.soac_gpu_status().decode()


def run_blocks(blocks: list[str], directory: pathlib.Path) -> None:
    (directory / "examples").symlink_to(ROOT / "examples")
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        for number, block in enumerate(blocks):
            exec(compile(block, f"README.md python example {number + 1}", "exec"), namespace)
    finally:
        os.chdir(cwd)


def test_the_readme_has_examples():
    assert len(BLOCKS) >= 5 and sum(map(is_gpu_example, BLOCKS)) == 1


def test_readme_cpu_examples(tmp_path):
    run_blocks([block for block in BLOCKS if not is_gpu_example(block)], tmp_path)


def test_readme_gpu_example(tmp_path):
    if gpu_status() != "ready":
        pytest.skip(f"no GPU to run the README's GPU example on: {gpu_status()}")
    run_blocks(BLOCKS, tmp_path)
