"""On/off settings read from the environment (SOAC_CACHE, SOAC_TIERED,
SOAC_TIMING, ...): one spelling of "off" for all of them."""

from __future__ import annotations

import os

OFF = ("off", "0", "false", "no")


def flag(name: str, default: bool) -> bool:
    """Whether the environment variable ``name`` turns its setting on:
    ``default`` where it is unset or empty, off for ``off``, ``0``,
    ``false`` or ``no`` (any case), on for anything else."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    return value not in OFF
