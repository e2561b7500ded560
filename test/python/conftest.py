"""Makes the helpers next to the tests (gradcheck.py) importable, and keeps
the disk cache of compiled code in a temporary directory of this run (never
the user's), shared by the tests and the processes they start. The fixture
``fake_cuda_driver`` builds the stand-in CUDA driver (fake_cuda/libcuda.c)."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

_CACHE = tempfile.mkdtemp(prefix="soac-test-cache-")
os.environ["SOAC_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)


def run_on_stand_in_driver(driver: pathlib.Path, directory: pathlib.Path, source: str, done_line: str) -> None:
    """Runs the Python ``source`` in a child process whose CUDA driver is the
    stand-in at ``driver`` (glibc checking its frees), and fails unless the
    child exits cleanly having printed ``done_line``."""
    script = directory / "child.py"
    script.write_text(source)
    env = {**os.environ, "LD_LIBRARY_PATH": str(driver), "MALLOC_CHECK_": "3"}
    done = subprocess.run([sys.executable, str(script), os.path.dirname(__file__)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and done_line in done.stdout, done.stdout + done.stderr


@pytest.fixture(scope="session")
def fake_cuda_driver(tmp_path_factory) -> pathlib.Path:
    """A directory holding the stand-in ``libcuda.so.1`` (host memory, every
    kernel launch fails), for ``LD_LIBRARY_PATH`` of a child process."""
    driver = tmp_path_factory.mktemp("fake-cuda-driver")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(driver / "libcuda.so.1"),
                    str(pathlib.Path(__file__).parent / "fake_cuda" / "libcuda.c")], check=True)
    return driver
