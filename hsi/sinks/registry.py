"""Output formats of a whole-scene map by name: ``register_sink`` adds one, ``get_sink`` finds one.

A sink is one output format of ``hsi infer`` (``--format``): the files it writes, the disk
space they need, and how it writes them from the finished maps. The idea is MONAI's
``Merger`` (one interface, several backends for where results go), applied where the maps
leave the run. The tile pass always writes the memory-mapped ``.npy`` maps into the staging
folder (:mod:`hsi.infer.arrays`); each chosen sink then reads them, strip by strip where its
writer can, and writes its own files beside them. :func:`hsi.infer.write.write_folder` loops
over the chosen sinks; nothing else names a format.

The command line's ``--format`` choices are the option table's list of these names, joined by
the names of installed plug-ins (:mod:`hsi.cli.names`); the plug-ins themselves (entry points
``hsi.sinks``, :mod:`hsi.plugins`) are imported into this registry the first time it is asked.
This module imports neither torch nor the writers.
"""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from hsi._registry import add_unique
from hsi.errors import OptionError, PluginError
from hsi.plugins import load_plugins

__all__ = ["DEFAULT_FORMATS", "RESERVED_NAMES", "FinishedMaps", "MapLayout", "Sink", "check_written", "chosen_sinks",
           "declared_files", "describe_sink", "format_name", "get_sink", "list_sinks", "needed_bytes",
           "probability_sinks", "register_sink", "unregister_sink", "wants_false_colour"]

#: what ``hsi infer`` writes when ``--format`` is not given: every built-in sink
DEFAULT_FORMATS: tuple[str, ...] = ("npy", "envi", "gtiff", "png")
#: words that are no format's name: ``--format`` may one day give them a meaning of their own
RESERVED_NAMES = frozenset({"all", "none", "default"})
#: a format's name, as ``--format NAME`` takes it (compared in lower case)
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")

_REGISTRY: dict[str, type[Sink]] = {}


@dataclass(frozen=True)
class MapLayout:
    """What a run's maps are, which decides the files a sink writes and their size.

    Parameters
    ----------
    shape : (H, W)
    num_classes : int
        K; labels are ``1..K`` (0 at no-data pixels).
    label_dtype : numpy dtype
        Of the label map (uint8, or uint16 past 255 classes).
    probabilities : bool
        The run keeps the ``(H, W, K)`` probabilities.
    rgb : bool
        The run keeps the false-colour bands (for a preview).
    """

    shape: tuple[int, int]
    num_classes: int
    label_dtype: np.dtype
    probabilities: bool
    rgb: bool

    @property
    def pixels(self) -> int:
        """H x W."""
        return int(self.shape[0]) * int(self.shape[1])


@dataclass(frozen=True)
class FinishedMaps:
    """The finished maps of a run and what their files say about them.

    Parameters
    ----------
    labels : (H, W) uint8 or uint16
        Class ids ``1..K``, 0 at no-data pixels (memory-mapped: read it in strips).
    confidence : (H, W) float32
        Largest class probability, 0 at no-data pixels.
    probabilities : (H, W, K) float16 or None
    rgb : (h, w, 3) float32 or None
        False-colour bands at the preview's pixels (every :func:`hsi.viz.preview_step`-th row and column).
    class_names : list of str
        Names of classes 1..K.
    palette : (K + 1, 3) uint8
        Colour of each id, no-data first.
    georef : hsi.io.georef.GeoRef or None
        The cube's CRS and transform.
    nodata : (H, W) bool or None
        No-data pixels (None when there are none).
    background : (H, W) bool or None
        Ground-truth background a preview draws dimmed.
    source_header : Path or None
        ENVI header of the cube, whose map info a file without ``georef`` may copy.
    title, rgb_title : str
        Titles of the class map and of the false-colour preview.
    description : str
        What made the maps (``hsi infer <checkpoint>``), for files with a description field.
    """

    labels: np.ndarray
    confidence: np.ndarray
    probabilities: np.ndarray | None
    rgb: np.ndarray | None
    class_names: list[str]
    palette: np.ndarray
    georef: Any = None
    nodata: np.ndarray | None = None
    background: np.ndarray | None = None
    source_header: Path | None = None
    title: str = ""
    rgb_title: str = ""
    description: str = ""

    @property
    def names(self) -> list[str]:
        """Names of ids 0..K: ``"Unclassified"`` then the classes."""
        return ["Unclassified", *self.class_names]

    @property
    def layout(self) -> MapLayout:
        """The :class:`MapLayout` of these maps."""
        return MapLayout(tuple(self.labels.shape[:2]), len(self.class_names), self.labels.dtype,
                         self.probabilities is not None, self.rgb is not None)


