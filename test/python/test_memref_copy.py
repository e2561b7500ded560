"""memrefCopy (runtime/memref_copy.c), the copy compiled code calls between
buffers that are not both contiguous: every element lands where numpy's
assignment puts it, for views of any layout and element size, in both
runtimes."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from soac.runtime import native


class Unranked(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


def descriptor(view: np.ndarray, base: np.ndarray) -> tuple[ctypes.Array, Unranked]:
    """The strided descriptor of ``view`` (a view of ``base``): ``base``'s
    pointer twice, the offset, sizes and strides in elements."""
    item = view.itemsize
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    fields = [base.ctypes.data, base.ctypes.data, offset, *view.shape, *(s // item for s in view.strides)]
    words = (ctypes.c_int64 * len(fields))(*fields)
    return words, Unranked(view.ndim, ctypes.cast(words, ctypes.c_void_p))


# (source view, target view) of buffers of shape (6, 7, 8), and one of rank 0.
VIEWS = [
    (lambda a: a, lambda b: b),  # contiguous: one memcpy
    (lambda a: a[1:, 1:5, 2:7], lambda b: b[1:, :4, 3:]),  # rows of 5 in both
    (lambda a: a[:, :, ::2], lambda b: b[:, :, :4]),  # strided inner dimension
    (lambda a: a.transpose(2, 0, 1)[:5], lambda b: b[1:6, :6, :7]),
    (lambda a: a[::-1, :, ::-1], lambda b: b),  # negative strides
    (lambda a: a[2:3, 4:5, 0:8], lambda b: b[0:1, 0:1, :]),  # unit dimensions
    (lambda a: a[:, 3:3], lambda b: b[:, 0:0]),  # empty
    (lambda a: a[1:2, 2:3, 3:4].reshape(()), lambda b: b[4:5, 5:6, 6:7].reshape(())),  # rank 0
]


@pytest.mark.parametrize("library", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint8, np.complex128])
@pytest.mark.parametrize("case", range(len(VIEWS)))
def test_copies_like_numpy(library, dtype, case):
    path = native.soac_runtime_library() if library == "cpu" else native.soac_cuda_runtime_library()
    memref_copy = ctypes.CDLL(path).memrefCopy
    memref_copy.argtypes = [ctypes.c_int64, ctypes.POINTER(Unranked), ctypes.POINTER(Unranked)]
    memref_copy.restype = None
    source_of, target_of = VIEWS[case]
    a = (np.arange(6 * 7 * 8) * 3 + 1).astype(dtype).reshape(6, 7, 8)
    b = np.zeros_like(a)
    source, target = source_of(a), target_of(b)
    expected = b.copy()
    target_of(expected)[...] = source_of(a)
    keep = [descriptor(source, a), descriptor(target, b)]
    memref_copy(a.itemsize, ctypes.byref(keep[0][1]), ctypes.byref(keep[1][1]))
    np.testing.assert_array_equal(b, expected)
