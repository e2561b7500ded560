"""The soac dialect's op classes, under the name MLIR's Python bindings
import them by (see soac/_dialects/__init__.py)."""

from soac.dialect import *  # noqa: F401,F403
