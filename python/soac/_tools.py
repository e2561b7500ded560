"""Entry points of the command-line tools installed with the package."""

from __future__ import annotations

import os
import sys

from . import _soac


def soac_opt_path() -> str:
    """Path of the soac-opt executable installed next to the extension module."""
    return os.path.join(os.path.dirname(_soac.__file__), "bin", "soac-opt")


def soac_opt_main() -> None:
    """``soac-opt`` console command: replaces this process with the C++ tool."""
    path = soac_opt_path()
    os.execv(path, [path, *sys.argv[1:]])
