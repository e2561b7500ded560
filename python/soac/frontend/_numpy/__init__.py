"""The functions of ``soac.numpy`` (:mod:`soac.frontend.numpy` is their
namespace), one module per family, each with its ``__all__`` (in this
order, each importing only those before it):

- ``shapes``: ``size``, and what the others share: axis checks, arithmetic
  on sizes that may be traced, ``along`` (a function of the sub-arrays at an
  axis), merging and splitting leading axes without a copy;
- ``ufuncs``: elementwise functions (arithmetic, comparisons, ``where``,
  ``soac.math``'s, and numpy's other elementwise math composed from them:
  ``arcsin``, ``arctan2``, ``logaddexp``, ``hypot``, ``sign``, ``clip``, ...);
- ``creation``: ``full``, ``zeros``, ``ones``, their ``_like`` forms,
  ``empty``, ``eye``, ``identity``, ``arange``, ``linspace``,
  ``fromfunction``, ``tril``, ``triu``, ``array``, and ``build`` (an array
  from a function of its indices: one flat map, the base of every gather);
- ``manipulation``: ``reshape``, ``ravel``, ``transpose``, ``swapaxes``,
  ``moveaxis``, ``expand_dims``, ``squeeze``, ``concatenate``, ``stack``,
  ``split``, ``flip``, ``roll``, ``broadcast_to``, ``tile``, ``repeat``,
  ``take``, ``take_along_axis``, ...;
- ``reductions``: ``sum``, ``prod``, ``max``, ``min``, ``mean``, ``var``,
  ``std``, ``all``, ``any``, ``argmax``, ``argmin``, ``logsumexp`` (axis
  tuples, ``keepdims``), ``cumsum``, ``cumprod``, ``diff``;
- ``products``: ``matmul`` (batched), ``dot``, ``vdot``, ``inner``,
  ``outer``, ``kron``, ``tensordot``, ``einsum``, ``trace``, ``diagonal``,
  ``convolve``, ``correlate``, ``matvec``;
- ``nn``: ``softmax``, ``log_softmax``;
- ``updates``: ``x.at[...]`` (functional updates);
- ``array_methods``: attaches ``Array``'s operators and methods, built from
  the above (``soac.frontend.numpy`` calls it once, at import).

A new family is a module here with an ``__all__``, star-imported by
:mod:`soac.frontend.numpy` and placed in ``test/python/test_frontend_layout.py``.
``docs/numpy.md`` lists every function (``python tools/list_numpy.py``
writes it).
"""
