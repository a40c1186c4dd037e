"""Command-line options generated from the signatures that define them.

One definition per option: a parameter of a class's ``__init__`` (``HSIDataModule``,
``HSIClassifier``) or a field of a dataclass (``RunOptions``, ``InferOptions``) gives the
flag, its type (``int``, ``float``, ``X | None``, ``Literal[...]`` choices, lists, tuples,
mappings), its default and, from the numpydoc ``Parameters`` section, its help text.
:func:`option_specs` reads them; :func:`add_options` adds them to an ``argparse`` parser
with ``default=SUPPRESS``, so the parsed namespace holds only what the user wrote and
the caller can tell an explicit value from a default (resume conflicts need that).
Value ranges are defined where the option is defined: the rule annotated beside its type
(:mod:`hsi._checks`), which the constructor applies; a spec carries that rule
(:attr:`OptionSpec.check`) so the command line applies the same one to what it parsed
(:func:`check_values`) before importing torch. This module defines no rule of its own.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from hsi._roles import declared_checks, flags

__all__ = ["OptionSpec", "add_options", "check_values", "docstring_params", "option_specs", "flag_of"]

_NONE_WORDS = ("none", "null")


@dataclass(frozen=True)
class OptionSpec:
    """One command-line option and the parameter it sets.

    Parameters
    ----------
    param : str
        Name of the parameter (``patch_size``).
    name : str
        Name on the command line and in YAML files (``patch_size``; shown as ``--patch-size``).
    annotation : object
        The parameter's type hint.
    default : object
        The parameter's default (``inspect.Parameter.empty`` when required).
    help : str
        Description from the numpydoc docstring.
    check : callable, optional
        The range check declared beside the type (a :class:`hsi._checks.Rule`, or a library-only function).
    """

    param: str
    name: str
    annotation: Any
    default: Any
    help: str
    check: Any = None

    @property
    def flag(self) -> str:
        """``--patch-size``."""
        return flag_of(self.name)

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The ``Literal`` values allowed, or None."""
        literal = _literal_of(self.annotation)
        return None if literal is None else typing.get_args(literal)

    @property
    def optional(self) -> bool:
        """True when None is an allowed value."""
        return type(None) in _union_args(self.annotation)


def flag_of(name: str) -> str:
    """``patch_size`` -> ``--patch-size``."""
    return "--" + name.replace("_", "-")


# ---------------------------------------------------------------- docstrings
_PARAM_LINE = re.compile(r"^(?P<names>[A-Za-z_*][\w*]*(?:\s*,\s*[A-Za-z_*][\w*]*)*)\s*(?::\s*(?P<type>.*))?$")


def docstring_params(doc: str | None) -> dict[str, str]:
    """``{parameter: description}`` from the ``Parameters`` (or ``Attributes``) section of a numpydoc docstring.

    A line ``a, b : type`` at the section's indent starts an entry shared by ``a`` and
    ``b``; the more indented lines below it are its description.
    """
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, str] = {}
    in_section, names, text = False, [], []

    def flush() -> None:
        for n in names:
            out[n.lstrip("*")] = " ".join(" ".join(text).split())

    for i, line in enumerate(lines):
        underline = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        if underline and line.strip():
            flush()
            names, text = [], []
            in_section = line.strip() in ("Parameters", "Attributes")
            continue
        if not in_section or set(line.strip()) == {"-"}:
            continue
        if line and not line[0].isspace():
            match = _PARAM_LINE.match(line.strip())
            if match:
                flush()
                names, text = [n.strip() for n in match["names"].split(",")], []
            continue
        if names:
            text.append(line.strip())
    flush()
    return out