class Sink(abc.ABC):
    """One output format: the files it writes, the bytes they need, and how it writes them.

    Subclasses are registered with :func:`register_sink` and built with no arguments.

    Attributes
    ----------
    writes_probabilities : bool
        It writes the probabilities when the run keeps them (``--probabilities`` needs one such sink).
    wants_rgb : bool
        It needs the false-colour bands, which the tile pass then keeps (a preview).
    thread_safe : bool
        It may run on the writer thread beside the others; False runs it on the calling thread
        (matplotlib draws on one thread only).
    """

    writes_probabilities: bool = False
    wants_rgb: bool = False
    thread_safe: bool = True

    @abc.abstractmethod
    def files(self, layout: MapLayout) -> tuple[str, ...]:
        """The names of the files it writes into the output folder for maps of ``layout``.

        Plain file names (no folder part, not hidden); :meth:`write` must write each of them and
        nothing else (:func:`check_written`), except the run's own ``.npy`` maps, which it may list to keep.
        """

    @abc.abstractmethod
    def bytes_needed(self, layout: MapLayout) -> int:
        """Disk bytes it needs beyond the run's own maps (checked free before the tile pass): an int >= 0."""

    @abc.abstractmethod
    def write(self, folder: Path, maps: FinishedMaps) -> None:
        """Write its files into ``folder``, an empty folder of its own in the staging folder.

        Its declared files are moved beside the run's maps once it is done (the whole committed
        once every sink is done); a file it did not declare, or one it declared and did not write, is an error.
        """

    def all_files(self) -> tuple[str, ...]:
        """Every file it may write: those of a run that keeps probabilities and false colour."""
        return self.files(MapLayout((1, 1), 1, np.dtype(np.uint8), True, True))


_SinkT = TypeVar("_SinkT", bound=type[Sink])


def register_sink(name: str) -> Callable[[_SinkT], _SinkT]:
    """Class decorator: make ``cls`` the output format ``name`` (``--format name``, case-insensitive).

    Raises
    ------
    TypeError
        ``name`` is not a string (``@register_sink`` used without its name), or ``cls`` is not a :class:`Sink` subclass.
    ValueError
        ``name`` is not one word of letters, digits, ``-`` and ``_``, is one of
        :data:`RESERVED_NAMES`, or is already taken by another class.
    """
    key = _checked_name(name)

    def decorator(cls: _SinkT) -> _SinkT:
        if not (isinstance(cls, type) and issubclass(cls, Sink)):
            raise TypeError(f"register_sink({key!r}): {cls!r} is not a subclass of hsi.sinks.Sink")
        add_unique(_REGISTRY, key, cls, "register_sink")
        return cls

    return decorator


def _checked_name(name: Any) -> str:
    """``name`` in lower case, once it is a word ``--format`` can take and no reserved one."""
    if not isinstance(name, str):
        raise TypeError(f"register_sink: the format's name must be a string, got {name!r}; "
                        f"write @register_sink(\"name\") above the class")
    key = name.lower()
    if not _NAME.fullmatch(key):
        raise ValueError(f"register_sink: format name {name!r} is not one word of letters, digits, '-' and '_' "
                         f"(it is given as --format NAME)")
    if key in RESERVED_NAMES:
        raise ValueError(f"register_sink: format name {name!r} is reserved ({', '.join(sorted(RESERVED_NAMES))}); "
                         f"choose another name")
    return key


def _sinks() -> dict[str, type[Sink]]:
    """The registry, once the installed packages' ``hsi.sinks`` plug-ins are in it (:mod:`hsi.plugins`)."""
    load_plugins("hsi.sinks", lambda name, cls: register_sink(name)(cls), lambda name: name.lower() in _REGISTRY)
    return _REGISTRY


def unregister_sink(name: str) -> None:
    """Remove the output format ``name`` (a plug-in's, or a test's); unknown names are ignored."""
    _REGISTRY.pop(name.lower(), None)


def list_sinks() -> list[str]:
    """Registered format names in the order their files are written: those of :data:`DEFAULT_FORMATS` in its
    order, then the others in the order they were registered."""
    registry = _sinks()
    defaults = [name for name in DEFAULT_FORMATS if name in registry]
    return defaults + [name for name in registry if name not in DEFAULT_FORMATS]


