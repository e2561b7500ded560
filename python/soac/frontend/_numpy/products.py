"""Products: ``matmul`` (with numpy's batch broadcasting), ``dot``,
``vdot``, ``inner``, ``outer``, ``tensordot``, ``einsum``, ``kron``,
``trace``, ``diagonal``, ``convolve`` and ``correlate``.

A product of two matrices, or of a matrix and a vector, is one
``soac.matmul`` (a vector viewed as a one-row or one-column matrix), which
autodiff keeps as products and the CPU lowering hands to a tuned kernel.
Inside a SOAC body (a product per row: HAND's 4x4 transforms, GMM's
matrix-vector products per point) it is a map over the rows of ``a`` whose
body sums the rows of ``b`` scaled by the row's elements instead, which
fuses with its neighbours and allocates nothing per row. Batches are maps
over the leading axes whose bodies multiply matrices as the product written
outside them would (``soac.matmul`` per batch). ``tensordot`` and
``einsum`` move the axes they contract next to each other (a transpose,
unless they already are), view the operands as batches of matrices
(``tensor.collapse_shape`` / ``expand_shape``, no copies) and multiply
them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlir import ir

from ... import builders
from .. import combinators, elementwise, tracing
from ..array import Array, lift
from ..locations import TraceError, located
from .creation import build
from .manipulation import flip, ravel, transpose
from .reductions import sum, sum_rows
from .shapes import (
    checked, is_static, normalize_axes, normalize_axis, select, shape_string, size_equal, size_less, size_max, size_min,
    size_product, split_leading,
)

__all__ = [
    "convolve", "correlate", "diagonal", "dot", "einsum", "inner", "kron", "matmul", "matvec", "outer", "tensordot",
    "trace", "vdot",
]


@located
def matmul(a: Any, b: Any) -> Array:
    """``a @ b`` as numpy's: matrix products over the last two axes, the
    leading (batch) axes broadcast; a vector operand is a row (``a``) or a
    column (``b``) whose axis is then dropped. A batch axis of size 1 repeats
    against a larger one, also when the sizes are known only at run time.

    >>> import numpy as np, soac
    >>> soac.jit(lambda a, b: a @ b)(np.ones((2, 1, 3)), np.arange(12.0).reshape(2, 3, 2))
    array([[[ 6.,  9.]],
    <BLANKLINE>
           [[24., 27.]]])
    """
    a, b = elementwise.operands(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise TraceError(f"matmul: scalar operands are not allowed, got {shape_string(a)} and {shape_string(b)} (use *)")
    inner_a, inner_b = a.static_shape[-1], b.static_shape[-2 if b.ndim > 1 else 0]
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise TraceError(f"matmul: {shape_string(a)} and {shape_string(b)}: {inner_a} columns against {inner_b} rows")
    return _matmul(a, b)


def _matmul(a: Array, b: Array, contract: bool | None = None) -> Array:
    """``contract``: whether the matrix products are ``soac.matmul`` (decided
    where the product is written, so that batches, maps over the leading
    axes, multiply matrices the same way)."""
    if contract is None:
        contract = _as_contraction(a)
    batch_a, batch_b = max(a.ndim - 2, 0), max(b.ndim - 2, 0)
    if batch_a > batch_b:
        return combinators.map(lambda row: _matmul(row, b, contract), a)
    if batch_b > batch_a:
        return combinators.map(lambda row: _matmul(a, row, contract), b)
    if batch_a:
        return _broadcast_rows(lambda x, y: _matmul(x, y, contract), a, b, "matmul")
    if a.ndim == 2 and b.ndim == 1:
        return _matvec(a, b, contract)
    if a.ndim == 2:
        if contract:
            (lhs, transpose_lhs), (rhs, transpose_rhs) = _stored(a), _stored(b)
            return Array(builders.matmul(lhs, rhs, transpose_lhs=transpose_lhs, transpose_rhs=transpose_rhs))
        return combinators.map(lambda row: _matmul(row, b, contract), a)
    if b.ndim == 1:
        return sum_rows(a * b)
    if contract:
        return Array(builders.matmul(a[None, :].value, b.value))[0]
    return sum_rows(combinators.map(lambda ak, bk: ak * bk, a, b))


def _stored(x: Array) -> tuple[ir.Value, bool]:
    """The matrix a product reads for ``x`` and whether it reads it
    transposed: the matrix ``x`` is the transpose of, when it is one of this
    trace (``a @ b.T`` copies nothing)."""
    current = tracing.current()
    if x.transpose_of is not None and x.owner is current and x.transpose_of.owner is current:
        return x.transpose_of.value, True
    return x.value, False


def _as_contraction(a: Array) -> bool:
    """Whether a product with ``a`` is emitted as ``soac.matmul``: numbers
    (not booleans), outside SOAC bodies (see the module's docstring)."""
    if a.dtype.kind not in "fiu":
        return False
    op = ir.InsertionPoint.current.block.owner
    while op is not None:
        if op.operation.name.startswith("soac."):
            return False
        op = op.operation.parent
    return True


def _broadcast_rows(fn: Any, a: Array, b: Array, what: str) -> Array:
    """``fn`` of the rows of ``a`` and ``b`` with numpy's broadcasting of their
    leading axis: a map over both when their sizes are known equal, over one
    when the other's is a static 1, else over the positions of the larger,
    reading row 0 of an axis of size 1 (a size that is neither stops the
    program)."""
    n, m = a.static_shape[0], b.static_shape[0]
    if n is not None and m is not None and n != m and 1 not in (n, m):
        raise TraceError(f"{what}: {shape_string(a)} and {shape_string(b)} do not broadcast in their axis 0")
    if n is not None and n == m:
        return combinators.map(fn, a, b)
    if n == 1:
        first = a[0]
        return combinators.map(lambda row: fn(first, row), b)
    if m == 1:
        first = b[0]
        return combinators.map(lambda row: fn(row, first), a)
    n, m = a.dim(0), b.dim(0)
    ok = elementwise.binary("or", elementwise.binary("or", size_equal(n, m), size_equal(n, 1)), size_equal(m, 1))

    def row(i: Array) -> Array:
        x = a[checked(select(size_equal(n, 1), 0, i), ok, n)]
        y = b[checked(select(size_equal(m, 1), 0, i), ok, m)]
        return fn(x, y)

    return combinators.map(row, combinators.iota(size_max(n, m)))


@located
def matvec(A: Any, x: Any) -> Array:
    """``A @ x``: a map over the rows of ``A`` of dot products with ``x``."""
    A, x = elementwise.operands(A, x)
    if A.ndim != 2 or x.ndim != 1:
        raise TraceError(f"matvec needs a matrix and a vector, got {A!r} and {x!r}")
    return _matvec(A, x, _as_contraction(A))


def _matvec(A: Array, x: Array, contract: bool) -> Array:
    if contract:
        # The column viewed back as a vector (a collapse, no copy).
        return ravel(Array(builders.matmul(A.value, x[:, None].value)))
    return combinators.map(lambda row: sum_rows(row * x), A)


@located
def dot(a: Any, b: Any) -> Array:
    """numpy's ``dot``: a product for scalars, the inner product of vectors,
    :func:`matmul` for matrices (and when either is a vector), and for
    higher ranks the sum over the last axis of ``a`` and the second-to-last of
    ``b`` (a :func:`tensordot`; no batch broadcasting, unlike ``matmul``).

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.dot)(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    np.float64(11.0)
    """
    a, b = elementwise.operands(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim <= 2 and b.ndim <= 2 or b.ndim == 1:
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


@located
def vdot(a: Any, b: Any) -> Array:
    """The dot product of the flattened arrays (no complex conjugation: soac has no complex numbers)."""
    a, b = elementwise.operands(a, b)
    return dot(ravel(a), ravel(b))


@located
def inner(a: Any, b: Any) -> Array:
    """The sum of products over the last axes of ``a`` and ``b`` (a product for scalars)."""
    a, b = elementwise.operands(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


@located
def outer(a: Any, b: Any) -> Array:
    """``out[i, j] = a[i] * b[j]`` of the flattened arrays.

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.outer)(np.array([1.0, 2.0]), np.array([1.0, 0.5, 0.0]))
    array([[1. , 0.5, 0. ],
           [2. , 1. , 0. ]])
    """
    a, b = elementwise.operands(a, b)
    a, b = ravel(a), ravel(b)
    return combinators.map(lambda ai: ai * b, a)


@located
def kron(a: Any, b: Any) -> Array:
    """The Kronecker product: blocks ``a[i, j] * b`` (the operands padded to
    one rank with leading axes of size 1, as numpy does)."""
    a, b = elementwise.operands(a, b)
    rank = max(a.ndim, b.ndim)
    if rank == 0:
        return a * b
    a_sizes = [1] * (rank - a.ndim) + list(a.shape)
    b_sizes = [1] * (rank - b.ndim) + list(b.shape)

    def element(*at: Array) -> Array:
        outer_key = [elementwise.floor_divide(i, m) for i, m in zip(at, b_sizes)]
        inner_key = [elementwise.remainder(i, m) for i, m in zip(at, b_sizes)]
        x = a[tuple(outer_key[rank - a.ndim:])] if a.ndim else a
        y = b[tuple(inner_key[rank - b.ndim:])] if b.ndim else b
        return x * y

    return build([n * m for n, m in zip(a_sizes, b_sizes)], element)


@located
def tensordot(a: Any, b: Any, axes: Any = 2) -> Array:
    """The sum of products over ``axes``: an int n (the last n axes of ``a``
    with the first n of ``b``) or a pair of sequences (or ints) of axes. The
    result has ``a``'s other axes, then ``b``'s.

    >>> import numpy as np, soac
    >>> a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(4, 3)
    >>> soac.jit(lambda a, b: soac.numpy.tensordot(a, b, ([1, 2], [1, 0])))(a, b)
    array([ 440., 1232.])
    """
    a, b = elementwise.operands(a, b)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise TraceError(f"tensordot: cannot contract {n} axes of {shape_string(a)} and {shape_string(b)}")
        axes_a, axes_b = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        try:
            first, second = axes
        except (TypeError, ValueError):
            raise TraceError(f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}") from None
        axes_a = normalize_axes(first, a.ndim, "tensordot")
        axes_b = normalize_axes(second, b.ndim, "tensordot")
    if len(axes_a) != len(axes_b):
        raise TraceError(f"tensordot: {len(axes_a)} axes of a against {len(axes_b)} axes of b")
    for i, j in zip(axes_a, axes_b):
        s, t = a.static_shape[i], b.static_shape[j]
        if s is not None and t is not None and s != t:
            raise TraceError(f"tensordot: axis {i} of {shape_string(a)} and axis {j} of {shape_string(b)} differ in size")
    labels_a = [f"a{k}" for k in range(a.ndim)]
    labels_b = [f"b{k}" for k in range(b.ndim)]
    for i, j in zip(axes_a, axes_b):
        labels_b[j] = labels_a[i]
    free = [label for label in labels_a if label not in labels_b] + [label for label in labels_b if label not in labels_a]
    result, labels = _contract(a, labels_a, b, labels_b, set(free), free)
    return _arrange(result, labels, free)


@located
def einsum(subscripts: str, *operands: Any) -> Array:
    """Einstein summation: ``"ij,jk->ik"`` multiplies matrices, ``"ii->"``
    sums a diagonal, ``"ij->ji"`` transposes. Without ``->`` the output has
    the labels that appear once, in alphabetical order (numpy's rule). A label
    repeated inside an operand takes its diagonal; labels absent from the
    output are summed. The operands are contracted two at a time, left to
    right, each pair as a batch of matrix products. Not supported: ``...``
    (broadcast axes) and numpy's ``optimize``/``out`` arguments.

    >>> import numpy as np, soac
    >>> soac.jit(lambda a, b: soac.numpy.einsum("bij,bjk->bik", a, b))(np.ones((2, 1, 3)), np.ones((2, 3, 2)))
    array([[[3., 3.]],
    <BLANKLINE>
           [[3., 3.]]])
    """
    if not isinstance(subscripts, str):
        raise TraceError("einsum: the first argument must be the subscripts string (numpy's interleaved form is not supported)")
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise TraceError("einsum: '...' (broadcast axes) is not supported")
    inputs_spec, arrow, output_spec = spec.partition("->")
    inputs = inputs_spec.split(",")
    if len(inputs) != len(operands):
        raise TraceError(f"einsum: {subscripts!r} names {len(inputs)} operands, got {len(operands)}")
    for labels in [*inputs, output_spec]:
        for label in labels:
            if not label.isalpha():
                raise TraceError(f"einsum: invalid subscript {label!r} in {subscripts!r}")
    arrays = elementwise.operands(*operands)
    counts: dict[str, int] = {}
    for labels in inputs:
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    if arrow:
        output = list(output_spec)
        if len(set(output)) != len(output):
            raise TraceError(f"einsum: a label is repeated in the output of {subscripts!r}")
        for label in output:
            if label not in counts:
                raise TraceError(f"einsum: the output label {label!r} of {subscripts!r} is in no operand")
    else:
        output = sorted(label for label, count in counts.items() if count == 1)
    sizes: dict[str, int] = {}
    terms: list[tuple[Array, list[str]]] = []
    for x, labels in zip(arrays, inputs):
        if x.ndim != len(labels):
            raise TraceError(f"einsum: operand {shape_string(x)} has {x.ndim} axes, its subscripts {labels!r} {len(labels)}")
        for label, size in zip(labels, x.static_shape):
            if size is not None and sizes.setdefault(label, size) != size:
                raise TraceError(f"einsum: label {label!r} has sizes {sizes[label]} and {size}")
        terms.append(_diagonals(x, list(labels)))
    x, labels = terms[0]
    for k in range(1, len(terms)):
        later = {label for _, ls in terms[k + 1:] for label in ls} | set(output)
        x, labels = _contract(x, labels, *terms[k], later, output)
    x, labels = _sum_out(x, labels, set(output))
    return _arrange(x, labels, output)


def _diagonals(x: Array, labels: list[str]) -> tuple[Array, list[str]]:
    """``x`` with each label repeated among ``labels`` reduced to its diagonal (appended last)."""
    for p, label in enumerate(labels):
        if label in labels[p + 1:]:
            q = labels.index(label, p + 1)
            rest = [l for k, l in enumerate(labels) if k not in (p, q)]
            return _diagonals(diagonal(x, 0, p, q), [*rest, label])
    return x, labels


def _sum_out(x: Array, labels: list[str], keep: set[str]) -> tuple[Array, list[str]]:
    """``x`` summed over the axes whose labels are not in ``keep``."""
    gone = tuple(k for k, label in enumerate(labels) if label not in keep)
    if not gone:
        return x, labels
    return sum(x, gone), [label for label in labels if label in keep]


def _contract(a: Array, la: list[str], b: Array, lb: list[str], keep: set[str],
              output: list[str]) -> tuple[Array, list[str]]:
    """The product of ``a`` and ``b`` (axes named by ``la``, ``lb``) summed
    over the labels they share that ``keep`` lacks: the labels kept by both
    become a batch, and each operand is arranged as a (batch, free, summed)
    batch of matrices, so that both read their summed axis in rows (a
    transpose that moves only leading axes copies whole rows). The free
    labels of the result come in the order ``output`` names them."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [label for label in la if label in lb and label in keep]
    summed = [label for label in la if label in lb and label not in keep]
    free_a = [label for label in la if label not in lb]
    free_b = [label for label in lb if label not in la]
    x = _grouped(_arrange(a, la, batch + free_a + summed), [len(batch), len(free_a), len(summed)])
    y = _grouped(_arrange(b, lb, batch + free_b + summed), [len(batch), len(free_b), len(summed)])
    if _comes_first(free_b, free_a, output):
        x, y, free_a, free_b, a, la, b, lb = y, x, free_b, free_a, b, lb, a, la
    contract = _as_contraction(x)
    products = combinators.map(lambda xi, yi: _times_transposed(xi, yi, contract), x, y)
    sizes = [_label_size(a, la, b, lb, label) for label in batch + free_a + free_b]
    labels = batch + free_a + free_b
    if not labels:
        return ravel(products)[0], labels
    return split_leading(ravel(products), tuple(sizes)), labels


def _comes_first(first: list[str], second: list[str], output: list[str]) -> bool:
    """Whether ``output`` names a label of ``first`` before every label of ``second``."""
    position = {label: k for k, label in enumerate(output)}
    first_at = min((position[label] for label in first if label in position), default=None)
    second_at = min((position[label] for label in second if label in position), default=None)
    return first_at is not None and (second_at is None or first_at < second_at)


def _times_transposed(x: Array, y: Array, contract: bool) -> Array:
    """``x @ y.T`` of matrices that share their number of columns: a
    ``soac.matmul`` reading ``y`` transposed, or (in SOAC bodies) a map of
    dot products of their rows."""
    if contract:
        return Array(builders.matmul(x.value, y.value, transpose_rhs=True))
    return combinators.map(lambda xi: combinators.map(lambda yj: sum_rows(xi * yj), y), x)


def _label_size(a: Array, la: list[str], b: Array, lb: list[str], label: str) -> Any:
    return a.dim(la.index(label)) if label in la else b.dim(lb.index(label))


def _arrange(x: Array, labels: list[str], order: list[str]) -> Array:
    """``x`` with its axes (named by ``labels``) in ``order`` (a transpose unless they already are)."""
    if labels == order:
        return x
    return transpose(x, [labels.index(label) for label in order])


def _grouped(x: Array, counts: list[int]) -> Array:
    """``x`` viewed with each run of ``counts`` consecutive axes merged into
    one (an empty run is an axis of size 1): no copy."""
    sizes, start = [], 0
    for count in counts:
        sizes.append(size_product(x.dim(start + k) for k in range(count)))
        start += count
    flat = ravel(x) if x.ndim else build([1], lambda _: x)
    return split_leading(flat, tuple(sizes))


@located
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The diagonal ``offset`` (above the main one when positive) of the
    matrices on axes ``axis1`` and ``axis2``, as a last axis after the others
    (a copy, where numpy returns a read-only view).

    >>> import numpy as np, soac
    >>> soac.jit(lambda m: soac.numpy.diagonal(m, 1))(np.arange(9.0).reshape(3, 3))
    array([1., 5.])
    """
    a = lift(a)
    if a.ndim < 2:
        raise TraceError(f"diagonal needs an array of rank 2 or more, got {shape_string(a)}")
    if not isinstance(offset, (int, np.integer)) or isinstance(offset, bool):
        raise TraceError(f"diagonal: the offset must be a Python int, got {offset!r}")
    i, j = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    if i == j:
        raise TraceError(f"diagonal: axis1 and axis2 are both axis {i}")
    offset = int(offset)
    rows, columns = a.dim(i), a.dim(j)
    row_start, column_start = max(-offset, 0), max(offset, 0)
    length = size_max(size_min(rows - row_start, columns - column_start), 0)
    others = [k for k in range(a.ndim) if k not in (i, j)]

    def element(*at: Array) -> Array:
        key: list[Any] = [None] * a.ndim
        for k, position in zip(others, at):
            key[k] = position
        key[i], key[j] = at[-1] + row_start, at[-1] + column_start
        return a[tuple(key)]

    return build([a.dim(k) for k in others] + [length], element)


@located
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Array:
    """The sum of :func:`diagonal` (bools count as int64).

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.trace)(np.arange(9.0).reshape(3, 3))
    np.float64(12.0)
    """
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@located
def convolve(a: Any, v: Any, mode: str = "full") -> Array:
    """The discrete linear convolution of two non-empty vectors:
    ``out[k] = sum_j a[j] * v[k - j]``, all ``len(a) + len(v) - 1`` values
    (``"full"``), the middle ``max(len(a), len(v))`` (``"same"``) or those
    where the vectors overlap completely (``"valid"``). Each output is a
    reduction over the positions of ``v``.

    >>> import numpy as np, soac
    >>> soac.jit(soac.numpy.convolve)(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    return _convolve(a, v, mode, "convolve")


@located
def correlate(a: Any, v: Any, mode: str = "valid") -> Array:
    """The cross-correlation of two vectors, ``out[k] = sum_n a[n + k] * v[n]``
    (:func:`convolve` with ``v`` reversed; numpy's default mode ``"valid"``)."""
    a, v = elementwise.operands(a, v)
    if v.ndim != 1:
        raise TraceError(f"correlate takes vectors, got {shape_string(a)} and {shape_string(v)}")
    # numpy correlates a longer v with a and reverses: "same" then centers the other way.
    n, m = a.dim(0), v.dim(0)
    centered = select(size_less(n, m), n - 1 - _half(n - 1), _half(m - 1))
    return _convolve(a, flip(v), mode, "correlate", centered)


def _half(size: Any) -> Any:
    return size // 2 if is_static(size) else elementwise.floor_divide(size, 2)


def _convolve(a: Any, v: Any, mode: str, what: str, centered: Any = None) -> Array:
    a, v = elementwise.operands(a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise TraceError(f"{what} takes vectors, got {shape_string(a)} and {shape_string(v)}")
    n, m = a.dim(0), v.dim(0)
    shorter, longer = size_min(n, m), size_max(n, m)
    if mode == "full":
        length, offset = n + m - 1, 0
    elif mode == "same":
        length, offset = longer, _half(shorter - 1) if centered is None else centered
    elif mode == "valid":
        length, offset = longer - shorter + 1, shorter - 1
    else:
        raise TraceError(f"{what}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    last = n - 1
    positions = combinators.iota(m)

    def output(k: Array) -> Array:
        t = k + offset

        def term(vj: Array, j: Array) -> Array:
            i = t - j
            inside = (i >= 0) & (i <= last)
            return elementwise.where(inside, vj * a[size_max(size_min(i, last), 0)], 0)

        return sum_rows(combinators.map(term, v, positions))

    return build([size_max(length, 0)], output)
