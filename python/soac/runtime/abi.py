"""Calling compiled soac functions from numpy: the C ABI, with ctypes only.

This module depends on nothing but numpy and the standard library, so that a
shared library compiled by soac can be loaded where MLIR is not installed (see
:mod:`soac.runtime.loader`). The ABI is MLIR's C interface
(``llvm.emit_c_interface``) for ``func.func @name``:

``_mlir_ciface_<name>(results*, args...)``
  * a tensor argument is passed as a pointer to a memref descriptor
    ``struct { T *allocated; T *aligned; int64_t offset; int64_t sizes[R];
    int64_t strides[R]; }`` describing a C-contiguous array;
  * a scalar argument is passed by value (``index`` as ``int64_t``, ``i1`` as
    ``bool``);
  * a single scalar result is the return value; a single tensor result, or
    several results, are written to a struct (descriptors and scalars, in
    order) that the caller passes as the first argument;
  * result buffers are allocated with ``malloc`` and owned by the caller, who
    frees ``allocated`` with ``free``. Here the numpy array returned for them
    owns that memory: it is freed when the array (and every view of it) dies.

Python calls each function through its packed interface
``_mlir__mlir_ciface_<name>(void **args)`` (a pointer to each argument of
the C interface, the results' struct pointer first, then to a scalar
result's storage): one array, whatever the number of arguments. Inside the
soac package, a CPU call goes first to the C++ extension ``soac._calls``,
which does the same for C-contiguous arrays of the declared dtypes and
Python numbers, and hands back (untouched) any call it would have to
convert or refuse.

Code compiled for the GPU has the same ABI, on memory of its runtime library
(``soac_gpu_alloc`` / ``soac_gpu_free``). Numpy arguments are copied into
CUDA managed memory before the call; arrays already on the GPU (the CUDA
array interface, DLPack: :mod:`soac.runtime.device`) are passed by their
pointer. Results are copied out to numpy arrays, or kept on the GPU as
:class:`DeviceArray` (``device_results=True``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import reprlib
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # the standalone copy imports its copy of device.py beside it
    from . import device
    from .device import DeviceArray
except ImportError:
    import soac_device as device  # type: ignore[no-redef]
    from soac_device import DeviceArray  # type: ignore[no-redef]

_CTYPES = {
    "float16": ctypes.c_uint16,  # passed as its bits
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "bool": ctypes.c_bool,
}

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


try:  # inside the soac package: the common CPU call in C++ (soac/_ext/Calls.cpp)
    from .. import _calls as _fast_calls
except ImportError:  # the standalone copy, or a build without the extension
    _fast_calls = None

try:  # inside the soac package, argument errors are soac.Errors too
    from ..errors import Error as _SoacError

    _ERROR_BASES: tuple[type, ...] = (_SoacError, TypeError)
except ImportError:  # the standalone copy next to a shared library
    _ERROR_BASES = (TypeError,)


class ArgumentError(*_ERROR_BASES):
    """Arguments that do not fit a compiled function's signature."""


class DeviceError(*_ERROR_BASES[:-1], RuntimeError):
    """Compiled GPU code that cannot run here (no CUDA driver or device), or
    whose call the CUDA driver failed (a kernel that faulted)."""


class ExecutionError(*_ERROR_BASES[:-1], RuntimeError):
    """A run-time check of compiled code that failed (the inputs of a map of
    different outer sizes): the call stopped there, before reading or
    writing out of bounds, and freed everything it had allocated."""


class IndexOutOfRangeError(ExecutionError, IndexError):
    """An index out of range for the tensor it reads or writes (a gather, a
    slice); the message names the op's source location, the index and the
    size."""


class OutOfMemoryError(ExecutionError, MemoryError):
    """A buffer that could not be allocated: malloc failed, or its size in
    bytes overflows (sizes computed from negative or huge numbers)."""


# The kinds of failure soac_failure_kind() returns (runtime/soac_calls.h).
_FAILURES: dict[int, type[ExecutionError]] = {
    1: ExecutionError,
    2: IndexOutOfRangeError,
    3: OutOfMemoryError,
    4: DeviceError,
}


@functools.cache
def _numpy_openblas() -> ctypes.CDLL | None:
    """The OpenBLAS numpy's wheels ship (``numpy.libs/libscipy_openblas64_*.so``,
    with 64-bit sizes), or None (another numpy build: compiled code then
    multiplies matrices with its own loops)."""
    import glob
    import os

    libraries = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libraries, "libscipy_openblas64_*.so"))):
        handle = ctypes.CDLL(path)
        if hasattr(handle, "scipy_cblas_dgemm64_"):
            if hasattr(handle, "scipy_openblas_set_num_threads64_"):
                handle.scipy_openblas_set_num_threads64_.argtypes = [ctypes.c_int]
                handle.scipy_openblas_set_num_threads64_.restype = None
            return handle
    return None