# ---------------------------------------------------------------- specs
def option_specs(
    target: Callable[..., Any] | type,
    *,
    exclude: Iterable[str] = (),
    rename: dict[str, str] | None = None,
) -> list[OptionSpec]:
    """The options of ``target``'s signature (a class's ``__init__``, a dataclass or a function).

    Parameters
    ----------
    target : callable or type
        Where the options are defined.
    exclude : iterable of str
        Parameters that are not options (set by the caller from other options).
    rename : dict, optional
        Command-line names for parameters whose Python name reads badly on a command
        line (``{"cube_path": "cube"}``); by default those of the roles' ``flag``
        (:mod:`hsi._roles`).
    """
    if rename is None:  # the command-line names declared in the signature's roles (cube_path -> cube)
        rename = flags(target) if isinstance(target, type) and not dataclasses.is_dataclass(target) else {}
    excluded = set(exclude)
    if dataclasses.is_dataclass(target):
        fn: Any = target
        doc = target.__doc__
    elif isinstance(target, type):
        fn = target.__init__
        doc = target.__doc__
    else:
        fn, doc = target, target.__doc__
    hints = typing.get_type_hints(fn if not dataclasses.is_dataclass(target) else target)
    checks = declared_checks(target) if isinstance(target, type) else {}
    helps = docstring_params(doc)
    specs = []
    for name, p in inspect.signature(target if dataclasses.is_dataclass(target) else fn).parameters.items():
        if name in ("self", "cls") or name in excluded or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        specs.append(OptionSpec(name, rename.get(name, name), hints.get(name, str), p.default, helps.get(name, ""),
                                checks.get(name)))
    return specs


def check_values(specs: Iterable[OptionSpec], values: dict[str, Any]) -> None:
    """Apply each spec's declared rule to its value in ``values`` (keyed by ``spec.name``), in the specs' order.

    Raises
    ------
    OptionError
        From the first rule that refuses its value (naming the parameter, which the command line shows as its flag).
    """
    for spec in specs:
        if spec.check is not None and spec.name in values:
            spec.check(spec.param, values[spec.name])


# ---------------------------------------------------------------- conversion
def _union_args(annotation: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(annotation)
    return (annotation,)


def _literal_of(annotation: Any) -> Any:
    for arg in _union_args(annotation):
        if typing.get_origin(arg) is Literal:
            return arg
    return None


def _scalar_types(annotation: Any) -> list[Any]:
    return [a for a in _union_args(annotation) if a is not type(None)]


def _describe(annotation: Any) -> str:
    words = {int: "an integer", float: "a number", str: "a text", bool: "true or false"}
    parts = []
    for a in _scalar_types(annotation):
        if typing.get_origin(a) is Literal:
            parts.append("one of " + ", ".join(str(v) for v in typing.get_args(a)))
        else:
            parts.append(words.get(a, getattr(a, "__name__", str(a))))
    if type(None) in _union_args(annotation):
        parts.append("none")
    return " or ".join(parts)


def convert(text: str, annotation: Any) -> Any:
    """Turn one command-line word into a value of ``annotation`` (``argparse.ArgumentTypeError`` if it is not one)."""
    kinds = _union_args(annotation)
    if type(None) in kinds and text.strip().lower() in _NONE_WORDS:
        return None
    for kind in _scalar_types(annotation):
        if typing.get_origin(kind) is Literal:
            for choice in typing.get_args(kind):
                if str(choice) == text:
                    return choice
            continue
        try:
            if kind is int:
                return int(text)
            if kind is float:
                value = float(text)
                return int(value) if int in kinds and value.is_integer() and "." not in text else value
            if kind is str:
                return text
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"{text!r}: expected {_describe(annotation)}")


def _is_tuple(annotation: Any) -> bool:
    return any(typing.get_origin(k) is tuple for k in _scalar_types(annotation))


