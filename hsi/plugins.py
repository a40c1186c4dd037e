"""Plug-ins of installed packages: the entry-point groups ``hsi.readers``, ``hsi.sinks`` and ``hsi.models``.

A package ships a reader, an output format of ``hsi infer`` or a model by naming it in its
``pyproject.toml``; the entry point's name is the name it is known by (the reader's ``name``,
``--format NAME``, ``--model NAME``), and its value a class, registered under that name, or a
module whose import registers it::

    [project.entry-points."hsi.models"]
    centre_linear = "my_package.models:CentreLinear"

    [project.entry-points."hsi.sinks"]
    counts = "my_package.sinks"

The names are read from the installed distributions' metadata without importing anything
(:func:`plugin_names`): the command line offers them as ``--model`` and ``--format`` choices
before numpy or torch is imported. The plug-ins themselves are imported once, the first time
their registry is asked (:func:`load_plugins`, called by :mod:`hsi.io.readers.registry`,
:mod:`hsi.sinks.registry` and :mod:`hsi.models.registry`). One that fails (an import error, an
object of the wrong type, a name already taken) is named in one :class:`~hsi.errors.PluginWarning`
and skipped: the others, and the command, go on. With the environment variable
``HSI_NO_PLUGINS=1`` no plug-in is listed or loaded (to tell a plug-in's fault from the
package's; ``python -m hsi.cli.table`` sets it, so that the option table lists the package's
own names only).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from importlib import metadata
from types import ModuleType
from typing import Any

from hsi.errors import PluginWarning

__all__ = ["DISABLE", "GROUPS", "installed", "load_plugins", "plugin_names"]

#: entry-point group -> what its plug-ins are, in messages
GROUPS = {"hsi.readers": "reader", "hsi.sinks": "output format", "hsi.models": "model"}

#: the environment variable that, set to anything but "" or "0", turns every plug-in off
DISABLE = "HSI_NO_PLUGINS"

#: the groups whose plug-ins were imported in this process (each is imported once)
_LOADED: set[str] = set()


def installed(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group`` in the installed distributions (two packages may declare one name: the second
    is then refused as a name already taken when it is loaded)."""
    if group not in GROUPS:
        raise ValueError(f"unknown plug-in group {group!r}; known: {', '.join(GROUPS)}")
    if os.environ.get(DISABLE, "") not in ("", "0"):
        return []
    return list(metadata.entry_points(group=group))


def plugin_names(group: str) -> list[str]:
    """The names the plug-ins of ``group`` declare, each once, without importing them (the command line's extra
    choices)."""
    return list(dict.fromkeys(entry.name for entry in installed(group)))


def load_plugins(group: str, register: Callable[[str, type], Any], registered: Callable[[str], bool]) -> None:
    """Import the plug-ins of ``group`` and register them, once per process; a failing one is a warning.

    Parameters
    ----------
    group : str
        One of :data:`GROUPS`.
    register : callable
        ``register(name, cls)``: adds a class-valued entry point to the registry (it raises for a
        class of the wrong type or a name already another class's).
    registered : callable
        ``registered(name)``: whether the registry holds ``name``, asked after a module-valued entry
        point is imported (its import must have registered its name).
    """
    if group in _LOADED:
        return
    _LOADED.add(group)  # first: a plug-in that asks its registry while it is imported does not load the group again
    for entry in installed(group):
        try:
            _load_one(entry, register, registered)
        except Exception as err:  # noqa: BLE001 - whatever a plug-in raises, it is that plug-in's failure alone
            warnings.warn(PluginWarning(_failure(group, entry, err)), stacklevel=3)


def _load_one(entry: metadata.EntryPoint, register: Callable[[str, type], Any],
              registered: Callable[[str], bool]) -> None:
    """Import one entry point and register what it names (a class), or check that its import registered its name."""
    loaded = entry.load()
    if isinstance(loaded, ModuleType):
        if not registered(entry.name):
            raise LookupError(f"importing module {loaded.__name__} registered nothing named {entry.name!r}")
    elif isinstance(loaded, type):
        register(entry.name, loaded)
    else:
        raise TypeError(f"{entry.value} is a {type(loaded).__name__}, expected a class or a module")


def _failure(group: str, entry: metadata.EntryPoint, err: BaseException) -> str:
    """The one line naming a failed plug-in: its group, its name, its package and what went wrong."""
    dist = getattr(entry, "dist", None)
    package = f"package {dist.name} {dist.version}" if dist is not None else "package unknown"
    reason = " ".join(f"{type(err).__name__}: {err}".split())
    return (f"{GROUPS[group]} plug-in {entry.name!r} ({group} entry point {entry.value!r}, {package}) not loaded, "
            f"skipped: {reason}")
