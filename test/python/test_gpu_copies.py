"""The GPU runtime's copies between buffers (runtime/soac_cuda_runtime.c),
which host code compiled for device memory calls instead of touching
buffers (soac-host-buffer-copies): run against the stand-in driver, whose
device memory is host memory, and compared with numpy's assignment of the
same views."""

from conftest import run_on_stand_in_driver

CHILD = r'''
import ctypes, sys
import numpy as np
from soac.runtime import native

runtime = ctypes.CDLL(native.soac_cuda_runtime_library())
assert runtime.soac_gpu_set_memory(1) == 0, "device memory refused"
I64 = ctypes.c_int64
runtime.soac_gpu_copy_strided.argtypes = [I64, I64, I64, I64, ctypes.c_void_p]
runtime.soac_gpu_copy_buffers.argtypes = [I64, I64, I64]


def address(view):
    return view.__array_interface__["data"][0]


def copy_strided(target, source):
    """What compiled code does for `memref.copy source, target`."""
    assert target.shape == source.shape and target.dtype == source.dtype
    size = source.itemsize
    shape = np.array([*source.shape, *(s // size for s in source.strides), *(s // size for s in target.strides)],
                     dtype=np.int64)
    runtime.soac_gpu_copy_strided(address(target), address(source), size, source.ndim, shape.ctypes.data)


rng = np.random.default_rng(0)
cases = {
    # (source view, target view) of fresh buffers, as bufferization makes them
    "rows of a slice (HAND's checkpoints: ?x4x4 into a stack of them)":
        lambda a, b: (a.reshape(6, 4, 4)[:5], b.reshape(2, 6, 4, 4)[1, 1:6]),
    "a column": lambda a, b: (a.reshape(12, 8)[:, 3], b.reshape(16, 12)[2]),
    "a transpose": lambda a, b: (a.reshape(12, 8).T, b[:96].reshape(8, 12)),
    "every other row and column": lambda a, b: (a.reshape(12, 8)[::2, ::2], b.reshape(12, 16)[:6, 4:8]),
    "3-D, inner two contiguous on one side only": lambda a, b: (a.reshape(4, 6, 4)[:, 1:4], b.reshape(8, 3, 8)[:4, :, 2:6]),
    "unit dimensions": lambda a, b: (a.reshape(1, 96, 1)[:, 10:20], b.reshape(192, 1, 1)[30:40].reshape(1, 10, 1)),
    "empty": lambda a, b: (a.reshape(12, 8)[:0], b.reshape(24, 8)[:0]),
    "contiguous": lambda a, b: (a.reshape(12, 8), b.reshape(24, 8)[12:]),
}
for name, views in cases.items():
    for dtype in (np.float64, np.float32, np.int8):
        a = (rng.standard_normal(96) * 9).astype(dtype)
        b = np.zeros(192, dtype=dtype)
        source, target = views(a, b)
        expected = b.copy()
        e_source, e_target = views(a, expected)
        e_target[...] = e_source
        copy_strided(target, source)
        assert np.array_equal(b, expected), (name, dtype, b, expected)

x = np.arange(10.0)
y = np.zeros(10)
runtime.soac_gpu_copy_buffers(address(y), address(x), 80)
assert np.array_equal(x, y)
print("copies passed")
'''


def test_strided_copies_between_buffers_match_numpy(fake_cuda_driver, tmp_path):
    run_on_stand_in_driver(fake_cuda_driver, tmp_path, CHILD, "copies passed")