@functools.cache
def _numpy_blas() -> tuple[int, int, int, int] | None:
    """Addresses of ``cblas_dgemm``, ``cblas_sgemm``, ``cblas_dgemv`` and
    ``cblas_sgemv`` in numpy's OpenBLAS, or None."""
    handle = _numpy_openblas()
    if handle is None:
        return None
    try:
        functions = [getattr(handle, f"scipy_cblas_{name}64_") for name in ("dgemm", "sgemm", "dgemv", "sgemv")]
    except AttributeError:
        return None
    return tuple(ctypes.cast(function, ctypes.c_void_p).value for function in functions)


def set_blas_threads(count: int) -> None:
    """The number of threads numpy's OpenBLAS (which compiled code's matrix
    products call) runs on from now on, when there is one. Its idle threads
    spin for a while after each product: more of them than the cores soac
    was given took those cores from soac's own loops."""
    handle = _numpy_openblas()
    if handle is not None and hasattr(handle, "scipy_openblas_set_num_threads64_"):
        handle.scipy_openblas_set_num_threads64_(count)


def register_blas(handle: ctypes.CDLL) -> None:
    """Makes the matrix products of the CPU runtime behind ``handle``
    (runtime/soac_matmul.c) call numpy's OpenBLAS, when there is one."""
    blas = _numpy_blas()
    if blas is not None:
        for setter, functions in ((handle.soac_set_gemm, blas[:2]), (handle.soac_set_gemv, blas[2:])):
            setter.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            setter.restype = None
            setter(*functions)


class CheckedCalls:
    """Calls through soac's runtime library, CPU or GPU
    (``soac_call_checked``), which stops a call at its first failed check
    (of host code, or recorded by a kernel), frees what the call allocated,
    and returns the check's message (instead of aborting the process). Calls
    go through MLIR's packed interface of the C interface,
    ``_mlir__mlir_ciface_<name>(void **)``."""

    def __init__(self, handle: ctypes.CDLL):
        self._call = handle.soac_call_checked
        self._call.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._call.restype = ctypes.c_char_p
        self._kind = handle.soac_failure_kind
        self._kind.argtypes = []
        self._kind.restype = ctypes.c_int
        # Result buffers come from the runtime's malloc: they go back to the
        # free it is linked to, which is not libc's when another allocator is
        # preloaded (jemalloc, libasan, libc_malloc_debug).
        self.free = handle._mlir_memref_to_llvm_free
        self.free.argtypes = [ctypes.c_void_p]
        self.free.restype = None

    def __call__(self, function: str, packed: int, arguments: int) -> None:
        """Calls ``packed`` on the array of argument pointers at address
        ``arguments`` (:class:`_PackedArguments`)."""
        message = self._call(packed, arguments)
        if message:
            self.fail(function, message)

    def fail(self, function: str, message: bytes) -> None:
        """Raises the error of the failed check of a call of ``function``
        that returned ``message``."""
        error = _FAILURES.get(self._kind(), ExecutionError)
        raise error(f"{function}: {message.decode(errors='replace')}")

    def fast_plan(self, signature: Signature, packed: int) -> Any:
        """The C++ call of a function of ``signature`` at ``packed``
        (``_calls.Plan``), or None where there is no extension or a dtype it
        does not take (``_FAST_DTYPES``)."""
        values = (*signature.args, *signature.results)
        if _fast_calls is None or any(v.dtype not in _FAST_DTYPES for v in values):
            return None

        def spec(value: ValueSpec) -> tuple:
            dtype = value.numpy_dtype
            return (value.is_tensor, dtype.kind, dtype.itemsize, value.shape, dtype, dtype.type)

        def address(function: Any) -> int:
            return ctypes.cast(function, ctypes.c_void_p).value

        return _fast_calls.Plan(
            address(self._call), packed, address(self.free),
            [spec(a) for a in signature.args], [spec(r) for r in signature.results],
            np.ndarray, np.zeros, functools.partial(np.array, copy=True),
            functools.partial(self.fail, signature.name), _DECLINED,
        )


# What a call of ``_calls.Plan`` returns when abi.py must make it.
_DECLINED = object()
# The dtypes ``_calls.Plan`` takes: all but float16, passed as its bits.
_FAST_DTYPES = frozenset(_CTYPES) - {"float16"}


