"""The optional peers, JAX and PyTorch: imported on demand, in float64.

Each objective module builds its JAX and PyTorch versions through these, so
that a missing package is one clear ImportError at the point of use and the
numpy and soac halves never depend on them.
"""

from __future__ import annotations

import numpy as np


def jax_numpy():
    """``jax`` and ``jax.numpy`` with float64 enabled (ADBench is float64)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def torch_module():
    """``torch``, with float64 as the default dtype of new tensors."""
    import torch

    torch.set_default_dtype(torch.float64)
    return torch


def to_torch(args: tuple) -> tuple:
    """numpy arrays and scalars as tensors (integers stay integers)."""
    torch = torch_module()
    return tuple(torch.as_tensor(np.asarray(a)) for a in args)
