"""Makes the helpers next to the tests (gradcheck.py) importable, and keeps
the disk cache of compiled code in a temporary directory of this run (never
the user's), shared by the tests and the processes they start."""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

_CACHE = tempfile.mkdtemp(prefix="soac-test-cache-")
os.environ["SOAC_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)