class _PackedArguments:
    """The argument array of a packed interface, ``void **``: the address of
    each argument of the C interface, which for a tensor is a pointer to
    its memref descriptor (and, first, a pointer to the results' struct
    when the function returns one). The array, those pointers and the
    descriptors are the words of one int64 buffer, filled in one assignment
    (a ctypes struct per tensor cost more than the call of a small
    function); scalars are ctypes values. ``address`` is valid while this
    object lives."""

    def __init__(self, arrays: list[Any], specs: tuple[ValueSpec, ...], results: Any, results_first: bool,
                 layout: tuple[int, int, int]):
        """``layout``: ``_packed_layout`` of the call's specs and results."""
        entry_count, slot_count, word_count = layout
        self._words = np.empty(word_count, np.int64)
        self.address = _data_address(self._words)
        slot = self.address + 8 * entry_count
        descriptor = slot + 8 * slot_count
        entries: list[int] = []
        slots: list[int] = []
        descriptors: list[int] = []
        self._scalars: list[Any] = []
        if results_first:
            entries.append(slot)
            slots.append(ctypes.addressof(results))
            slot += 8
        for array, spec in zip(arrays, specs):
            if spec.shape is None:
                value = _scalar(array, spec)
                self._scalars.append(value)
                entries.append(ctypes.addressof(value))
                continue
            entries.append(slot)
            slots.append(descriptor)
            slot += 8
            address = _data_address(array)
            shape = array.shape
            words = (address, address, 0, *shape, *device.c_contiguous_strides(shape))
            descriptors += words
            descriptor += 8 * len(words)
        if results is not None and not results_first:
            entries.append(ctypes.addressof(results))
        self._words[:] = entries + slots + descriptors


def _packed_layout(specs: tuple[ValueSpec, ...], results: bool, results_first: bool) -> tuple[int, int, int]:
    """The numbers of entries, descriptor pointers and words of the packed
    arguments of a function of ``specs``."""
    tensors = [spec for spec in specs if spec.is_tensor]
    entries = len(specs) + results
    slots = len(tensors) + results_first
    return entries, slots, entries + slots + sum(3 + 2 * len(spec.shape) for spec in tensors)


def _data_address(array: np.ndarray | device.DeviceArgument) -> int:
    """The address of an argument's first element."""
    if isinstance(array, device.DeviceArgument):
        return array.pointer
    try:  # about a third of the time of array.ctypes.data
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):  # read-only, or empty
        return array.ctypes.data


class GpuMemory:
    """The memory and streams of soac's GPU runtime, found in a loaded library."""

    def __init__(self, handle: ctypes.CDLL):
        self._alloc = handle.soac_gpu_alloc
        self._alloc.argtypes = [ctypes.c_size_t]
        self._alloc.restype = ctypes.c_void_p
        self._free = handle.soac_gpu_free
        self._free.argtypes = [ctypes.c_void_p]
        self._free.restype = None
        self._copy = handle.soac_gpu_copy
        self._copy.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
        self._copy.restype = None
        self._set_stream = handle.soac_gpu_set_stream
        self._set_stream.argtypes = [ctypes.c_void_p]
        self._set_stream.restype = None
        self._stream = handle.soac_gpu_stream
        self._stream.restype = ctypes.c_void_p
        self._status = handle.soac_gpu_status
        self._status.restype = ctypes.c_char_p
        self._driver: device.CudaDriver | None = None

    def check(self) -> None:
        status = self._status().decode()
        if status != "ready":
            raise DeviceError(f"compiled GPU code cannot run here: {status}")

    @property
    def driver(self) -> device.CudaDriver:
        """The CUDA driver, opened at first use (after :meth:`check`)."""
        if self._driver is None:
            self._driver = device.CudaDriver()
        return self._driver

    def stream(self) -> int:
        """The stream compiled code called from this thread runs on."""
        return self._stream() or 0

    def set_stream(self, handle: int | None) -> None:
        """Compiled code called from this thread runs on ``handle`` (None: the
        runtime's own stream)."""
        self._set_stream(handle)

    def allocate(self, nbytes: int) -> int:
        """A buffer of managed memory (an address)."""
        address = self._alloc(nbytes)
        if not address:
            raise OutOfMemoryError(f"cannot allocate {nbytes} bytes of GPU managed memory")
        return address

    def copy(self, to: int, source: int, nbytes: int) -> None:
        """``nbytes`` from ``source`` to ``to``: device, managed or host
        memory, after the stream's kernels, finished on return."""
        self._copy(to, source, nbytes)

    def copy_in(self, array: np.ndarray) -> np.ndarray:
        """A C-contiguous copy of ``array`` in managed memory (numpy's view of it)."""
        address = self.allocate(array.nbytes)
        copy = _array_at(address, array.shape, array.dtype)
        copy[...] = array
        return copy

    def free(self, address: int) -> None:
        self._free(address)


