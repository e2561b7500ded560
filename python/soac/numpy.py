"""``soac.numpy`` (``import soac.numpy`` works too): the functions of :mod:`soac.frontend.numpy`."""

from .frontend.numpy import *  # noqa: F403
from .frontend.numpy import __all__  # noqa: F401
