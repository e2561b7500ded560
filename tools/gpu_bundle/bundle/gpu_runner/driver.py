"""The CUDA driver through ctypes: the context compiled code runs in, device
memory, copies, streams and events.

The runner needs nothing but python3 and numpy, so it talks to libcuda.so.1
directly, as soac's GPU runtime (libsoac_cuda_runtime.so) does. Both use the
primary context of device 0, so buffers allocated here are the ones compiled
code sees.
"""

from __future__ import annotations

import ctypes

import numpy as np

CUdeviceptr = ctypes.c_uint64
# cuDeviceGetAttribute: CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR.
_CC_MAJOR, _CC_MINOR = 75, 76


class DriverError(RuntimeError):
    """A driver call that failed, or no driver or device at all."""


def load_driver() -> ctypes.CDLL:
    """libcuda.so.1, or a DriverError saying it is not there."""
    try:
        return ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        raise DriverError(f"no CUDA driver: {error}") from None


class Driver:
    """Device 0's primary context, made current on the calling thread."""

    def __init__(self) -> None:
        self.lib = load_driver()
        self._call("cuInit", 0)
        device = ctypes.c_int()
        self._call("cuDeviceGet", ctypes.byref(device), 0)
        self.device = device.value
        context = ctypes.c_void_p()
        self._call("cuDevicePrimaryCtxRetain", ctypes.byref(context), self.device)
        self._call("cuCtxSetCurrent", context)
        self.stream = self.create_stream()

    def _call(self, name: str, *args) -> None:
        result = getattr(self.lib, name)(*args)
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(text))
            raise DriverError(f"{name} failed: {(text.value or b'unknown error').decode()}")

    # --- the device ----------------------------------------------------------
    def describe(self) -> dict:
        name = ctypes.create_string_buffer(256)
        self._call("cuDeviceGetName", name, 256, self.device)
        version = ctypes.c_int()
        self._call("cuDriverGetVersion", ctypes.byref(version))
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._call("cuDeviceGetAttribute", ctypes.byref(major), _CC_MAJOR, self.device)
        self._call("cuDeviceGetAttribute", ctypes.byref(minor), _CC_MINOR, self.device)
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self._call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return {
            "name": name.value.decode(),
            "compute_capability": f"{major.value}.{minor.value}",
            "driver_version": f"{version.value // 1000}.{version.value % 1000 // 10}",
            "memory_gib": round(total.value / 2**30, 1),
        }

    # --- memory --------------------------------------------------------------
    def alloc(self, nbytes: int) -> int:
        pointer = CUdeviceptr()
        self._call("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1)))
        return pointer.value

    def free(self, pointer: int) -> None:
        self._call("cuMemFree_v2", CUdeviceptr(pointer))

    def to_device(self, array: np.ndarray) -> int:
        """A device copy of ``array`` (C-contiguous), by address."""
        array = np.ascontiguousarray(array)
        pointer = self.alloc(array.nbytes)
        if array.nbytes:
            self._call("cuMemcpyHtoD_v2", CUdeviceptr(pointer), array.ctypes.data_as(ctypes.c_void_p),
                       ctypes.c_size_t(array.nbytes))
        return pointer

    def to_host(self, pointer: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """A host copy of the array at ``pointer`` (device or managed memory:
        cuMemcpy resolves either through unified addressing)."""
        array = np.empty(shape, dtype)
        if array.nbytes:
            self._call("cuMemcpy", array.ctypes.data_as(ctypes.c_void_p), CUdeviceptr(pointer),
                       ctypes.c_size_t(array.nbytes))
        return array

    def fill_random(self, pointer: int, nbytes: int, seed: int = 0) -> None:
        """Random bytes at ``pointer``, in chunks (no host array of the whole size)."""
        rng = np.random.default_rng(seed)
        chunk = 1 << 26
        for start in range(0, nbytes, chunk):
            part = rng.integers(0, 255, min(chunk, nbytes - start), dtype=np.uint8)
            self._call("cuMemcpyHtoD_v2", CUdeviceptr(pointer + start), part.ctypes.data_as(ctypes.c_void_p),
                       ctypes.c_size_t(part.nbytes))

    def copy_device_to_device(self, target: int, source: int, nbytes: int) -> None:
        self._call("cuMemcpyDtoDAsync_v2", CUdeviceptr(target), CUdeviceptr(source), ctypes.c_size_t(nbytes),
                   self.stream)

    # --- streams and events --------------------------------------------------
    def create_stream(self) -> ctypes.c_void_p:
        stream = ctypes.c_void_p()
        self._call("cuStreamCreate", ctypes.byref(stream), 1)  # CU_STREAM_NON_BLOCKING
        return stream

    def synchronize(self) -> None:
        self._call("cuStreamSynchronize", self.stream)

    def time_ms(self, work, repeats: int) -> list[float]:
        """Milliseconds of each of ``repeats`` runs of ``work()`` between two
        events recorded on the runner's stream (after one warm-up run)."""
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        self._call("cuEventCreate", ctypes.byref(start), 0)
        self._call("cuEventCreate", ctypes.byref(stop), 0)
        try:
            work()
            self.synchronize()
            times = []
            for _ in range(repeats):
                self._call("cuEventRecord", start, self.stream)
                work()
                self._call("cuEventRecord", stop, self.stream)
                self._call("cuEventSynchronize", stop)
                elapsed = ctypes.c_float()
                self._call("cuEventElapsedTime", ctypes.byref(elapsed), start, stop)
                times.append(elapsed.value)
            return times
        finally:
            self._call("cuEventDestroy_v2", start)
            self._call("cuEventDestroy_v2", stop)