@dataclass(frozen=True)
class ValueSpec:
    """The type of one argument or result: a numpy dtype name and, for
    tensors, the shape (``None`` for a dynamic size); ``shape is None`` for a
    scalar."""

    dtype: str
    shape: tuple[int | None, ...] | None = None

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None

    # Asked on every call of a compiled function, for every argument.
    @functools.cached_property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @functools.cached_property
    def static_sizes(self) -> tuple[tuple[int, int], ...]:
        """A tensor's dimensions whose size is static, with that size."""
        return tuple((dim, size) for dim, size in enumerate(self.shape) if size is not None)

    def describe(self) -> str:
        if not self.is_tensor:
            return self.dtype
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype}[{dims}]"

    def to_json(self) -> dict:
        return {"dtype": self.dtype, "shape": None if self.shape is None else list(self.shape)}

    @staticmethod
    def from_json(data: dict) -> ValueSpec:
        shape = data["shape"]
        return ValueSpec(data["dtype"], None if shape is None else tuple(shape))


@dataclass(frozen=True)
class Signature:
    """Name, arguments and results of a compiled function."""

    name: str
    args: tuple[ValueSpec, ...]
    results: tuple[ValueSpec, ...]

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "args": [a.to_json() for a in self.args],
            "results": [r.to_json() for r in self.results],
        }

    @staticmethod
    def from_json(data: dict) -> Signature:
        return Signature(
            data["name"],
            tuple(ValueSpec.from_json(a) for a in data["args"]),
            tuple(ValueSpec.from_json(r) for r in data["results"]),
        )


_DESCRIPTORS: dict[tuple[str, int], type] = {}


def descriptor_type(dtype: str, rank: int) -> type:
    """The ctypes struct of a rank-``rank`` memref descriptor of ``dtype``."""
    key = (dtype, rank)
    if key not in _DESCRIPTORS:
        element = ctypes.POINTER(_CTYPES[dtype])
        _DESCRIPTORS[key] = type(
            f"MemRef{rank}D_{dtype}",
            (ctypes.Structure,),
            {
                "_fields_": [
                    ("allocated", element),
                    ("aligned", element),
                    ("offset", ctypes.c_int64),
                    ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank),
                ]
            },
        )
    return _DESCRIPTORS[key]


def _ctype(spec: ValueSpec) -> type:
    return descriptor_type(spec.dtype, len(spec.shape)) if spec.is_tensor else _CTYPES[spec.dtype]


