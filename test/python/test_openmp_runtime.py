"""Compiled code asks soac's OpenMP runtime (libiomp5) for thread counts, even
when another OpenMP runtime was loaded into the process first: `import
torch` loads libgomp into the global scope, where a call of
omp_get_max_threads by name would find it."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

HERE = pathlib.Path(__file__).resolve().parent

# Another OpenMP runtime's queries, with answers no libiomp5 team matches.
IMPOSTOR = """
int omp_get_max_threads(void) { return 64; }
int omp_get_num_threads(void) { return 1; }
int omp_get_thread_num(void) { return 0; }
"""

SCRIPT = """
import ctypes, sys
ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)  # first in the global scope, as torch's libgomp
sys.path.insert(0, sys.argv[2])
import soac
from soac.runtime import native
from gpu_programs import CASES, assert_same_results, emulated, interpreted

soac.set_num_threads(3)
runtime = ctypes.CDLL(native.soac_runtime_library())
print("threads", runtime.soac_omp_max_threads(), ctypes.CDLL(None).omp_get_max_threads())
# A reduction whose kernel's 256 threads synchronize: each block runs as a team.
source, make_args = CASES["sum"]
args = make_args(1003)
assert_same_results(emulated(source, "sum")(*args), interpreted(source, "sum", args), 1003)
print("emulated sum ok")
"""


def test_thread_counts_come_from_libiomp5_when_another_runtime_was_loaded_first(tmp_path):
    source = tmp_path / "impostor.c"
    source.write_text(IMPOSTOR)
    library = tmp_path / "libimpostor.so"
    try:
        subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"no C compiler to build a second OpenMP runtime with ({error})")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(library), str(HERE)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    # The runtime's query says what soac.set_num_threads set, where a call by
    # name finds the impostor's 64.
    assert "threads 3 64" in result.stdout, result.stdout
    assert "emulated sum ok" in result.stdout
