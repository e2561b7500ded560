"""lit configuration: soac-opt from the installed soac package, FileCheck and
friends from the pinned LLVM wheel, mlir-opt/mlir-runner from the MLIR wheel."""

import os
import subprocess
import sys

import lit.formats

config.name = "soac"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "..", "build", "lit")
config.excludes = ["python"]


def _tool_dirs():
    """Directories of soac-opt (installed with the package) and of the wheels' tools."""
    query = (
        "import os, llvm, mlir; from soac._tools import soac_opt_path; "
        "print(os.path.dirname(soac_opt_path())); "
        "print(os.path.join(list(llvm.__path__)[0], 'bin')); "
        "print(os.path.join(list(mlir.__path__)[0], 'bin'))"
    )
    out = subprocess.run([sys.executable, "-c", query], check=True, capture_output=True, text=True)
    return out.stdout.split()


for tool_dir in reversed(_tool_dirs()):
    config.environment["PATH"] = tool_dir + os.pathsep + config.environment.get("PATH", os.environ["PATH"])

# Variables captured under a CHECK-LABEL stay local to it.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
config.substitutions.append(("%python", sys.executable))
