"""Arrays on the GPU in and out of compiled GPU code, with ctypes only.

Like :mod:`soac.runtime.abi`, which uses it, this module needs nothing but
numpy and the standard library: it ships next to shared libraries (as
``soac_device.py``). It speaks the two protocols GPU array libraries share:

* ``__cuda_array_interface__`` (CuPy, Numba, PyTorch CUDA tensors): a dict of
  the data pointer, shape, ``typestr``, strides and the producer's stream;
* DLPack (``__dlpack__``/``__dlpack_device__``: JAX, PyTorch, CuPy): a
  ``PyCapsule`` named ``"dltensor"`` holding a ``DLManagedTensor``, whose
  deleter the consumer calls once it is done with the memory.

It reads both from arguments (:func:`device_argument`), and writes both for
results (:class:`DeviceArray`). Nothing here calls the GPU: what needs the
driver (waiting for a stream, events, where a pointer lives) is in
:class:`CudaDriver`, opened only when a GPU call is made.
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# DLPack's device types (dlpack.h, DLDeviceType) and type codes (DLDataTypeCode).
DL_CPU = 1
DL_CUDA = 2
DL_CUDA_HOST = 3
DL_CUDA_MANAGED = 13
_DL_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}  # kDLInt, kDLUInt, kDLFloat, kDLBool
_DL_CODES = {kind: code for code, kind in _DL_KINDS.items()}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


# The capsule names of the protocol. Module constants: the C API keeps the
# pointer to a capsule's name, which must outlive the capsule.
_DLTENSOR = b"dltensor"
_USED_DLTENSOR = b"used_dltensor"


def _capsule_function(name: str, restype: Any, *argtypes: Any) -> Any:
    """A function of the Python C API taking the capsule as a raw pointer (so
    that it can be called from the capsule's own destructor)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capsule_function("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_capsule_is_valid = _capsule_function("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_capsule_pointer = _capsule_function("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_capsule_set_name = _capsule_function("PyCapsule_SetName", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)


class Unpassable(Exception):
    """An array on the GPU that compiled code cannot take; the message says
    why (the caller names the argument)."""


@functools.lru_cache(maxsize=1024)  # shapes repeat from call to call
def c_contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _is_c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether element ``strides`` walk ``shape`` in C order without gaps
    (the stride of a dimension of size 1 is any; an empty array is)."""
    if 0 in shape:
        return True
    return all(size == 1 or stride == expected
               for size, stride, expected in zip(shape, strides, c_contiguous_strides(shape)))


@dataclass
class DeviceArgument:
    """An argument already on the GPU, passed by its pointer: C-contiguous,
    ``device`` the CUDA device ordinal where the producer said (DLPack), and
    ``stream`` the producer's stream to wait for (the CUDA array interface's,
    None for none). ``release`` is called once the call is over (a DLPack
    capsule's deleter); ``owner`` keeps the producer's array alive until then."""

    pointer: int
    shape: tuple[int, ...]
    dtype: np.dtype
    owner: Any
    device: int | None = None
    stream: int | None = None
    release: Callable[[], None] | None = None

    def done(self) -> None:
        """Gives the memory back to its producer (once)."""
        release, self.release = self.release, None
        if release is not None:
            release()


def device_argument(value: Any, stream: int | None) -> DeviceArgument | None:
    """``value`` as an argument on the GPU, or None when it is not one (a
    numpy array, a CPU tensor: the caller copies those in). ``stream`` is the
    stream the call runs on, which a DLPack producer orders its work before.
    Raises :class:`Unpassable` for GPU arrays compiled code cannot take."""
    if isinstance(value, np.ndarray):
        return None
    try:
        interface = value.__cuda_array_interface__
    except AttributeError:  # also what PyTorch raises for a CPU tensor
        interface = None
    if interface is not None:
        return _from_interface(value, interface)
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        device_type, _ = value.__dlpack_device__()
        if device_type in (DL_CUDA, DL_CUDA_MANAGED):
            try:
                capsule = value.__dlpack__(stream=stream)
            except TypeError:  # a producer predating the stream argument
                capsule = value.__dlpack__()
            return from_dlpack_capsule(capsule, owner=value)
    return None


def _from_interface(value: Any, interface: dict) -> DeviceArgument:
    """An argument described by ``__cuda_array_interface__`` (versions 0 to 3)."""
    if interface.get("mask") is not None:
        raise Unpassable("has a mask (__cuda_array_interface__['mask']), which compiled code cannot apply")
    try:
        shape = tuple(int(size) for size in interface["shape"])
        dtype = np.dtype(interface["typestr"])
        pointer = int(interface["data"][0] or 0)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise Unpassable(f"has a malformed __cuda_array_interface__ ({error!r})") from None
    strides = interface.get("strides")
    if strides is not None:
        if any(int(s) % dtype.itemsize for s in strides):
            raise Unpassable(f"has strides {tuple(strides)} bytes, not whole elements of {dtype}")
        if not _is_c_contiguous(shape, tuple(int(s) // dtype.itemsize for s in strides)):
            raise Unpassable(f"is not C-contiguous (strides {tuple(strides)} bytes for shape {shape}); "
                             "pass a contiguous copy")
    stream = interface.get("stream")
    if stream == 0:
        raise Unpassable("gives stream 0, which __cuda_array_interface__ version 3 forbids (1 is the legacy default stream)")
    return DeviceArgument(pointer, shape, dtype, owner=value, stream=stream)


def from_dlpack_capsule(capsule: Any, owner: Any = None) -> DeviceArgument:
    """The CUDA array of a ``"dltensor"`` capsule, which this consumes (renamed
    ``"used_dltensor"``: its deleter is then called by the argument's
    :meth:`DeviceArgument.done`, not by the capsule)."""
    raw = id(capsule)
    if not _capsule_is_valid(raw, _DLTENSOR):
        raise Unpassable("gave __dlpack__ a capsule that is not an unused 'dltensor' (a versioned or used one)")
    address = _capsule_pointer(raw, _DLTENSOR)
    managed = _DLManagedTensor.from_address(address)
    _capsule_set_name(raw, _USED_DLTENSOR)
    deleter = managed.deleter

    def release() -> None:
        if deleter:
            deleter(address)

    argument = DeviceArgument(0, (), np.dtype("float32"), owner=(owner, capsule), release=release)
    try:
        tensor = managed.dl_tensor
        if tensor.device.device_type not in (DL_CUDA, DL_CUDA_MANAGED):
            raise Unpassable(f"is on DLPack device type {tensor.device.device_type}, not a CUDA device")
        code, bits, lanes = tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes
        if code not in _DL_KINDS or lanes != 1 or bits % 8:
            raise Unpassable(f"has DLPack dtype (code {code}, {bits} bits, {lanes} lanes), which is not a numpy number")
        argument.dtype = np.dtype(f"{_DL_KINDS[code]}{bits // 8}") if code != 6 else np.dtype(bool)
        argument.shape = tuple(tensor.shape[d] for d in range(tensor.ndim))
        if tensor.strides and not _is_c_contiguous(argument.shape, tuple(tensor.strides[d] for d in range(tensor.ndim))):
            strides = tuple(tensor.strides[d] for d in range(tensor.ndim))
            raise Unpassable(f"is not C-contiguous (strides {strides} elements for shape {argument.shape}); "
                             "pass a contiguous copy")
        argument.pointer = (tensor.data or 0) + tensor.byte_offset
        argument.device = tensor.device.device_id
    except BaseException:
        argument.done()
        raise
    return argument


def stream_handle(stream: Any) -> int | None:
    """The ``CUstream`` of a ``stream=`` argument: None (the runtime's own
    stream), an int handle (0, the legacy default stream, is passed as
    ``CU_STREAM_LEGACY``), or an object with ``__cuda_stream__()`` (returning
    ``(version, handle)``), ``cuda_stream`` (PyTorch) or ``ptr`` (CuPy).
    Raises ``TypeError`` for anything else."""
    if stream is None:
        return None
    if hasattr(stream, "__cuda_stream__"):
        handle = stream.__cuda_stream__()[1]
    elif hasattr(stream, "cuda_stream"):
        handle = stream.cuda_stream
    elif hasattr(stream, "ptr"):
        handle = stream.ptr
    else:
        handle = stream
    if isinstance(handle, bool) or not isinstance(handle, (int, np.integer)):
        raise TypeError(f"stream must be an int CUstream handle or an object with __cuda_stream__, "
                        f"cuda_stream or ptr; got {type(stream).__name__}")
    return int(handle) or 1  # CU_STREAM_LEGACY


class CudaDriver:
    """The few CUDA driver functions the caller of compiled code needs itself
    (the runtime library opened the driver and made its context current)."""

    _POINTER_ATTRIBUTE_IS_MANAGED = 8
    _POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9

    def __init__(self) -> None:
        driver = ctypes.CDLL("libcuda.so.1")
        self._sync = driver.cuStreamSynchronize
        self._sync.argtypes = [ctypes.c_void_p]
        self._attribute = driver.cuPointerGetAttribute
        self._attribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
        self._event_create = driver.cuEventCreate
        self._event_create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        self._event_record = driver.cuEventRecord
        self._event_record.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._event_sync = driver.cuEventSynchronize
        self._event_sync.argtypes = [ctypes.c_void_p]
        self._elapsed = driver.cuEventElapsedTime
        self._elapsed.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p]
        self._event_destroy = driver.cuEventDestroy_v2
        self._event_destroy.argtypes = [ctypes.c_void_p]

    @staticmethod
    def _check(result: int, what: str) -> None:
        if result != 0:
            raise RuntimeError(f"{what} failed: CUDA error {result}")

    def synchronize(self, stream: int) -> None:
        self._check(self._sync(stream), "cuStreamSynchronize")

    def pointer_device(self, pointer: int) -> int | None:
        """The device ordinal of ``pointer``'s memory, or None where the
        driver does not know the pointer (host memory it did not allocate)."""
        ordinal = self._pointer_attribute(pointer, self._POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        return None if ordinal is None else ctypes.c_int32(ordinal).value

    def is_managed(self, pointer: int) -> bool:
        return bool(self._pointer_attribute(pointer, self._POINTER_ATTRIBUTE_IS_MANAGED))

    def _pointer_attribute(self, pointer: int, attribute: int) -> int | None:
        """A 32-bit attribute of ``pointer``, None where the driver refuses.
        (Read from 8 bytes: a stand-in driver may write a pointer's size.)"""
        value = ctypes.c_uint64(0)
        if self._attribute(ctypes.byref(value), attribute, pointer) != 0:
            return None
        return value.value & 0xFFFFFFFF

    def elapsed_ms(self, stream: int, work: Callable[[], Any]) -> tuple[Any, float]:
        """``work()``'s result and the milliseconds between CUDA events
        recorded on ``stream`` before and after it."""
        events = [ctypes.c_void_p(), ctypes.c_void_p()]
        for event in events:
            self._check(self._event_create(ctypes.byref(event), 0), "cuEventCreate")
        try:
            self._check(self._event_record(events[0], stream), "cuEventRecord")
            result = work()
            self._check(self._event_record(events[1], stream), "cuEventRecord")
            self._check(self._event_sync(events[1]), "cuEventSynchronize")
            ms = ctypes.c_float(0.0)
            self._check(self._elapsed(ctypes.byref(ms), events[0], events[1]), "cuEventElapsedTime")
            return result, ms.value
        finally:
            for event in events:
                self._event_destroy(event)


class DeviceArray:
    """A result of compiled GPU code left on the GPU: a buffer the runtime
    allocated (CUDA managed memory, or device memory from its pool), freed
    through the runtime (``soac_gpu_free``) once neither this array nor any
    DLPack capsule exported from it is in use.

    Other libraries take it without a copy: ``cupy.asarray(a)`` and
    ``numba.cuda.as_cuda_array(a)`` through ``__cuda_array_interface__``,
    ``torch.from_dlpack(a)``, ``jax.dlpack.from_dlpack(a)`` and
    ``cupy.from_dlpack(a)`` through ``__dlpack__``. ``np.asarray(a)`` (or
    :meth:`numpy`) copies it to the host. It is complete when the call that
    made it returns (compiled code waits for its kernels), so consumers need
    not wait for any stream."""

    def __init__(self, pointer: int, shape: tuple[int, ...], dtype: np.dtype, owner: Any,
                 copy_to_host: Callable[[int, int, int], None], strides: tuple[int, ...] | None = None):
        """``strides`` in elements (C-contiguous when None); ``owner`` frees
        the buffer when collected; ``copy_to_host(to, from, bytes)``."""
        self.pointer = pointer
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(strides) if strides is not None else c_contiguous_strides(self.shape)
        self._owner = owner
        self._copy_to_host = copy_to_host

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def __cuda_array_interface__(self) -> dict:
        contiguous = _is_c_contiguous(self.shape, self.strides)
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.pointer, False),
            "strides": None if contiguous else tuple(s * self.dtype.itemsize for s in self.strides),
            "version": 3,
            "stream": None,  # complete: nothing to wait for
        }

    def __dlpack_device__(self) -> tuple[int, int]:
        return (DL_CUDA, 0)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None) -> Any:
        """A ``"dltensor"`` capsule over this array's memory, which stays
        allocated until the consumer calls its deleter (or the unconsumed
        capsule dies). ``stream`` is accepted and needs nothing: the array is
        complete."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"a soac DeviceArray is on CUDA device 0; it cannot be exported to {tuple(dl_device)}")
        if copy:
            raise BufferError("a soac DeviceArray is exported without a copy (copy=True is not supported)")
        return _export(self)

    def numpy(self) -> np.ndarray:
        """A copy on the host."""
        host = np.empty(self.shape, self.dtype)
        if self.size == 0:
            return host
        extent = 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        raw = np.empty(extent, self.dtype)
        self._copy_to_host(raw.ctypes.data, self.pointer, raw.nbytes)
        strides = tuple(s * self.dtype.itemsize for s in self.strides)
        host[...] = np.lib.stride_tricks.as_strided(raw, self.shape, strides)
        return host

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy is False:
            raise ValueError("a soac DeviceArray is on the GPU: numpy can only copy it")
        host = self.numpy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, pointer={self.pointer:#x})"


# Exported DLManagedTensors by address: what each keeps alive until its
# deleter runs (the struct, its shape and strides, the DeviceArray).
_exported: dict[int, tuple[Any, ...]] = {}


@_DELETER
def _delete_exported(address: int) -> None:
    _exported.pop(address, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _destroy_capsule(raw: int) -> None:
    # A capsule nobody consumed still owns its tensor; a consumed one was
    # renamed and its consumer calls the deleter.
    if _capsule_is_valid(raw, _DLTENSOR):
        _delete_exported(_capsule_pointer(raw, _DLTENSOR))


def _export(array: DeviceArray) -> Any:
    """A DLPack capsule of ``array`` (see :meth:`DeviceArray.__dlpack__`)."""
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(array.ndim, 1))(*array.strides)
    managed = _DLManagedTensor()
    tensor = managed.dl_tensor
    tensor.data = array.pointer
    tensor.device = _DLDevice(DL_CUDA, 0)
    tensor.ndim = array.ndim
    code = _DL_CODES[array.dtype.kind]
    tensor.dtype = _DLDataType(code, array.dtype.itemsize * 8, 1)
    tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed.deleter = _delete_exported
    address = ctypes.addressof(managed)
    _exported[address] = (managed, shape, strides, array)
    return _capsule_new(address, _DLTENSOR, ctypes.cast(_destroy_capsule, ctypes.c_void_p))


class Allocation:
    """A buffer freed by ``free(address)`` once nothing uses it."""

    def __init__(self, address: int, free: Callable[[int], None]):
        weakref.finalize(self, free, address)
