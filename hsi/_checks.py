"""Small argument checks shared by the classes that define options (one message for one rule)."""

from __future__ import annotations

from typing import Any

from hsi.errors import OptionError

__all__ = ["check_int", "is_int"]


def is_int(value: Any) -> bool:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_int(option: str, value: Any, minimum: int) -> int:
    """``value`` if it is an integer ``>= minimum``; else :class:`OptionError` naming ``option``."""
    if not is_int(value) or value < minimum:
        raise OptionError(option, value, f"an integer >= {minimum}")
    return value