class _SequenceAction(argparse.Action):
    """``--fractions 0.6 0.2 0.2`` -> a tuple for a tuple-typed option, a list otherwise (as the signature says)."""

    def __init__(self, *args: Any, as_tuple: bool = False, **kwargs: Any) -> None:
        self.as_tuple = as_tuple
        super().__init__(*args, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: D102
        setattr(namespace, self.dest, tuple(values) if self.as_tuple else list(values))


def _element_type(annotation: Any) -> tuple[Any, int | str]:
    """``(element annotation, nargs)`` of a list/tuple annotation."""
    for kind in _scalar_types(annotation):
        origin = typing.get_origin(kind)
        if origin in (list, tuple):
            args = [a for a in typing.get_args(kind) if a is not Ellipsis]
            nargs: int | str = len(args) if origin is tuple and Ellipsis not in typing.get_args(kind) else "+"
            return (args[0] if args else str), nargs
    raise TypeError(annotation)


def _is_kind(annotation: Any, kinds: tuple[type, ...]) -> bool:
    return any(typing.get_origin(k) in kinds or k in kinds for k in _scalar_types(annotation))


def _path_or_items(annotation: Any) -> bool:
    """``str | list[...]`` (e.g. ``scenes``): one word (a file) on the command line, the items themselves in YAML."""
    return str in _scalar_types(annotation) and _is_kind(annotation, (list, dict))


def _mapping_item(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE")
    try:
        return key.strip(), yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError:
        return key.strip(), value


class _MappingAction(argparse.Action):
    """``--scene-options purity=0.8 height=48`` -> ``{"purity": 0.8, "height": 48}`` (repeatable)."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: D102
        merged = dict(getattr(namespace, self.dest, None) or {})
        merged.update(dict(values))
        setattr(namespace, self.dest, merged)


def _help_with_default(spec: OptionSpec, shown_default: Any) -> str:
    text = spec.help or ""
    if shown_default is inspect.Parameter.empty:
        return text + " (required)"
    if isinstance(shown_default, (list, tuple)):
        shown = " ".join(str(v) for v in shown_default)
    elif isinstance(shown_default, dict):
        shown = " ".join(f"{k}={v}" for k, v in shown_default.items()) or "none"
    else:
        shown = "none" if shown_default is None else str(shown_default)
    return f"{text} (default: {shown})".strip().replace("%", "%%")


def add_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    specs: Iterable[OptionSpec],
    *,
    defaults: dict[str, Any] | None = None,
) -> None:
    """Add one flag per spec; parsed values land under ``spec.name``; absent flags leave no attribute.

    ``defaults`` overrides the default shown in the help (e.g. a value another option
    decides); the signature's default is shown otherwise.
    """
    defaults = defaults or {}
    for spec in specs:
        shown = defaults.get(spec.name, spec.default)
        common: dict[str, Any] = {"dest": spec.name, "default": argparse.SUPPRESS, "help": _help_with_default(spec, shown)}
        annotation = spec.annotation
        if _scalar_types(annotation) == [bool]:
            parser.add_argument(spec.flag, action=argparse.BooleanOptionalAction, **common)
        elif _path_or_items(annotation):
            parser.add_argument(spec.flag, type=str, metavar="FILE", **common)
        elif _is_kind(annotation, (dict,)):
            parser.add_argument(spec.flag, nargs="+", type=_mapping_item, action=_MappingAction,
                                metavar="NAME=VALUE", **common)
        elif _is_kind(annotation, (list, tuple)):
            element, nargs = _element_type(annotation)
            parser.add_argument(spec.flag, nargs=nargs, type=lambda t, e=element: convert(t, e),
                                action=_SequenceAction, as_tuple=_is_tuple(annotation), metavar=spec.name.upper(),
                                **common)
        else:
            choices = spec.choices
            words = [str(c) for c in choices or ()] + (["none"] if choices and spec.optional else [])
            metavar = "{" + ",".join(words) + "}" if choices else spec.name.upper()
            parser.add_argument(spec.flag, type=lambda t, a=annotation: convert(t, a), metavar=metavar, **common)


def yaml_value(spec: OptionSpec, value: Any) -> Any:
    """Check and convert one value read from a YAML file for ``spec`` (strings go through :func:`convert`)."""
    if value is None:
        if spec.optional:
            return None
        raise argparse.ArgumentTypeError(f"None: expected {_describe(spec.annotation)}")
    if _path_or_items(spec.annotation):
        return value if isinstance(value, (list, dict)) else str(value)
    if _is_kind(spec.annotation, (dict,)):
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError(f"{value!r}: expected a mapping of names to values")
        return dict(value)
    if _is_kind(spec.annotation, (list, tuple)):
        element, nargs = _element_type(spec.annotation)
        items = value if isinstance(value, (list, tuple)) else [value]
        if isinstance(nargs, int) and len(items) != nargs:
            raise argparse.ArgumentTypeError(f"{value!r}: expected {nargs} values")
        values = [convert(str(v), element) for v in items]
        return tuple(values) if _is_tuple(spec.annotation) else values
    if _scalar_types(spec.annotation) == [bool]:
        if isinstance(value, bool):
            return value
        raise argparse.ArgumentTypeError(f"{value!r}: expected true or false")
    if isinstance(value, bool):
        raise argparse.ArgumentTypeError(f"{value!r}: expected {_describe(spec.annotation)}")
    return convert(str(value), spec.annotation)
