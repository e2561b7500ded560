"""The exceptions soac raises. Every one derives from :class:`soac.Error`."""

from __future__ import annotations

from collections.abc import Sequence


class Error(Exception):
    """Base class of every error soac raises on purpose.

    ``diagnostics`` holds the MLIR diagnostics behind the error, one string per
    diagnostic, in the form ``<file>:<line>:<col>: error: <message>``.
    """

    def __init__(self, message: str, diagnostics: Sequence[str] = ()):
        self.diagnostics = list(diagnostics)
        text = message if not self.diagnostics else message + ":\n" + "\n".join(self.diagnostics)
        super().__init__(text)


class ParseError(Error):
    """MLIR text that does not parse, or whose operations fail to verify."""


class VerificationError(Error):
    """An operation built in Python that fails MLIR verification."""


class BuildError(Error):
    """A builder helper given values it cannot turn into IR."""


class InterpretError(Error):
    """A program the reference interpreter cannot run (an unsupported op, bad
    arguments) or that has undefined behaviour at run time (an out-of-bounds
    read, a division by zero, irregular rows)."""


class LoweringError(Error):
    """A program the CPU lowering cannot handle; the diagnostics name the op and
    its location."""
