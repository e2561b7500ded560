"""Source locations of traced programs: the user's frame, found by walking the
stack out of the soac package, becomes the location of the ops it emits and
the place tracing errors point to."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar

from mlir import ir

from ..errors import Error
from ..runtime.flags import flag

# Every frame under this directory is soac's own, never the user's.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

F = TypeVar("F", bound=Callable)


class TraceError(Error):
    """A Python function that cannot be traced into soac IR (mismatched shapes
    or dtypes, an operator with the wrong arity, a value that is not an array);
    the message starts with the user's ``file:line:col``."""

    def __init__(self, message: str):
        filename, line, col = user_frame()
        super().__init__(f"{filename}:{line}:{col}: {message}")


class ConcretizationError(TraceError):
    """A traced value used where Python needs a value of its own (``if``,
    ``range``, ``int``, ``len``). ``soac.jit`` then traces the function again
    for its arguments' shapes, where sizes are Python ints; the error reaches
    the user only when that does not help (the value comes from data)."""


def user_frame() -> tuple[str, int, int]:
    """``(file, line, column)`` of the innermost caller outside the soac package
    (columns count from 1, as in MLIR)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    positions = inspect.getframeinfo(frame, context=0).positions
    col = (positions.col_offset or 0) + 1 if positions else 1
    return frame.f_code.co_filename, frame.f_lineno, col


def user_location() -> ir.Location:
    """The ``ir.Location`` of :func:`user_frame` (in the current context)."""
    if ir.Context.current is None:  # an operation of traced arrays called on plain Python values
        raise TraceError("soac operations run inside a traced function: wrap the caller in soac.jit or soac.grad")
    return ir.Location.file(*user_frame())


def without_soac_frames(error: BaseException) -> BaseException:
    """``error`` with the frames of soac's own code dropped from its traceback,
    so that a user's mistake shows the user's frames (as JAX filters its own);
    ``SOAC_TRACEBACK_FILTERING=off`` keeps them, for debugging soac."""
    if not flag("SOAC_TRACEBACK_FILTERING", default=True):
        return error
    frames = []
    tb = error.__traceback__
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE):
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return error
    filtered = None
    for tb in reversed(frames):
        filtered = types.TracebackType(filtered, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return error.with_traceback(filtered)


# How a located function called outside any trace runs: set by the eager
# module (a later layer, which compiles it), so that ``soac.numpy.stack(xs)``
# on numpy arrays computes at once, as ``jax.numpy`` does.
run_eagerly: Callable[[Callable, tuple, dict], Any] | None = None


def located(function: F) -> F:
    """Emits the ops of ``function`` at the location of its user-level caller;
    called outside a trace, runs it eagerly (see :data:`run_eagerly`)."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if ir.Context.current is None and run_eagerly is not None:
            return run_eagerly(function, args, kwargs)
        with user_location():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
