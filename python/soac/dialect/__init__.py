"""Generated builders of the soac operations (``mlir-tblgen -gen-python-op-bindings``).

Each op has a class (``MapOp``, ``ReduceOp``, ...) and a function (``map``,
``reduce``, ..., ``yield_``) taking result types first, as upstream dialects do.
:mod:`soac.builders` builds the bodies of region ops from Python callables.
"""

from ._soac_ops_gen import *  # noqa: F401,F403
