"""Small argument checks shared by the classes that define options (one message for one rule).

The range checks of options are :class:`Rule` objects: a check ``rule(name, value)`` that raises
:class:`~hsi.errors.OptionError`, and its :attr:`Rule.text`, the call that makes it
(``odd_integer(1, 'the patch is centred on its pixel')``). A signature declares its rules
(``Annotated[int, Role(..., check=PATCH_SIZE)]``, or ``Annotated[int, integer(1)]`` on a dataclass
field); the checked-in option table (:mod:`hsi.cli.table`) stores their text, and
:func:`rule_of` rebuilds them from it. This module imports neither torch nor Lightning, so
``hsi train --patch-size 4`` is refused with the library's own message at parse time.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hsi.errors import OptionError

__all__ = ["COMPONENTS_ALLOWED", "LOGGER_PACKAGES", "RULES", "Rule", "band_indices", "boolean", "check_components",
           "check_int", "did_you_mean", "integer", "is_int", "logger_available", "logger_package_available",
           "not_an_option", "number", "odd_integer", "parse_class_mapping", "parse_devices", "pca_components",
           "rule_of", "tensorboard_available", "wavelength_range"]

#: rule name -> the rule (named checks) or the function that makes one (``integer``); what :func:`rule_of` reads
RULES: dict[str, Any] = {}


class Rule:
    """A range check of one option, with the text of the call that makes it.

    Parameters
    ----------
    text : str
        The call that rebuilds the rule from :data:`RULES` (``integer(1)``), as :func:`rule_of` reads it.
    check : callable
        ``check(name, value)``, raising :class:`~hsi.errors.OptionError` for a value that is not allowed.
    """

    def __init__(self, text: str, check: Callable[[str, Any], None]) -> None:
        self.text = text
        self._check = check

    def __call__(self, name: str, value: Any) -> None:
        self._check(name, value)

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _rule_maker(make: Callable[..., Callable[[str, Any], None]]) -> Callable[..., Rule]:
    """``make(...)`` returns a :class:`Rule` whose text is the call itself (registered in :data:`RULES`)."""

    @functools.wraps(make)
    def rule(*args: Any, **kwargs: Any) -> Rule:
        words = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        return Rule(f"{make.__name__}({', '.join(words)})", make(*args, **kwargs))

    RULES[make.__name__] = rule
    return rule


def _named_rule(check: Callable[[str, Any], None]) -> Rule:
    """``check`` as a :class:`Rule` named after it (registered in :data:`RULES`)."""
    rule = Rule(check.__name__, check)
    functools.update_wrapper(rule, check)  # type: ignore[arg-type]
    RULES[check.__name__] = rule
    return rule


def rule_of(text: str) -> Rule:
    """The :class:`Rule` whose :attr:`~Rule.text` is ``text`` (only the names of :data:`RULES` are known)."""
    rule = eval(text, {"__builtins__": {}}, {**RULES, "inf": math.inf})  # noqa: S307 - names of RULES only
    if not isinstance(rule, Rule):
        raise TypeError(f"{text!r} is not a rule of hsi._checks")
    return rule


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


@_rule_maker
def integer(minimum: int, *, maximum: int | None = None, optional: bool = False,
            none_means: str = "") -> Callable[[str, Any], None]:
    """A check: an integer ``>= minimum`` (and ``<= maximum``; or None when ``optional``; ``none_means`` says what None
    does)."""
    allowed = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"
    allowed += f", or None{none_means}" if optional else ""

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        if not is_int(value) or value < minimum or (maximum is not None and value > maximum):
            raise OptionError(name, value, allowed)

    return check


@_rule_maker
def odd_integer(minimum: int, why: str) -> Callable[[str, Any], None]:
    """A check: an odd integer ``>= minimum`` (``why`` it must be odd, for the message)."""

    def check(name: str, value: Any) -> None:
        if not is_int(value) or value < minimum or value % 2 == 0:
            raise OptionError(name, value, f"an odd integer >= {minimum} ({why})")

    return check


@_named_rule
def boolean(name: str, value: Any) -> None:
    """A check: True or False (a string such as "no" would otherwise count as true)."""
    if not isinstance(value, bool):
        raise OptionError(name, value, "True or False")


@_rule_maker
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


#: what a number of PCA components may be, in words (one definition for PCA and the DataModule's ``pca``)
COMPONENTS_ALLOWED = "a number of components >= 1 (an integer) or a variance fraction in (0, 1)"


def check_components(name: str, value: Any) -> int | float:
    """``value`` as a component count (int >= 1) or a variance fraction (float in (0, 1)); else :class:`OptionError`.

    The rule of :class:`hsi.preprocess.pca.PCA`'s ``n_components``, kept here so that the option checks
    (:func:`pca_components`) apply it without importing :mod:`hsi.preprocess`.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value >= 1:
            return int(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool) and 0.0 < float(value) < 1.0:
        return float(value)
    raise OptionError(name, value, COMPONENTS_ALLOWED)


