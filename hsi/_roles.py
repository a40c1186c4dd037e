"""What each constructor argument of ``HSIDataModule`` and ``HSIClassifier`` does, declared once beside its type.

Every parameter of those constructors is annotated ``Annotated[<type>, Role(...)]``. The
signature then holds everything about an option in one place: the type (and ``Literal``
choices), the default, the help (numpydoc), and in the :class:`Role`:

- ``kind``: what it configures. ``source`` names the scene (part of the cache's source
  identity), ``recipe`` changes the cached arrays (part of the cache key), ``loader`` only
  how batches are served, ``network`` and ``shape`` the model a checkpoint holds,
  ``training`` how it is trained;
- ``resume``: whether a run resumed from a checkpoint (``hsi train --resume``, ``HSICLI
  --ckpt_path``) may change it (``free``) or must keep the checkpoint's (``fixed``);
- ``check``: the range check of the value (``Literal`` choices are checked from the type); a
  :class:`hsi._checks.Rule`, so the command line's option table carries it and ``hsi train``
  applies it before importing torch;
- ``flag``: the command-line name where the Python name reads badly (``cube_path`` is ``--cube``).

The cache recipe, the constructors' checks, the resume rules and the command-line names
are all read from these declarations (:func:`roles`), so adding an option touches its
declaration and its use, and a test fails for a parameter without a role.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from hsi._checks import Rule
from hsi.errors import CheckpointError, OptionError

__all__ = ["KINDS", "Role", "check_declared", "declared_checks", "fixed_on_resume", "flags", "restore", "roles"]

#: the kinds of argument, in the order the docs list them
KINDS = ("source", "recipe", "loader", "network", "shape", "training")

Check = Callable[[str, Any], None]


@dataclass(frozen=True)
class Role:
    """How one constructor argument is used (see the module docstring).

    Parameters
    ----------
    kind : {"source", "recipe", "loader", "network", "shape", "training"}
        What the argument configures.
    resume : {"fixed", "free"}
        Whether a resumed run must keep the checkpoint's value.
    check : callable, optional
        ``check(name, value)`` raising :class:`hsi.errors.OptionError` for a value out of range.
    flag : str, optional
        Command-line and YAML name, when it differs from the Python name.
    """

    kind: Literal["source", "recipe", "loader", "network", "shape", "training"]
    resume: Literal["fixed", "free"]
    check: Check | None = None
    flag: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.resume not in ("fixed", "free"):
            raise ValueError(f"Role: kind must be one of {KINDS} and resume fixed or free; got {self}")


def roles(cls: type) -> dict[str, Role]:
    """``{parameter: Role}`` of ``cls.__init__``, in signature order (parameters without one are left out)."""
    hints = typing.get_type_hints(cls.__init__, include_extras=True)
    found = {}
    for name, hint in hints.items():
        if typing.get_origin(hint) is typing.Annotated:
            role = next((m for m in hint.__metadata__ if isinstance(m, Role)), None)
            if role is not None:
                found[name] = role
    return found


def fixed_on_resume(cls: type) -> tuple[str, ...]:
    """The arguments of ``cls`` that a resumed run keeps from its checkpoint."""
    return tuple(name for name, role in roles(cls).items() if role.resume == "fixed")


def flags(cls: type) -> dict[str, str]:
    """``{parameter: command-line name}`` for the arguments of ``cls`` that are renamed there."""
    return {name: role.flag for name, role in roles(cls).items() if role.flag}


def _literal_choices(annotation: Any) -> tuple[list[Any], bool] | None:
    """``(allowed values, None allowed)`` of a ``Literal`` (or optional ``Literal``) annotation, else None."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    members = typing.get_args(annotation) if union else (annotation,)
    allowed = [a for m in members if typing.get_origin(m) is typing.Literal for a in typing.get_args(m)]
    return (allowed, type(None) in members) if allowed else None


def _hints(cls: type, extras: bool) -> dict[str, Any]:
    """The annotations of ``cls``'s arguments: its ``__init__``'s, or a dataclass's fields'."""
    hints = typing.get_type_hints(cls if dataclasses.is_dataclass(cls) else cls.__init__, include_extras=extras)
    hints.pop("return", None)
    return hints


def declared_checks(cls: type) -> dict[str, Check]:
    """``{argument: check}``: each role's check, or a :class:`hsi._checks.Rule` annotated alone (dataclass fields).

    A dataclass declares a field's rule as ``epochs: Annotated[int, integer(1)] = 20``.
    """
    found: dict[str, Check] = {}
    for name, hint in _hints(cls, True).items():
        for meta in getattr(hint, "__metadata__", ()) if typing.get_origin(hint) is typing.Annotated else ():
            check = meta.check if isinstance(meta, Role) else meta if isinstance(meta, Rule) else None
            if check is not None:
                found[name] = check
    return found


def check_declared(cls: type, values: dict[str, Any]) -> None:
    """Check every argument of ``cls`` in ``values``: its ``Literal`` choices, then its declared check.

    A check that is a :class:`~hsi._checks.Rule` (torch-free, carried by the command line's option
    table) adds to the choices; any other function (e.g. the model registry's, which knows models
    registered after import) decides alone.

    Raises
    ------
    OptionError
        For the first argument (in signature order) whose value is not allowed.
    """
    checks = declared_checks(cls)
    for name, hint in _hints(cls, False).items():
        if name not in values:
            continue
        value, check = values[name], checks.get(name)
        choices = None if check is not None and not isinstance(check, Rule) else _literal_choices(hint)
        if choices is not None and not (value is None and choices[1]) and value not in choices[0]:
            words = ", ".join(map(str, choices[0])) + (" or None" if choices[1] else "")
            raise OptionError(name, value, f"one of {words}")
        if check is not None:
            check(name, value)


def same_value(a: Any, b: Any) -> bool:
    """Equal as settings: lists and tuples alike, ints and floats by value, dicts key by key."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def restore(saved: dict[str, Any], given: dict[str, Any], fixed: tuple[str, ...], where: str) -> dict[str, Any]:
    """Arguments restored from a checkpoint: its values, with the explicitly ``given`` ones on top.

    The one rule of ``hsi train --resume``, ``HSICLI --ckpt_path`` and ``hsi infer``: a default
    never overrides the checkpoint (``given`` holds only what the user wrote), and a given
    value of a ``fixed`` argument that contradicts the checkpoint is an error naming both.

    Parameters
    ----------
    saved : dict
        The arguments stored in the checkpoint.
    given : dict
        The arguments the user gave explicitly.
    fixed : tuple of str
        Arguments that must keep the checkpoint's value (:func:`fixed_on_resume`).
    where : str
        The checkpoint and the command, for the message ("resume: runs/x/last.ckpt").

    Raises
    ------
    CheckpointError
        Naming the argument, the given value and the checkpoint's.
    """
    for name in fixed:
        if name in given and name in saved and not same_value(given[name], saved[name]):
            raise CheckpointError(
                f"{where}: {name}: {given[name]!r} was given, but the checkpoint was trained with "
                f"{name}={saved[name]!r}; a run restored from a checkpoint keeps its data and model settings "
                "(drop the option, or train anew)"
            )
    return {**saved, **given}