class CompiledFunction:
    """A compiled function callable on numpy arrays; see the module docstring
    for the ABI. ``keepalive`` holds whatever keeps the code loaded.

    Calls go through the function's packed interface (``packed``: the
    address of ``_mlir__mlir_ciface_<name>(void **)``), one array of
    pointers, so that functions with any number of arguments and results can
    be called (a ctypes function type takes at most 1024 parameters)."""

    def __init__(
        self,
        signature: Signature,
        packed: int,
        keepalive: Any = None,
        gpu: GpuMemory | None = None,
        checked: CheckedCalls | None = None,
        device_memory: bool = False,
    ):
        """``checked``: call through ``CheckedCalls`` (CPU code, whose failed
        checks stop the call), rather than calling ``packed`` directly.
        ``device_memory``: GPU code whose host part reads buffers only by
        copies (``GpuOptions(device_memory=True)``), which may therefore
        take device memory that is not managed."""
        self.signature = signature
        self._keepalive = keepalive
        self._gpu = gpu
        self._checked = checked
        self._device_memory = device_memory
        self._packed = packed
        self._direct = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(packed)
        self._result_struct = None
        if len(signature.results) > 1 or (len(signature.results) == 1 and signature.results[0].is_tensor):
            fields = [(f"r{i}", _ctype(r)) for i, r in enumerate(signature.results)]
            self._result_struct = type("Results", (ctypes.Structure,), {"_fields_": fields})
        self._layout = _packed_layout(signature.args, bool(signature.results), self._result_struct is not None)
        self._fast = checked.fast_plan(signature, packed) if checked is not None and gpu is None else None

    def __call__(self, *args: Any, device_results: bool = False, stream: Any = None) -> Any:
        """The results of the function on ``args``.

        GPU code also takes arrays already on the GPU (``__cuda_array_interface__``
        or ``__dlpack__`` on a CUDA device: CuPy, PyTorch, JAX, Numba), by
        their pointer, and with ``device_results=True`` returns its tensors
        as :class:`DeviceArray` (left on the GPU) instead of numpy arrays.
        ``stream`` (an int ``CUstream``, or an object with ``__cuda_stream__``,
        ``cuda_stream`` or ``ptr``) is the stream its kernels run on; by
        default, one the runtime created."""
        if self._fast is not None and not device_results and stream is None:
            results = self._fast(*args)
            if results is not _DECLINED:
                return results
        spec = self.signature
        if len(args) != len(spec.args):
            raise ArgumentError(f"{spec.name} takes {len(spec.args)} arguments, got {len(args)}")
        if self._gpu is not None:
            return self._call_on_gpu(args, device_results, stream, None)
        if device_results or stream is not None:
            raise ArgumentError(f"{spec.name} runs on the CPU: device_results and stream are for GPU code")
        arrays = [_check_argument(spec.name, i, a, s) for i, (a, s) in enumerate(zip(args, spec.args))]
        results = self._raw_call(arrays)
        if self._result_struct is None:
            return results
        allocations: dict[int, device.Allocation] = {}  # results may share a buffer
        free = self._checked.free if self._checked is not None else _libc.free
        values = [
            _owned_array(getattr(results, f"r{i}"), r, allocations, free)
            if r.is_tensor
            else _scalar_result(getattr(results, f"r{i}"), r)
            for i, r in enumerate(spec.results)
        ]
        return values[0] if len(values) == 1 else tuple(values)

    def timed(self, *args: Any, device_results: bool = False, stream: Any = None) -> tuple[Any, float]:
        """GPU code: the results of a call (as ``__call__``) and its time on
        the GPU in milliseconds, between CUDA events recorded on the call's
        stream just before and after the compiled function (its kernels and
        allocations; copying numpy arguments in and results out is not
        counted)."""
        if self._gpu is None:
            raise ArgumentError(f"{self.signature.name} runs on the CPU: timed() measures GPU code")
        if len(args) != len(self.signature.args):
            raise ArgumentError(f"{self.signature.name} takes {len(self.signature.args)} arguments, got {len(args)}")
        times: list[float] = []
        results = self._call_on_gpu(args, device_results, stream, times)
        return results, times[0]

    def _raw_call(self, arrays: list[Any]) -> Any:
        """Calls the function on checked arguments through its packed
        interface: a pointer to each argument of the C interface (the
        results' struct pointer first), then to the scalar result's storage.
        Returns the struct of results, or the one scalar result (None
        without results)."""
        spec = self.signature
        results = None
        if self._result_struct is not None:
            results = self._result_struct()
        elif spec.results:
            results = _ctype(spec.results[0])()
        arguments = _PackedArguments(arrays, spec.args, results, self._result_struct is not None, self._layout)
        if self._checked is not None:
            self._checked(spec.name, self._packed, arguments.address)
        else:
            self._direct(arguments.address)
        if self._result_struct is not None or results is None:
            return results
        return _scalar_result(results.value, spec.results[0])

    def _call_on_gpu(self, args: tuple, device_results: bool, stream: Any, times: list[float] | None) -> Any:
        """Numpy arguments copied into managed memory, GPU arrays passed by
        their pointer, on ``stream``; results copied out, or kept on the GPU.
        Every buffer the call allocates is freed once, here or by the
        DeviceArray that owns it; the caller's arrays never. ``times`` gets
        the call's milliseconds by CUDA events, when not None."""
        spec = self.signature
        self._gpu.check()
        try:
            handle = device.stream_handle(stream)
        except TypeError as error:
            raise ArgumentError(f"{spec.name}: {error}") from None
        self._gpu.set_stream(handle)
        owned: set[int] = set()  # freed when the call is over
        on_device: list[device.DeviceArgument] = []  # given back when it is over
        try:
            passed = []
            for i, (value, s) in enumerate(zip(args, spec.args)):
                argument = self._device_argument(i, value, s) if s.is_tensor else None
                if argument is not None:
                    on_device.append(argument)
                    passed.append(argument)
                    continue
                checked = _check_argument(spec.name, i, value, s)
                if s.is_tensor:
                    checked = self._gpu.copy_in(checked)
                    owned.add(checked.ctypes.data)
                passed.append(checked)
            if times is None:
                results = self._raw_call(passed)
            else:
                results, ms = self._gpu.driver.elapsed_ms(self._gpu.stream(), lambda: self._raw_call(passed))
                times.append(ms)
            if self._result_struct is None:
                return results
            return self._gpu_results(results, owned, {a.pointer for a in on_device}, device_results)
        finally:
            self._gpu.set_stream(None)
            for argument in on_device:
                argument.done()
            for address in owned:
                self._gpu.free(address)

    def _device_argument(self, position: int, value: Any, spec: ValueSpec) -> device.DeviceArgument | None:
        """``value`` passed by its pointer when it is on the GPU (checked
        against ``spec``, its producer's stream waited for), else None. Code
        whose host part may read buffers directly (compiled without
        ``device_memory``) gets a copy in managed memory of an array in
        device memory instead."""
        where = f"argument #{position} of {self.signature.name}"
        try:
            argument = device.device_argument(value, self._gpu.stream())
        except device.Unpassable as error:
            raise ArgumentError(f"{where} {error}") from None
        if argument is None:
            return None
        try:
            _check_layout(where, argument.dtype, argument.shape, spec)
            driver = self._gpu.driver
            if argument.pointer:
                ordinal = argument.device if argument.device is not None else driver.pointer_device(argument.pointer)
                if ordinal is None:
                    raise ArgumentError(f"{where} gives pointer {argument.pointer:#x}, which is not memory of a CUDA device")
                if ordinal != 0:
                    raise ArgumentError(f"{where} is on CUDA device {ordinal}; compiled code runs on device 0")
            if argument.stream is not None:
                driver.synchronize(argument.stream)
            if self._device_memory or not argument.pointer or driver.is_managed(argument.pointer):
                return argument
            nbytes = int(np.prod(argument.shape, dtype=np.int64)) * argument.dtype.itemsize
            address = self._gpu.allocate(nbytes)
            self._gpu.copy(address, argument.pointer, nbytes)
        except BaseException:
            argument.done()
            raise
        argument.done()
        return device.DeviceArgument(address, argument.shape, argument.dtype, owner=None,
                                     release=functools.partial(self._gpu.free, address))

    def _gpu_results(self, results: ctypes.Structure, owned: set[int], borrowed: set[int], device_results: bool) -> Any:
        """The results of a GPU call from its struct: tensors copied to numpy
        arrays, or DeviceArrays. The buffers the call allocated join
        ``owned`` (freed after the call) unless a DeviceArray takes one; a
        result in the caller's memory (``borrowed``), or in a buffer an
        earlier result took, is a copy of its own."""
        spec = self.signature
        fields = [getattr(results, f"r{i}") for i in range(len(spec.results))]
        for field, r in zip(fields, spec.results):
            allocated = _address(field.allocated) if r.is_tensor else None
            if allocated and allocated not in borrowed:
                owned.add(allocated)
        values: list[Any] = []
        for field, r in zip(fields, spec.results):
            if not r.is_tensor:
                values.append(_scalar_result(field, r))
                continue
            dtype = r.numpy_dtype
            shape, strides = tuple(field.sizes), tuple(field.strides)
            pointer = (_address(field.aligned) or 0) + field.offset * dtype.itemsize
            view = DeviceArray(pointer, shape, dtype, None, self._gpu.copy, strides)
            if not device_results:
                values.append(view.numpy())
                continue
            allocated = _address(field.allocated)
            if allocated in owned:
                owned.discard(allocated)
                values.append(DeviceArray(pointer, shape, dtype, device.Allocation(allocated, self._gpu.free),
                                          self._gpu.copy, strides))
                continue
            extent = 0 if view.size == 0 else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
            address = self._gpu.allocate(extent * dtype.itemsize)
            owner = device.Allocation(address, self._gpu.free)
            self._gpu.copy(address, pointer, extent * dtype.itemsize)
            values.append(DeviceArray(address, shape, dtype, owner, self._gpu.copy, strides))
        return values[0] if len(values) == 1 else tuple(values)