@_named_rule
def pca_components(name: str, pca: Any) -> None:
    """A check: the PCA rule of :func:`check_components`, or None (no PCA)."""
    if pca is not None:
        try:
            check_components(name, pca)
        except OptionError as err:
            raise OptionError(name, pca, f"{err.allowed}, or none") from None


@_named_rule
def band_indices(name: str, value: Any) -> None:
    """A check: a list of band indices >= 0, or None."""
    if value is not None and not all(is_int(b) and b >= 0 for b in value):
        raise OptionError(name, value, "a list of band indices >= 0")


def parse_devices(value: str | int | list[int]) -> int | str | list[int]:
    """Lightning's ``devices`` from text: ``"auto"``, a count (``"2"``) or a comma list of ids (``"0,1"``)."""
    if is_int(value):
        if value < 1:
            raise OptionError("devices", value, "a number of devices >= 1, a comma list of device ids, or auto")
        return value
    if isinstance(value, list):
        return [int(v) for v in value]
    text = str(value).strip()
    if text == "auto":
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if "," in text and parts and all(p.isdigit() for p in parts):
        return [int(p) for p in parts]
    raise OptionError("devices", value, "a number of devices >= 1, a comma list of device ids such as 0,1, or auto")


@_named_rule
def lightning_devices(name: str, value: Any) -> None:
    """A check: what :func:`parse_devices` reads."""
    parse_devices(value)


def tensorboard_available() -> bool:
    """True when Lightning's ``TensorBoardLogger`` can write: ``tensorboard`` or ``tensorboardX`` is installed."""
    return any(importlib.util.find_spec(name) is not None for name in ("tensorboard", "tensorboardX"))


#: the package each optional logger needs, as ``(import name, what it is called, the extra that installs it)``
LOGGER_PACKAGES = {"wandb": ("wandb", "Weights & Biases (wandb)", "wandb"),
                   "mlflow": ("mlflow", "MLflow", "mlflow")}


def logger_package_available(kind: str) -> bool:
    """True when the package of the optional logger ``kind`` can be imported (found, without importing it)."""
    if kind == "tensorboard":
        return tensorboard_available()
    module = LOGGER_PACKAGES[kind][0] if kind in LOGGER_PACKAGES else None
    if module is None:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install, or a module blocked in sys.modules
        return False


@_named_rule
def logger_available(name: str, value: Any) -> None:
    """A check: an optional logger (tensorboard, wandb, mlflow) only where its package is installed (the choices
    come from the type)."""
    if value == "tensorboard" and not tensorboard_available():
        raise OptionError(name, value, 'TensorBoard is not installed: pip install "hsi-lightning[tensorboard]" '
                          "(or use --logger csv)")
    if value in LOGGER_PACKAGES and not logger_package_available(value):
        _, label, extra = LOGGER_PACKAGES[value]
        raise OptionError(name, value, f'{label} is not installed: pip install "hsi-lightning[{extra}]" '
                          "(or use --logger csv)")


@_named_rule
def strategy_runs_here(name: str, value: Any) -> None:
    """A check: a Lightning strategy that fits in this process on every rank (auto, ddp, fsdp, ...), not a spawning
    one: a spawned process's fitted network never comes back to the run, which then has nothing to test or save."""
    if not isinstance(value, str) or not value:
        raise OptionError(name, value, "a Lightning strategy name (auto, ddp, ...)")
    if "spawn" in value:
        raise OptionError(name, value, "auto, ddp or another strategy that runs in this process on every rank (a "
                          "spawned process never returns its fitted network: use ddp, one process per device)")


@_named_rule
def wavelength_range(name: str, value: Any) -> None:
    """A check: two finite wavelengths ``MIN MAX`` in nm with ``0 <= MIN < MAX``, or None (every band)."""
    if value is None:
        return
    ok = isinstance(value, (list, tuple)) and len(value) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    if not ok or not 0 <= value[0] < value[1]:
        shown = tuple(value) if isinstance(value, list) else value
        raise OptionError(name, shown, "two band centres MIN MAX in nm with 0 <= MIN < MAX (the bands kept), or None "
                                       "(every band)")


def parse_class_mapping(items: Iterable[str] | Mapping[str, str] | None, flag: str = "classes") -> dict[str, str]:
    """``["class_1=tree", "Rock=soil"]`` (or a mapping already) -> ``{"class_1": "tree", "Rock": "soil"}``: a label
    map's classes renamed onto a checkpoint's (``hsi infer --classes``; checked before torch is imported).

    Raises
    ------
    OptionError
        An item without ``=``, an empty side, or a name given twice.
    """
    if items is None:
        return {}
    if isinstance(items, Mapping):
        return {str(k): str(v) for k, v in items.items()}
    out: dict[str, str] = {}
    for item in items:
        theirs, sep, ours = str(item).partition("=")
        if not sep or not theirs.strip() or not ours.strip():
            raise OptionError(flag, item, "THEIRS=OURS: a class name of the label map, '=', one of the checkpoint's")
        if theirs.strip() in out:
            raise OptionError(flag, item, f"each class of the label map once ({theirs.strip()!r} is given twice)")
        out[theirs.strip()] = ours.strip()
    return out
