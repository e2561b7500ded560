"""Arrays on the GPU in and out of compiled GPU code (soac.runtime.device).

Without a GPU: the protocols are parsed from stand-in objects (a
``__cuda_array_interface__`` dict, DLPack capsules made with ctypes), and
whole calls run in a child process against the stand-in CUDA driver
(fake_cuda/libcuda.c: device memory is host memory, so functions without
kernels run). With CuPy or PyTorch on a GPU, their arrays go in and out.
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import textwrap

import numpy as np
import pytest

import soac
from soac.runtime import abi, device

from test_compile_gpu import gpu_status
from conftest import run_on_stand_in_driver

needs_gpu = pytest.mark.skipif(gpu_status() != "ready", reason=f"no GPU to run on: {gpu_status()}")


class FakeGpuArray:
    """A ``__cuda_array_interface__`` over numpy memory (what CuPy gives)."""

    def __init__(self, array: np.ndarray, **changes):
        self.array = array
        self.__cuda_array_interface__ = {"shape": array.shape, "typestr": array.dtype.str,
                                         "data": (array.ctypes.data, False), "version": 3, "strides": None,
                                         **changes}


class HostMemory:
    """Counts what DeviceArrays free; copies as memmove (host "device")."""

    def __init__(self):
        self.freed: list[int] = []

    def free(self, address: int) -> None:
        self.freed.append(address)

    @staticmethod
    def copy(to: int, source: int, nbytes: int) -> None:
        ctypes.memmove(to, source, nbytes)


def device_array(array: np.ndarray, memory: HostMemory) -> device.DeviceArray:
    return device.DeviceArray(array.ctypes.data, array.shape, array.dtype,
                              device.Allocation(array.ctypes.data, memory.free), memory.copy)


def cuda_capsule(array: np.ndarray, deleted: list[int], device_type: int = device.DL_CUDA,
                 strides: tuple[int, ...] | None = None):
    """A ``"dltensor"`` capsule over ``array``'s memory that claims to be on
    ``device_type``; its deleter appends to ``deleted``. Returns the capsule
    and what must stay alive with it."""
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    strides_array = None if strides is None else (ctypes.c_int64 * array.ndim)(*strides)
    managed = device._DLManagedTensor()
    tensor = managed.dl_tensor
    tensor.data = array.ctypes.data
    tensor.device = device._DLDevice(device_type, 0)
    tensor.ndim = array.ndim
    tensor.dtype = device._DLDataType(2, array.dtype.itemsize * 8, 1)
    tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    if strides_array is not None:
        tensor.strides = ctypes.cast(strides_array, ctypes.POINTER(ctypes.c_int64))
    deleter = device._DELETER(lambda address: deleted.append(address))
    managed.deleter = deleter
    capsule = device._capsule_new(ctypes.addressof(managed), device._DLTENSOR, None)
    return capsule, (managed, shape, strides_array, deleter, array)


# --- __cuda_array_interface__ ------------------------------------------------


def test_an_interface_gives_its_pointer_shape_dtype_and_stream():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    argument = device.device_argument(FakeGpuArray(x, stream=7), stream=None)
    assert (argument.pointer, argument.shape, argument.dtype, argument.stream) == (x.ctypes.data, (3, 4), np.float32, 7)
    contiguous = FakeGpuArray(x, strides=(16, 4))
    assert device.device_argument(contiguous, stream=None).shape == (3, 4)


@pytest.mark.parametrize("changes, message", [
    ({"strides": (4, 12)}, "is not C-contiguous"),
    ({"strides": (16, 2)}, "not whole elements"),
    ({"mask": object()}, "has a mask"),
    ({"stream": 0}, "stream 0"),
    ({"data": None}, "malformed"),
])
def test_interfaces_compiled_code_cannot_take_are_refused(changes, message):
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(device.Unpassable, match=message):
        device.device_argument(FakeGpuArray(x, **changes), stream=None)


def test_host_arrays_are_not_device_arguments():
    class CpuTensor:  # what PyTorch does for a CPU tensor
        @property
        def __cuda_array_interface__(self):
            raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor")

        def __dlpack_device__(self):
            return (device.DL_CPU, 0)

    assert device.device_argument(np.zeros(3), stream=None) is None
    assert device.device_argument(CpuTensor(), stream=None) is None
    assert device.device_argument([1.0, 2.0], stream=None) is None


# --- DLPack --------------------------------------------------------------------


def test_a_cuda_capsule_is_consumed_and_released_once():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    deleted: list[int] = []
    capsule, keep = cuda_capsule(x, deleted)
    argument = device.from_dlpack_capsule(capsule)
    assert (argument.pointer, argument.shape, argument.dtype, argument.device) == (x.ctypes.data, (2, 3), np.float64, 0)
    with pytest.raises(device.Unpassable, match="not an unused 'dltensor'"):
        device.from_dlpack_capsule(capsule)  # renamed: used
    assert deleted == []
    argument.done()
    argument.done()
    del capsule
    gc.collect()
    assert deleted == [ctypes.addressof(keep[0])]


@pytest.mark.parametrize("device_type, strides, message", [
    (device.DL_CPU, None, "not a CUDA device"),
    (device.DL_CUDA, (1, 2), "is not C-contiguous"),
])
def test_capsules_compiled_code_cannot_take_are_refused_and_released(device_type, strides, message):
    x = np.zeros((2, 3), np.float32)
    deleted: list[int] = []
    capsule, keep = cuda_capsule(x, deleted, device_type, strides)
    with pytest.raises(device.Unpassable, match=message):
        device.from_dlpack_capsule(capsule)
    assert deleted == [ctypes.addressof(keep[0])]


def test_dlpack_producers_are_asked_for_the_call_s_stream():
    x = np.zeros(4, np.float32)
    deleted: list[int] = []

    class Producer:
        def __dlpack_device__(self):
            return (device.DL_CUDA, 0)

        def __dlpack__(self, stream=None):
            self.stream = stream
            self.capsule, self.keep = cuda_capsule(x, deleted)
            return self.capsule

    producer = Producer()
    argument = device.device_argument(producer, stream=1234)
    assert producer.stream == 1234 and argument.shape == (4,)
    argument.done()
    assert len(deleted) == 1


# --- results ---------------------------------------------------------------------


def test_a_device_array_exports_both_protocols_and_is_freed_once():
    memory = HostMemory()
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    array = device_array(x, memory)
    interface = array.__cuda_array_interface__
    assert interface["shape"] == (2, 3) and interface["typestr"] == "<i4" and interface["strides"] is None
    assert interface["data"] == (x.ctypes.data, False)
    assert array.__dlpack_device__() == (device.DL_CUDA, 0)
    np.testing.assert_array_equal(np.asarray(array), x)

    capsule = array.__dlpack__(stream=5)
    consumed = device.from_dlpack_capsule(array.__dlpack__())  # a consumer
    assert (consumed.pointer, consumed.shape, consumed.dtype) == (x.ctypes.data, (2, 3), np.int32)
    del array
    gc.collect()
    assert memory.freed == []  # the capsules keep it
    del capsule  # never consumed: its destructor releases it
    gc.collect()
    assert memory.freed == []
    consumed.done()
    gc.collect()
    assert memory.freed == [x.ctypes.data]


def test_a_strided_device_array_says_its_strides():
    memory = HostMemory()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    array = device.DeviceArray(x.ctypes.data, (3, 2), x.dtype, None, memory.copy, strides=(4, 2))
    assert array.__cuda_array_interface__["strides"] == (16, 8)
    np.testing.assert_array_equal(array.numpy(), x[:, ::2])
    with pytest.raises(BufferError, match="device 0"):
        array.__dlpack__(dl_device=(device.DL_CPU, 0))


@pytest.mark.parametrize("stream, handle", [
    (None, None), (0, 1), (7, 7), (np.int64(9), 9),
    (type("CupyStream", (), {"ptr": 11})(), 11),
    (type("TorchStream", (), {"cuda_stream": 12})(), 12),
    (type("Protocol", (), {"__cuda_stream__": lambda self: (0, 13)})(), 13),
])
def test_streams_are_handles_or_objects_holding_one(stream, handle):
    assert device.stream_handle(stream) == handle


def test_other_streams_are_refused():
    with pytest.raises(TypeError, match="stream must be"):
        device.stream_handle("default")
    with pytest.raises(TypeError, match="stream must be"):
        device.stream_handle(True)


def test_cpu_code_takes_no_gpu_keywords():
    f = soac.compile("func.func @id(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }", "id")
    with pytest.raises(soac.ArgumentError, match="runs on the CPU"):
        f(np.zeros(2, np.float32), device_results=True)
    with pytest.raises(soac.ArgumentError, match="runs on the CPU"):
        f.timed(np.zeros(2, np.float32))


# --- whole calls, against the stand-in driver ----------------------------------------

CALLS = textwrap.dedent('''
    import gc, sys
    import numpy as np
    import soac
    from soac.compiler import GpuOptions
    sys.path.insert(0, sys.argv[1])
    from test_gpu_arrays import FakeGpuArray

    SOURCE = """
    func.func @identity(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }
    func.func @swap(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
      return %y, %x, %y : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
    }
    """
    x = np.arange(5, dtype=np.float32)
    y = x + 10
    for device_memory in (False, True):
        options = GpuOptions(device_memory=device_memory)
        identity = soac.compile(SOURCE, "identity", target="gpu", options=options)
        swap = soac.compile(SOURCE, "swap", target="gpu", options=options)
        on_gpu = FakeGpuArray(x)
        np.testing.assert_array_equal(identity(on_gpu), x)
        result = identity(on_gpu, device_results=True)
        assert isinstance(result, soac.DeviceArray) and result.pointer != x.ctypes.data
        np.testing.assert_array_equal(np.asarray(result), x)
        # a result that is the caller's array, one that is our copy of a
        # numpy argument, and a buffer returned twice: each a buffer of its own
        a, b, c = swap(x, FakeGpuArray(y), device_results=True, stream=3)
        assert len({a.pointer, b.pointer, c.pointer, x.ctypes.data, y.ctypes.data}) == 5
        for got, want in ((a, y), (b, x), (c, y)):
            np.testing.assert_array_equal(got.numpy(), want)
        result, ms = identity.timed(x, stream=type("S", (), {"ptr": 4})())
        np.testing.assert_array_equal(result, x)
        assert ms >= 0
        try:
            identity(FakeGpuArray(x.astype(np.float64)))
        except soac.ArgumentError as error:
            assert "argument #0 of identity must be float32[?]; got dtype float64" in str(error), error
        else:
            raise AssertionError("a float64 array passed as float32")
        del a, b, c, result
        gc.collect()
    np.testing.assert_array_equal(x, np.arange(5, dtype=np.float32))  # never freed, never written
    print("calls passed")
''')


def test_whole_calls_against_the_stand_in_driver(fake_cuda_driver, tmp_path):
    """Device arrays in, DeviceArrays out, streams and events, with device
    memory being host memory: a buffer freed twice, or the caller's freed,
    would abort the child (glibc checks frees)."""
    run_on_stand_in_driver(fake_cuda_driver, tmp_path, CALLS, "calls passed")


# --- on a GPU, with the libraries that make GPU arrays --------------------------------

LIBRARIES = [name for name in ("cupy", "torch") if importlib.util.find_spec(name) is not None]


@needs_gpu
@pytest.mark.skipif(not LIBRARIES, reason="neither CuPy nor PyTorch is installed")
@pytest.mark.parametrize("library", LIBRARIES)
def test_gpu_arrays_of_cupy_and_torch_go_in_and_out(library):
    from gpu_programs import CASES

    source, make_args = CASES["saxpy"]
    saxpy = soac.compile(source, "saxpy", target="gpu", options=soac.compiler.GpuOptions(device_memory=True))
    a, x, y = make_args(1003)
    expected = saxpy(a, x, y)
    if library == "cupy":
        import cupy

        stream = cupy.cuda.Stream()
        result, ms = saxpy.timed(a, cupy.asarray(x), cupy.asarray(y), device_results=True, stream=stream)
        back = cupy.asnumpy(cupy.asarray(result))
    else:
        import torch

        stream = torch.cuda.Stream()
        result, ms = saxpy.timed(a, torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), device_results=True,
                                 stream=stream)
        back = torch.from_dlpack(result).cpu().numpy()
    assert ms > 0
    np.testing.assert_allclose(back, expected, rtol=1e-6)


def test_gpu_calls_without_a_gpu_say_so():
    if gpu_status() == "ready":
        pytest.skip("a GPU is here")
    f = soac.compile("func.func @id(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }", "id",
                     target="gpu")
    with pytest.raises(abi.DeviceError, match="cannot run here"):
        f(FakeGpuArray(np.zeros(2, np.float32)), device_results=True)