def _address(pointer: Any) -> int | None:
    """A ctypes pointer's address (None for null)."""
    return ctypes.cast(pointer, ctypes.c_void_p).value

def _check_argument(function: str, position: int, value: Any, spec: ValueSpec) -> Any:
    """``value`` as compiled code takes it: a numpy scalar of the declared
    dtype, or a C-contiguous array of exactly that dtype. Raises
    :class:`ArgumentError` for anything numpy would not convert to it
    unchanged (the rules are in README.md, "Running programs")."""
    if type(value) is np.ndarray and spec.is_tensor and _fits(value, spec):
        return value  # what the checks below would return: the array itself
    where = f"argument #{position} of {function}"
    if not spec.is_tensor:
        return _scalar_argument(where, value, spec.numpy_dtype)
    array = as_array(value)
    if array is None or array.dtype.kind not in _NUMBER_KINDS + "c":
        given = _describe(value)
        raise ArgumentError(f"{where} must be {spec.describe()}; got {given}, which is not an array of numbers")
    _check_layout(where, array.dtype, array.shape, spec)
    # The compiled code assumes the identity layout.
    return np.ascontiguousarray(array)


def _fits(array: np.ndarray, spec: ValueSpec) -> bool:
    """Whether ``array`` is passed as it is: C-contiguous, exactly the
    tensor ``spec``'s dtype, rank and static sizes."""
    return (
        array.dtype == spec.numpy_dtype
        and array.ndim == len(spec.shape)
        and array.flags.c_contiguous
        and (not spec.static_sizes or all(array.shape[dim] == size for dim, size in spec.static_sizes))
    )


