"""``soac.math`` (``import soac.math`` works too): the functions of :mod:`soac.frontend.math`."""

from .frontend.math import *  # noqa: F403
from .frontend.math import __all__  # noqa: F401
