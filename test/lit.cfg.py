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
config.excludes = ["python", "fuzz"]  # fuzz: the fuzzers and the crashes they found


def _installed_paths():
    """Where the installed soac package and the wheels keep their tools and runtimes."""
    query = (
        "import os, llvm, mlir; from soac._tools import soac_opt_path; "
        "from soac.runtime import native; "
        "mlir_dir = list(mlir.__path__)[0]; "
        "print(os.path.dirname(soac_opt_path())); "
        "print(os.path.join(list(llvm.__path__)[0], 'bin')); "
        "print(os.path.join(mlir_dir, 'bin')); "
        "print(os.path.join(mlir_dir, 'lib', 'libmlir_runner_utils.so')); "
        "print(native.runner_utils_library()); "
        "print(native.openmp_library()); "
        "print(native.soac_runtime_library())"
    )
    out = subprocess.run([sys.executable, "-c", query], check=True, capture_output=True, text=True)
    return out.stdout.split()


*_tool_dirs, _runner_utils, _c_runner_utils, _openmp, _soac_runtime = _installed_paths()
# SOAC_OPT=<path of a soac-opt> tests that binary instead of the installed one
# (`make asan` points it at the AddressSanitizer build).
if os.environ.get("SOAC_OPT"):
    if os.path.basename(os.environ["SOAC_OPT"]) != "soac-opt" or not os.path.isfile(os.environ["SOAC_OPT"]):
        lit_config.fatal(f"SOAC_OPT must name an existing file called soac-opt, got {os.environ['SOAC_OPT']}")
    _tool_dirs.insert(0, os.path.dirname(os.path.abspath(os.environ["SOAC_OPT"])))
for tool_dir in reversed(_tool_dirs):
    config.environment["PATH"] = tool_dir + os.pathsep + config.environment.get("PATH", os.environ["PATH"])
config.substitutions.append(("%mlir_runner_utils", _runner_utils))
config.substitutions.append(("%mlir_c_runner_utils", _c_runner_utils))
config.substitutions.append(("%openmp_runtime", _openmp))
config.substitutions.append(("%soac_runtime", _soac_runtime))

# Variables captured under a CHECK-LABEL stay local to it.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
config.substitutions.append(("%python", sys.executable))

# PTX is checked with ptxas where the CUDA toolkit has it (found as
# `python -m soac.ptx` finds it); elsewhere lit lists `REQUIRES: ptxas` tests
# as UNSUPPORTED.
_ptxas = subprocess.run(
    [sys.executable, "-c", "from soac.ptx import ptxas_path; print(ptxas_path() or '')"],
    check=True, capture_output=True, text=True,
).stdout.strip()
if _ptxas:
    config.available_features.add("ptxas")