def _check_layout(where: str, dtype: np.dtype, shape: tuple[int, ...], spec: ValueSpec) -> None:
    """An :class:`ArgumentError` unless an array of ``dtype`` and ``shape``
    is the tensor ``spec``: exactly its dtype, rank and static sizes."""
    if dtype != spec.numpy_dtype:
        raise ArgumentError(f"{where} must be {spec.describe()}; got dtype {dtype}")
    if len(shape) != len(spec.shape):
        raise ArgumentError(f"{where} must be {spec.describe()}; got shape {shape}")
    for dim, (size, static) in enumerate(zip(shape, spec.shape)):
        if static is not None and size != static:
            raise ArgumentError(f"{where} must be {spec.describe()}; got size {size} in dim {dim}")


# Kinds of numpy dtypes whose values are real numbers: bool, integers, floats.
_NUMBER_KINDS = "biuf"


def _scalar_argument(where: str, value: Any, dtype: np.dtype) -> np.generic:
    """``value`` as a numpy scalar of ``dtype``, if that keeps its value
    (floats rounded to the nearest ``dtype``); an :class:`ArgumentError` saying
    why not otherwise."""
    number = _as_number(value)
    if isinstance(number, np.ndarray) and number.ndim != 0:
        raise ArgumentError(f"{where} is a scalar of dtype {dtype}, got an array of shape {number.shape}")
    reason = "which is not a real number" if number is None else _conversion_refusal(number, dtype)
    if reason is not None:
        raise ArgumentError(f"{where} must be a scalar of dtype {dtype}; got {_describe(value)}, {reason}")
    return dtype.type(number)


def _as_number(value: Any) -> bool | int | float | np.ndarray | None:
    """A Python ``bool``, ``int`` or ``float`` itself (numpy's ``float64``
    subclasses ``float``, but is numpy's); anything else as a numpy array,
    or None where numpy cannot make one."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        return value
    return as_array(value)


def as_array(value: Any) -> np.ndarray | None:
    """``value`` as a numpy array: an object with ``__dlpack__`` (a PyTorch
    CPU tensor, a JAX array, ...) without a copy where its layout allows,
    anything else by ``np.asarray``; None where numpy cannot make an array
    of it (a ragged list, a GPU tensor, say)."""
    if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
        try:
            return np.from_dlpack(value)
        except (TypeError, ValueError, RuntimeError, BufferError):
            pass  # e.g. a device numpy cannot read: np.asarray says what it can
    try:
        return np.asarray(value)
    except (TypeError, ValueError, OverflowError, RuntimeError):
        return None


def _conversion_refusal(number: bool | int | float | np.ndarray, dtype: np.dtype) -> str | None:
    """Why ``number`` (a Python number, or a 0-d array) does not convert to
    ``dtype`` unchanged, or None when it does. Python numbers are judged by
    value; numpy values must cast by numpy's ``same_kind`` rule, then fit."""
    if isinstance(number, np.ndarray):
        if number.dtype.kind not in _NUMBER_KINDS:
            return "which is not a real number"
        if not np.can_cast(number.dtype, dtype, "same_kind"):
            return f"which numpy does not cast to {dtype} (same_kind)"
        number = number[()]
    if dtype.kind == "b":
        is_bool = isinstance(number, (bool, np.bool_)) or isinstance(number, int) and number in (0, 1)
        return None if is_bool else "which is neither a bool nor the int 0 or 1"
    if dtype.kind in "iu":
        return _integer_refusal(number, dtype)
    return _float_refusal(number, dtype)


def _integer_refusal(number: Any, dtype: np.dtype) -> str | None:
    """Why a bool, integer or Python float is not a value of the integer ``dtype``."""
    if isinstance(number, float) and not number.is_integer():
        return "which is not an integer"
    info = np.iinfo(dtype)
    return None if info.min <= int(number) <= info.max else f"which is out of the range of {dtype}"