def get_sink(name: str) -> Sink:
    """A sink of the format ``name`` (case-insensitive).

    Raises
    ------
    OptionError
        ``name`` is not registered (option ``format``; the message lists the formats).
    """
    cls = _sinks().get(str(name).lower())
    if cls is None:
        raise OptionError("format", name, f"one or more of {', '.join(list_sinks())}")
    return cls()


def chosen_sinks(formats: Iterable[str]) -> list[Sink]:
    """The sinks of ``formats``, in the order of :func:`list_sinks`."""
    chosen = {name: get_sink(name) for name in sorted({str(f).lower() for f in formats})}  # unknown: refused here
    return [chosen[name] for name in list_sinks() if name in chosen]


def probability_sinks() -> list[str]:
    """The formats that write the probabilities."""
    return [name for name in list_sinks() if _REGISTRY[name].writes_probabilities]


def wants_false_colour(formats: Iterable[str]) -> bool:
    """Whether a sink of ``formats`` needs the false-colour bands kept by the tile pass."""
    return any(sink.wants_rgb for sink in chosen_sinks(formats))


def format_name(sink: Sink) -> str:
    """The name ``sink``'s class is registered under (the first, when it has several; its class name when none)."""
    return next((name for name, cls in _REGISTRY.items() if cls is type(sink)), type(sink).__name__.lower())


def describe_sink(sink: Sink) -> str:
    """``output format 'name' (module.Class)``: how messages name a sink, a plug-in's included."""
    cls = type(sink)
    return f"output format {format_name(sink)!r} ({cls.__module__}.{cls.__qualname__})"


def declared_files(sink: Sink, layout: MapLayout | None = None) -> tuple[str, ...]:
    """``sink.files(layout)`` (``sink.all_files()`` when ``layout`` is None), checked before anything is written.

    Raises
    ------
    PluginError
        Not a tuple or list of strings, or a name that is not a plain file name inside the
        output folder (a folder part such as ``../``, an absolute path, a hidden name).
    """
    method = "all_files()" if layout is None else "files(layout)"
    names = sink.all_files() if layout is None else sink.files(layout)
    if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
        raise PluginError(f"{describe_sink(sink)}: {method} returned {names!r}, expected a tuple of file names")
    for name in names:
        if not _plain(name):
            raise PluginError(f"{describe_sink(sink)}: {method} declares {name!r}, expected a plain file name "
                              f"inside the output folder (no folder part, not hidden)")
    return tuple(names)


def _plain(name: str) -> bool:
    """Whether ``name`` is a file name of the folder itself: no folder part (``../``, ``/``), not hidden, not blank."""
    return bool(name) and name == os.path.basename(name) and "\\" not in name and not name.startswith(".") \
        and name == name.strip()


def needed_bytes(sink: Sink, layout: MapLayout) -> int:
    """``sink.bytes_needed(layout)``, checked: :class:`PluginError` unless a whole number >= 0."""
    needed = sink.bytes_needed(layout)
    if isinstance(needed, bool) or not isinstance(needed, (int, np.integer)) or needed < 0:
        raise PluginError(f"{describe_sink(sink)}: bytes_needed returned {needed!r}, expected a whole number of "
                          f"bytes >= 0")
    return int(needed)


def check_written(sink: Sink, folder: Path, declared: Iterable[str], provided: Iterable[str] = ()) -> list[str]:
    """The files ``sink`` wrote into ``folder`` (its own), once they are exactly those it declared.

    ``provided`` are declared names the run writes itself (its ``.npy`` maps), which the sink need not write.

    Raises
    ------
    PluginError
        A file (or folder) it wrote and did not declare, one of the run's own maps it wrote, or one
        it declared and did not write.
    """
    declared, provided = list(declared), set(provided)
    found = sorted(os.listdir(folder))
    taken = [name for name in found if name in provided]
    if taken:
        raise PluginError(f"{describe_sink(sink)}: wrote {', '.join(map(repr, taken))}, which the run writes itself "
                          f"(a format lists the run's maps to keep them, and does not write them)")
    undeclared = [name for name in found if name not in declared]
    if undeclared:
        raise PluginError(f"{describe_sink(sink)}: wrote {', '.join(map(repr, undeclared))}, which its files() does "
                          f"not declare (declared: {', '.join(map(repr, declared)) or 'none'}); a format writes "
                          f"exactly the files it declares")
    missing = [name for name in declared if name not in provided and not (folder / name).is_file()]
    if missing:
        raise PluginError(f"{describe_sink(sink)}: did not write {', '.join(map(repr, missing))}, which its files() "
                          f"declares")
    return found
