"""Parsing and verification that report MLIR diagnostics as :class:`soac.Error`.

>>> import soac
>>> from mlir import ir
>>> with ir.Context():
...     soac.parse("func.func @f() { return }").operation.name
'builtin.module'
"""

from __future__ import annotations

import os

from mlir import ir

from .errors import ParseError, VerificationError


def diagnostic_lines(error: ir.MLIRError) -> list[str]:
    """One line per diagnostic, then its notes, in the compiler style of mlir-opt:
    ``file:line:col: error: message``."""
    lines = []
    for diagnostic in error.error_diagnostics:
        lines.append(f"{_location(diagnostic.location)}: error: {diagnostic.message}")
        lines.extend(f"{_location(note.location)}: note: {note.message}" for note in diagnostic.notes)
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
    try:
        return ir.Module.parse(text, context=_context_or_current(context))
    except ir.MLIRError as error:
        raise ParseError("could not parse the MLIR program", diagnostic_lines(error)) from None


def parse_file(path: str | os.PathLike, *, context: ir.Context | None = None) -> ir.Module:
    """As :func:`parse`, reading ``path``; diagnostics then point into that file."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ParseError(f"no such file: {path}")
    try:
        return ir.Module.parseFile(path, context=_context_or_current(context))
    except ir.MLIRError as error:
        raise ParseError(f"could not parse {path}", diagnostic_lines(error)) from None


def verify(op: ir.Operation | ir.OpView | ir.Module) -> None:
    """Verifies ``op`` and everything nested in it.

    Raises :class:`soac.VerificationError` carrying MLIR's diagnostics.
    """
    operation = op.operation
    try:
        operation.verify()
    except ir.MLIRError as error:
        raise VerificationError(f"'{operation.name}' failed to verify", diagnostic_lines(error)) from None