def _float_refusal(number: Any, dtype: np.dtype) -> str | None:
    """Why a bool, integer or float does not convert to the float ``dtype``:
    a finite value that overflows it (infinities and NaN pass)."""
    with np.errstate(over="ignore"):
        try:
            converted = dtype.type(number)
        except OverflowError:  # a Python int beyond every float
            return f"which overflows {dtype}"
    given_inf = isinstance(number, (float, np.floating)) and bool(np.isinf(number))
    return f"which overflows {dtype}" if np.isinf(converted) and not given_inf else None


def _describe(value: Any) -> str:
    """What was given, for an error message: its type and (short) value."""
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    if isinstance(value, np.generic):
        return f"{value.dtype} {reprlib.repr(value.item())}"
    return "None" if value is None else f"{type(value).__name__} {reprlib.repr(value)}"


def _scalar(value: np.generic, spec: ValueSpec) -> Any:
    """The ctypes value of a scalar argument checked by ``_check_argument``."""
    if spec.dtype == "float16":
        return _CTYPES["float16"](int(value.view(np.uint16)))
    return _CTYPES[spec.dtype](value.item())


def _scalar_result(value: Any, spec: ValueSpec) -> np.generic:
    if spec.dtype == "float16":
        return np.uint16(value).view(np.float16)
    return spec.numpy_dtype.type(value)


def _owned_array(
    descriptor: ctypes.Structure, spec: ValueSpec, allocations: dict[int, device.Allocation], free: Any
) -> np.ndarray:
    """A numpy array over a result buffer that frees it when it is no longer
    used. A function may return one buffer twice: the first result over it
    owns it, later ones are copies, so that no two results share memory."""
    allocated = ctypes.cast(descriptor.allocated, ctypes.c_void_p).value
    if allocated in allocations:
        return np.array(_borrowed_array(descriptor, spec), copy=True)
    owner = None
    if allocated:
        owner = allocations[allocated] = device.Allocation(allocated, free)
    return _borrowed_array(descriptor, spec, owner)


def _borrowed_array(descriptor: ctypes.Structure, spec: ValueSpec, owner: Any = None) -> np.ndarray:
    """A numpy array over a result buffer, keeping ``owner`` alive."""
    dtype = spec.numpy_dtype
    shape = tuple(descriptor.sizes)
    aligned = ctypes.cast(descriptor.aligned, ctypes.c_void_p).value
    if math.prod(shape) == 0 or aligned is None:
        return np.zeros(shape, dtype=dtype)
    strides = tuple(s * dtype.itemsize for s in descriptor.strides)
    return _array_at(aligned + descriptor.offset * dtype.itemsize, shape, dtype, strides, owner)


class _Memory:
    """Memory at an address, as numpy's array interface describes it; the
    array made from it keeps it, and it keeps ``owner``."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, interface: dict, owner: Any):
        self.__array_interface__ = interface
        self.owner = owner


def _array_at(address: int, shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...] | None = None,
              owner: Any = None) -> np.ndarray:
    """A writable numpy array over memory at ``address`` (C-contiguous
    without ``strides``), keeping ``owner`` alive. Through the array
    interface rather than a ctypes array: each ``c_char * n`` of a new n
    is a new type, garbage only Python's cyclic GC collects."""
    interface = {"version": 3, "shape": shape, "typestr": dtype.str, "data": (address, False), "strides": strides}
    return np.asarray(_Memory(interface, owner))


class Library:
    """The functions of a shared library compiled by soac, as attributes."""

    def __init__(self, path: str):
        import json
        import os

        self.path = os.path.abspath(path)
        with open(os.path.splitext(self.path)[0] + ".json") as f:
            metadata = json.load(f)
        self._handle = ctypes.CDLL(self.path)
        self.target = metadata.get("target", "cpu")
        gpu = GpuMemory(self._handle) if self.target == "gpu" else None
        checked = CheckedCalls(self._handle)
        if self.target == "cpu":
            register_blas(self._handle)
        self.functions = {}
        for entry in metadata["functions"]:
            signature = Signature.from_json(entry)
            wrapper = getattr(self._handle, "_mlir__mlir_ciface_" + signature.name)
            packed = ctypes.cast(wrapper, ctypes.c_void_p).value
            self.functions[signature.name] = CompiledFunction(
                signature, packed, keepalive=self._handle, gpu=gpu, checked=checked,
                device_memory=metadata.get("device_memory", False),
            )
            setattr(self, signature.name, self.functions[signature.name])


def load_library(path: str) -> Library:
    """Loads ``lib<name>.so`` written by ``soac.compile(..., emit="shared-lib")``;
    its signatures come from the ``.json`` file beside it."""
    return Library(path)
