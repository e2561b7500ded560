"""Derivatives of functions written in MLIR: a module (or its text) and the
name of a ``func.func`` in it, as opposed to the JAX-style transforms of
Python functions (:func:`soac.grad`, :func:`soac.vjp`, ...).

Each returns a compiled callable (:class:`soac.Derivative` or
:class:`soac.Jacobian`) and keeps the differentiated IR, so that it can be
printed or run on the reference interpreter::

    soac.mlir.grad(module, "f")                   # f returns one float scalar
    soac.mlir.vjp(module, "f", wrt=[1])           # (args..., cotangents...) -> (results..., gradients...)
    soac.mlir.jvp(module, "f", wrt=[1], width=4)  # 4 stacked tangents, one pass
    soac.mlir.hvp(module, "f")                    # (args..., vectors...) -> H·v
    soac.mlir.jacfwd(module, "f", wrt=1)          # by columns, vector-mode jvps
    soac.mlir.jacrev(module, "f", wrt=1)          # by rows, vector-mode vjps
    soac.mlir.gradient_cost(module, "f")          # the vjp's work and memory against f's

>>> import numpy as np, soac
>>> program = '''
...   func.func @cube(%x: f64) -> f64 {
...     %x2 = arith.mulf %x, %x : f64
...     %x3 = arith.mulf %x2, %x : f64
...     return %x3 : f64
...   }'''
>>> float(soac.mlir.grad(program, "cube")(np.float64(2.0)))
12.0
"""

from __future__ import annotations

from .autodiff import Derivative, grad, vjp
from .forward import Jacobian, hvp, jacfwd, jacrev, jvp
from .gradient_cost import GradientCost, gradient_cost

__all__ = ["Derivative", "GradientCost", "Jacobian", "grad", "gradient_cost", "hvp", "jacfwd", "jacrev", "jvp", "vjp"]
