"""The native libraries compiled code runs with, and the thread count."""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import os

import mlir

from ..errors import Error
from . import abi


@functools.cache
def openmp_library() -> str:
    """Path of libiomp5.so, the OpenMP runtime of the pinned intel-openmp wheel."""
    try:
        files = importlib.metadata.files("intel-openmp") or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "libiomp5.so":
            return os.path.realpath(file.locate())
    raise Error("the OpenMP runtime (libiomp5.so from the intel-openmp package) is not installed")


@functools.cache
def soac_runtime_library() -> str:
    """Path of libsoac_runtime.so (the allocation functions of compiled code),
    installed with the package."""
    from .. import _soac

    return os.path.join(os.path.dirname(_soac.__file__), "lib", "libsoac_runtime.so")


@functools.cache
def soac_cuda_runtime_library() -> str:
    """Path of libsoac_cuda_runtime.so (kernel launches and managed memory of
    compiled GPU code), installed with the package."""
    from .. import _soac

    return os.path.join(os.path.dirname(_soac.__file__), "lib", "libsoac_cuda_runtime.so")


@functools.cache
def runner_utils_library() -> str:
    """Path of MLIR's libmlir_c_runner_utils.so (memrefCopy and friends)."""
    return os.path.join(list(mlir.__path__)[0], "lib", "libmlir_c_runner_utils.so")


@functools.cache
def _openmp() -> ctypes.CDLL:
    # The same path the JIT loads, so this is the same runtime instance.
    return ctypes.CDLL(openmp_library(), mode=ctypes.RTLD_GLOBAL)


def set_num_threads(count: int) -> None:
    """Number of threads parallel loops of compiled code use from now on
    (1 forces sequential execution). The default is one per core. The
    matrix products compiled code hands to numpy's OpenBLAS use as many:
    that sets OpenBLAS's thread count, numpy's own products included."""
    if count < 1:
        raise Error(f"the number of threads must be at least 1, got {count}")
    _openmp().omp_set_num_threads(ctypes.c_int(count))
    abi.set_blas_threads(count)


def get_num_threads() -> int:
    """Number of threads parallel loops of compiled code use."""
    return int(_openmp().omp_get_max_threads())
