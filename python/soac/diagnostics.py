"""Parsing and verification that report MLIR diagnostics as :class:`soac.Error`.

Text is parsed with verification off and verified by soac's extension,
which first refuses what some of MLIR's verifiers abort on (a reassociation
index outside a tensor.collapse_shape's rank, ...; passes/Utils/VerifyInput.h):
such input is a :class:`soac.ParseError`, not a crash of the interpreter.

>>> import soac
>>> from mlir import ir
>>> with ir.Context():
...     soac.parse("func.func @f() { return }").operation.name
'builtin.module'
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from mlir import ir

from . import _soac
from .errors import ParseError, VerificationError

# An error as soac's extension reports it: location, message, notes.
_Error = tuple[ir.Location, str, list[tuple[ir.Location, str]]]


def diagnostic_lines(error: ir.MLIRError) -> list[str]:
    """One line per diagnostic, then its notes, in the compiler style of mlir-opt:
    ``file:line:col: error: message``."""
    return _lines(
        (d.location, d.message, [(n.location, n.message) for n in d.notes]) for d in error.error_diagnostics
    )


def _lines(errors: Iterable[_Error]) -> list[str]:
    lines = []
    for location, message, notes in errors:
        lines.append(f"{_location(location)}: error: {message}")
        lines.extend(f"{_location(where)}: note: {text}" for where, text in notes)
    return lines


def _location(location: ir.Location) -> str:
    if location.is_a_file():
        return f"{location.filename}:{location.start_line}:{location.start_col}"
    text = str(location)
    return text[4:-1] if text.startswith("loc(") else text


def _context_or_current(context: ir.Context | None) -> ir.Context:
    """``context``, else the current one, else a new one (the module keeps it
    alive), so that parsing needs no ``with ir.Context()``."""
    if context is not None:
        return context
    return ir.Context.current or ir.Context()


def parse(text: str, *, context: ir.Context | None = None) -> ir.Module:
    """Parses and verifies MLIR text into a module of ``context`` (default: the
    current one, or a new one outside any).

    Raises :class:`soac.ParseError` carrying MLIR's diagnostics when the text is
    malformed or an operation fails its verifier.
    """
    module, errors = _soac.parse_module(text, "-", _context_or_current(context))
    if module is None:
        raise ParseError("could not parse the MLIR program", _lines(errors))
    return module


def parse_file(path: str | os.PathLike, *, context: ir.Context | None = None) -> ir.Module:
    """As :func:`parse`, reading ``path``; diagnostics then point into that file."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ParseError(f"no such file: {path}")
    module, errors = _soac.parse_module_file(path, _context_or_current(context))
    if module is None:
        raise ParseError(f"could not parse {path}", _lines(errors))
    return module


def verify(op: ir.Operation | ir.OpView | ir.Module) -> None:
    """Verifies ``op`` and everything nested in it.

    Raises :class:`soac.VerificationError` carrying MLIR's diagnostics.
    """
    operation = op.operation
    errors = _soac.verify_operation(operation)
    if errors:
        raise VerificationError(f"'{operation.name}' failed to verify", _lines(errors))
