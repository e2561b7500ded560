"""``soac.tree_util`` (as ``jax.tree_util``): the functions of :mod:`soac.frontend.pytree`."""

from .frontend.pytree import *  # noqa: F403
from .frontend.pytree import __all__  # noqa: F401
