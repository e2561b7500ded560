"""The functions of ``soac.numpy`` (:mod:`soac.frontend.numpy` is their
namespace), one module per family, each with its ``__all__``:

- ``shapes``: ``size``, and the axis checks the others share;
- ``ufuncs``: elementwise functions (arithmetic, ``where``, ``soac.math``'s);
- ``creation``: ``full``, ``zeros``, ``ones``, ``zeros_like``, ``array``;
- ``reductions``: ``sum``, ``max``, ``mean``, ``logsumexp``;
- ``products``: ``dot``, ``matvec``, ``matmul``;
- ``array_methods``: attaches ``Array``'s operators and methods, built from
  the above (``soac.frontend.numpy`` calls it once, at import).

A new family is a module here with an ``__all__``, star-imported by
:mod:`soac.frontend.numpy`.
"""
