"""``soac.lax`` (as ``jax.lax``): the functions of :mod:`soac.frontend.lax`."""

from .frontend.lax import *  # noqa: F403
from .frontend.lax import __all__  # noqa: F401
