"""Where MLIR's Python bindings find soac's op classes.

The bindings give an operation its class (``soac.dialect.MapOp``, ...) only
after importing ``<prefix>.<dialect namespace>`` from one of their search
prefixes, and they retry that import for every operation of a dialect they
have not found: without a module here, each soac op visited cost a failed
import (most of the interpreter's time). soac/__init__.py adds this package
as a prefix; its module ``soac`` is :mod:`soac.dialect`.
"""
