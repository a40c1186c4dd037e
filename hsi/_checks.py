"""Small argument checks shared by the classes that define options (one message for one rule)."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from typing import Any

from hsi.errors import OptionError

__all__ = ["check_int", "did_you_mean", "integer", "is_int", "not_an_option", "number", "odd_integer"]


def is_int(value: Any) -> bool:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_int(option: str, value: Any, minimum: int) -> int:
    """``value`` if it is an integer ``>= minimum``; else :class:`OptionError` naming ``option``."""
    if not is_int(value) or value < minimum:
        raise OptionError(option, value, f"an integer >= {minimum}")
    return value


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'width'?"`` for the closest of ``choices`` to a mistyped ``name``, else ``""``."""
    match = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1)
    return f"; did you mean {match[0]!r}?" if match else ""


def not_an_option(name: str, choices: Iterable[str], owner: str) -> str:
    """What an unknown key should have been: ``not an option of fcn; did you mean 'width'? (options: ...)``."""
    choices = [str(c) for c in choices]
    return f"not an option of {owner}{did_you_mean(name, choices)} (options: {', '.join(choices) or 'none'})"


def integer(minimum: int, *, optional: bool = False, none_means: str = "") -> Callable[[str, Any], None]:
    """A check: an integer ``>= minimum`` (or None when ``optional``; ``none_means`` says what None does)."""
    allowed = f"an integer >= {minimum}" + (f", or None{none_means}" if optional else "")

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        if not is_int(value) or value < minimum:
            raise OptionError(name, value, allowed)

    return check


def odd_integer(minimum: int, why: str) -> Callable[[str, Any], None]:
    """A check: an odd integer ``>= minimum`` (``why`` it must be odd, for the message)."""

    def check(name: str, value: Any) -> None:
        if not is_int(value) or value < minimum or value % 2 == 0:
            raise OptionError(name, value, f"an odd integer >= {minimum} ({why})")

    return check


def boolean(name: str, value: Any) -> None:
    """A check: True or False (a string such as "no" would otherwise count as true)."""
    if not isinstance(value, bool):
        raise OptionError(name, value, "True or False")


def number(low: float, high: float = math.inf, *, low_open: bool = False,
           high_open: bool = True, optional: bool = False, none_means: str = "") -> Callable[[str, Any], None]:
    """A check: a finite real number in the interval from ``low`` to ``high`` (open or closed ends), or None when
    ``optional`` (``none_means`` says what None does)."""
    left, right = ("(" if low_open else "["), (")" if high_open else "]")
    allowed = f"a number > {low:g}" if low_open and high == math.inf else (
        f"a number >= {low:g}" if high == math.inf else f"a number in {left}{low:g}, {high:g}{right}")
    allowed += f", or None{none_means}" if optional else ""

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        ok = ok and (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
        if not ok:
            raise OptionError(name, value, allowed)

    return check
