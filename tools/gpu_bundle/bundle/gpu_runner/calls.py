"""Calling a bundled library's function on buffers the runner places itself.

soac_runtime.py (the standalone loader soac ships next to its libraries)
copies numpy arguments into managed memory and results out at every call.
To time kernels, and to try device memory, the runner instead places the
arguments once and fetches the results by explicit copies:

* ``managed``: arguments in the runtime's managed memory (as soac.compile's
  callers do today), compiled code allocating managed memory;
* ``device``: arguments copied to device memory (cuMemAlloc), compiled code
  allocating from the stream-ordered pool (``soac_gpu_set_memory(1)``); only
  for functions whose host code never reads a buffer (the manifest's
  ``host_accesses`` is empty), since host code cannot address device memory.

Results are copied back with cuMemcpy (device or managed alike) and freed
with the runtime's ``soac_gpu_free``. Kernels run on the runner's stream
(``soac_gpu_set_stream``). A direct call (not through the runtime's checked
calls) returns once its work is queued: in device memory compiled code does
not wait for its kernels, so the runner waits for its stream before it
copies results back.
"""

from __future__ import annotations

import ctypes
import json
import os

import numpy as np

import soac_runtime

from .driver import Driver

MODES = ("managed", "device")


class Library:
    """A bundled shared library, its signatures and soac's GPU runtime in it."""

    def __init__(self, path: str):
        self.handle = ctypes.CDLL(os.path.abspath(path))
        with open(os.path.splitext(path)[0] + ".json") as f:
            self.signatures = {
                entry["name"]: soac_runtime.Signature.from_json(entry) for entry in json.load(f)["functions"]
            }
        runtime = self.handle
        runtime.soac_gpu_status.restype = ctypes.c_char_p
        runtime.soac_gpu_alloc.argtypes = [ctypes.c_size_t]
        runtime.soac_gpu_alloc.restype = ctypes.c_void_p
        runtime.soac_gpu_free.argtypes = [ctypes.c_void_p]
        runtime.soac_gpu_set_stream.argtypes = [ctypes.c_void_p]
        runtime.soac_gpu_set_memory.argtypes = [ctypes.c_int]
        runtime.soac_gpu_set_memory.restype = ctypes.c_int
        self.runtime = runtime

    def status(self) -> str:
        return self.runtime.soac_gpu_status().decode()

    def prepare(self, driver: Driver, mode: str) -> None:
        """Kernels on the driver's stream; buffers of compiled code in ``mode``'s memory."""
        self.runtime.soac_gpu_set_stream(driver.stream)
        if self.runtime.soac_gpu_set_memory(MODES.index(mode)) != 0:
            raise RuntimeError(f"the runtime refuses {mode} memory (no stream-ordered allocation in this driver)")

    def function(self, name: str, driver: Driver) -> DeviceFunction:
        return DeviceFunction(self, self.signatures[name], driver)


class DeviceFunction:
    """One function; see the module docstring."""

    def __init__(self, library: Library, signature, driver: Driver):
        self.library, self.signature, self.driver = library, signature, driver
        results = signature.results
        self._struct = None
        argtypes = [ctypes.POINTER(_ctype(a)) if a.is_tensor else _ctype(a) for a in signature.args]
        restype = None
        if len(results) > 1 or (len(results) == 1 and results[0].is_tensor):
            fields = [(f"r{i}", _ctype(r)) for i, r in enumerate(results)]
            self._struct = type("Results", (ctypes.Structure,), {"_fields_": fields})
            argtypes.insert(0, ctypes.POINTER(self._struct))
        elif results:
            restype = _ctype(results[0])
        symbol = getattr(library.handle, "_mlir_ciface_" + signature.name)
        self._function = ctypes.CFUNCTYPE(restype, *argtypes)(ctypes.cast(symbol, ctypes.c_void_p).value)

    def place(self, args: list, mode: str) -> list:
        """The arguments as the C interface takes them, tensors copied to
        ``mode``'s memory; ``release`` frees them."""
        placed = []
        for position, (value, spec) in enumerate(zip(args, self.signature.args)):
            checked = soac_runtime._check_argument(self.signature.name, position, value, spec)
            if not spec.is_tensor:
                placed.append(soac_runtime._scalar(checked, spec))
                continue
            if mode == "device":
                address = self.driver.to_device(checked)
            else:
                address = self.library.runtime.soac_gpu_alloc(checked.nbytes)
                ctypes.memmove(address, checked.ctypes.data, checked.nbytes)
            placed.append(_descriptor(address, checked, spec))
        return placed

    def release(self, placed: list) -> None:
        for value in placed:
            if isinstance(value, ctypes.Structure):
                self.library.runtime.soac_gpu_free(_address(value.allocated))

    def call(self, placed: list):
        """Runs the function; its raw results (a struct, or a scalar)."""
        args = [ctypes.byref(v) if isinstance(v, ctypes.Structure) else v for v in placed]
        if self._struct is None:
            return self._function(*args)
        results = self._struct()
        self._function(ctypes.byref(results), *args)
        return results

    def fetch(self, raw, placed: list, copy: bool = True) -> tuple:
        """The results as numpy values (None for tensors unless ``copy``);
        frees the buffers compiled code allocated for them (once each, and
        never an argument's)."""
        specs = self.signature.results
        if self._struct is None:
            return () if not specs else (soac_runtime._scalar_result(raw, specs[0]),)
        if copy:
            self.driver.synchronize()  # the call's kernels may still be running
        arguments = {_address(v.allocated) for v in placed if isinstance(v, ctypes.Structure)}
        freed = set(arguments)
        values = []
        for i, spec in enumerate(specs):
            field = getattr(raw, f"r{i}")
            if not spec.is_tensor:
                values.append(soac_runtime._scalar_result(field, spec))
                continue
            values.append(self._to_host(field, spec) if copy else None)
            allocated = _address(field.allocated)
            if allocated and allocated not in freed:
                freed.add(allocated)
                self.library.runtime.soac_gpu_free(allocated)
        return tuple(values)

    def _to_host(self, descriptor, spec) -> np.ndarray:
        dtype = np.dtype(spec.dtype)
        shape = tuple(descriptor.sizes)
        strides = tuple(descriptor.strides)
        if 0 in shape:
            return np.zeros(shape, dtype)
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        start = _address(descriptor.aligned) + descriptor.offset * dtype.itemsize
        flat = self.driver.to_host(start, (extent,), dtype)
        view = np.lib.stride_tricks.as_strided(flat, shape, tuple(s * dtype.itemsize for s in strides))
        return np.array(view, copy=True)


def _ctype(spec):
    return soac_runtime.descriptor_type(spec.dtype, len(spec.shape)) if spec.is_tensor else soac_runtime._CTYPES[spec.dtype]


def _address(pointer) -> int:
    return ctypes.cast(pointer, ctypes.c_void_p).value or 0


def _descriptor(address: int, array: np.ndarray, spec) -> ctypes.Structure:
    descriptor = soac_runtime.descriptor_type(spec.dtype, array.ndim)()
    pointer = ctypes.cast(ctypes.c_void_p(address), descriptor._fields_[0][1])
    descriptor.allocated = pointer
    descriptor.aligned = pointer
    descriptor.offset = 0
    for d in range(array.ndim):
        descriptor.sizes[d] = array.shape[d]
        descriptor.strides[d] = array.strides[d] // max(array.itemsize, 1)
    return descriptor
