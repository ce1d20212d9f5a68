"""Argument types for numbers with a range: ``--idle 30``, ``--limit 5``.

argparse's own ``type=float`` takes ``-5``, ``0``, ``nan`` and ``inf``, and ``type=int`` takes
``-5``; a flag that means seconds to wait or rows to show then does something no one asked for
(exits at once, never times out, drops rows). These types refuse such values with a line that
says what the flag needs, before the command starts anything.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["at_least", "seconds"]


def seconds(text: str) -> float:
    """A finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0; give one such as 30 or 0.5")
    return value


def at_least(least: int) -> Callable[[str], int]:
    """The type of a whole number of at least ``least``."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least {least}")
        return value

    return whole
