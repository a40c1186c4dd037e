"""Readers by file: ``register_reader`` adds a format, :func:`find_reader` picks the one for a path.

A reader is a :class:`Reader` subclass that says which files are its own (``suffixes``, or
:meth:`Reader.sniff` of the file's first bytes or of a folder) and opens one lazily as a
:class:`hsi.io.source.RawSource`; the common pipeline (:func:`hsi.io.open_cube`) does the
rest. :func:`hsi.io.read_cube`, :func:`hsi.io.open_cube`, :func:`hsi.io.read_labels`,
:func:`hsi.io.list_arrays`, ``hsi inspect`` and the "supported:" sentence of errors all ask
this registry, so a new format is one module with a registered class.

This module imports no heavy library (h5py, rasterio, spectral, torch): readers import
theirs inside their methods, so the command line's early checks stay fast.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from hsi._registry import add_unique
from hsi.errors import CubeFormatError, DatasetNotFoundError, HSIError
from hsi.io.discovery import ArrayInfo
from hsi.io.source import RawSource

__all__ = ["Reader", "class_names_of", "files_of", "find_reader", "get_reader", "identity_file", "known_suffixes",
           "list_readers", "open_source", "register_reader", "supported", "unregister_reader"]


class Reader(abc.ABC):
    """One file format: how to recognise it, open its cube, list its arrays, read its labels.

    Subclass, set the class attributes, implement :meth:`open` (the rest has defaults that
    suit a format holding one image), and decorate with :func:`register_reader`.

    Attributes
    ----------
    name : str
        Short name, also ``RawSource.format`` by convention ("hdf5", "envi").
    description : str
        How the format is named in the "supported:" sentence of errors (".h5/.hdf5 (HDF5)").
    suffixes : frozenset of str
        Lower-case file suffixes that are this format's (".h5").
    keyed : bool
        True when a file holds several arrays chosen by ``key`` (MATLAB, HDF5); otherwise a
        ``key`` is refused.
    folders : bool
        True when :meth:`sniff` may claim a folder (a ``.npy`` scene).
    carries_georef : bool
        True when a label map of this format can carry a georeference (``hsi inspect`` prints it).
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    suffixes: ClassVar[frozenset[str]] = frozenset()
    keyed: ClassVar[bool] = False
    folders: ClassVar[bool] = False
    carries_georef: ClassVar[bool] = False

    def sniff(self, path: Path) -> bool:
        """Whether ``path`` (a file with no claimed suffix, or a folder when ``folders``) is this format."""
        return False

    def near_miss(self, path: Path) -> Exception | None:
        """An error saying why an unrecognised ``path`` that looks like this format cannot be read, or None."""
        return None

    @abc.abstractmethod
    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        """The raw 3-D source of ``path`` (lazy where the format allows); ``georef`` "check" or "ignore"."""

    def list_arrays(self, path: Path) -> list[ArrayInfo]:
        """The arrays ``path`` holds, without reading them (default: the one image :meth:`open` finds)."""
        source = self.open(path, None, "ignore")
        try:
            return [ArrayInfo(source.path.name, tuple(source.array.shape), str(source.array.dtype))]
        finally:
            source.close()

    def label_array(self, path: Path, key: str | None, prefer: Callable[[ArrayInfo], bool]
                    ) -> tuple[str | None, Any, int | None]:
        """``(name or None, array, class limit or None)`` of the label map in ``path``.

        ``prefer`` ranks candidate arrays (integer ones first); the limit, when not None, is
        how many classes the file declares it can hold (a GeoTIFF class map: its dtype's
        largest value), raising :data:`hsi.io.labels.MAX_CLASSES` to it.
        Default: the whole image :meth:`open` finds.
        """
        source = self.open(path, key, "ignore")
        try:
            import numpy as np

            return None, np.array(source.array), None
        finally:
            source.close()

    def label_georef(self, path: Path, key: str | None) -> Any:
        """The :class:`hsi.io.georef.GeoRef` of the label map in ``path``, or None (default: none)."""
        return None

    def label_nodata(self, path: Path) -> tuple[float | None, str | None]:
        """``(nodata value, kind of mask band)`` of a label map, for ``hsi inspect`` (default: neither)."""
        return None, None

    def class_names(self, path: Path, key: str | None) -> list[str] | None:
        """Names of classes 1..K stored with the label map in ``path``, or None (default: none stored)."""
        return None

    def files(self, path: Path) -> list[Path]:
        """The files ``path`` stands for, ``path``'s own first (default: ``[path]``).

        Runs record their content (:func:`files_of`): an ENVI image is its header and its
        binary, an ``.npy`` scene its ``meta.json`` (which lists its files' SHA-256).
        """
        return [path]


_REGISTRY: dict[str, type[Reader]] = {}

_ReaderT = TypeVar("_ReaderT", bound=type[Reader])


def register_reader(cls: _ReaderT) -> _ReaderT:
    """Class decorator: make ``cls`` (a :class:`Reader` subclass with a ``name``) a known format.

    Readers are asked in the order they were registered. Raises ``ValueError`` when the name
    is taken by another class or a suffix is already another reader's.
    """
    if not (isinstance(cls, type) and issubclass(cls, Reader)) or not cls.name:
        raise TypeError(f"register_reader: {cls!r} is not a Reader subclass with a name")
    for other in _REGISTRY.values():
        taken = other.suffixes & cls.suffixes
        if other is not cls and other.name != cls.name and taken:
            raise ValueError(f"register_reader: suffix(es) {sorted(taken)} of {cls.name!r} are already read by "
                             f"{other.name!r}")
    add_unique(_REGISTRY, cls.name, cls, "register_reader")
    return cls


def unregister_reader(name: str) -> None:
    """Forget the reader registered as ``name`` (a test's toy format); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def list_readers() -> list[str]:
    """Names of the registered readers, in the order they are asked."""
    return list(_REGISTRY)


def get_reader(name: str) -> Reader:
    """The reader registered as ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise KeyError(f"no reader named {name!r}; known: {', '.join(_REGISTRY)}") from None


def known_suffixes() -> frozenset[str]:
    """Every suffix some reader claims."""
    return frozenset().union(*(cls.suffixes for cls in _REGISTRY.values()))


def supported() -> str:
    """The one sentence listing the readable formats, for error messages."""
    return ", ".join(cls.description for cls in _REGISTRY.values())


def find_reader(path: str | Path) -> Reader:
    """The reader for ``path``: by suffix, else by sniffing; raises for missing or unsupported paths.

    Raises
    ------
    DatasetNotFoundError
        ``path`` does not exist (or a reader's :meth:`Reader.near_miss` says a companion file is missing).
    CubeFormatError
        A folder no reader claims, or a file of no known format (the message lists :func:`supported`).
    """
    p = Path(path)
    if not p.exists():
        raise DatasetNotFoundError(f"{p}: no such file")
    readers = [cls() for cls in _REGISTRY.values()]
    if p.is_dir():
        found = next((r for r in readers if r.folders and r.sniff(p)), None)
        if found is None:
            raise CubeFormatError(f"{p}: is a directory, expected a file ({supported()})")
        return found
    suffix = p.suffix.lower()
    found = next((r for r in readers if suffix in r.suffixes), None) or next((r for r in readers if r.sniff(p)), None)
    if found is not None:
        return found
    for reader in readers:
        err = reader.near_miss(p)
        if err is not None:
            raise err
    raise CubeFormatError(f"{p}: unsupported file type {p.suffix or '(no extension)'!r}; supported: {supported()}")


def files_of(path: str | Path) -> list[Path]:
    """The files ``path`` stands for (:meth:`Reader.files`), or ``[path]`` when no reader knows it.

    A path no reader can open is left to the read to report (a missing file, an unsupported one).
    """
    p = Path(path)
    try:
        return find_reader(p).files(p)
    except (OSError, HSIError):
        return [p]


def class_names_of(path: str | Path, key: str | None = None) -> list[str] | None:
    """The class names stored with a label map (:meth:`Reader.class_names`), or None (none, or unreadable)."""
    p = Path(path)
    try:
        return find_reader(p).class_names(p, key)
    except (OSError, HSIError):
        return None


def identity_file(path: str | Path) -> Path:
    """The one file whose content stands for ``path`` in a run's records: ``path`` itself for a file,
    an ``.npy`` scene folder's ``meta.json`` (the first of :func:`files_of`)."""
    return files_of(path)[0]


def open_source(path: str | Path, key: str | None = None, georef: str = "check") -> RawSource:
    """Open ``path`` with its reader, returning the raw 3-D source.

    ``georef`` ("check" or "ignore", :data:`hsi.io.georef.GEOREF_POLICIES`): "ignore" reads
    no georeference at all, so a broken one cannot stop the read; the georeference found is
    ``source.extra["georef"]`` (a :class:`hsi.io.georef.GeoRef` or None). A ``key`` given for
    a format holding one image is refused.
    """
    from hsi.io.georef import check_policy

    check_policy(georef)
    reader = find_reader(path)
    source = reader.open(Path(path), key, georef)
    if key is not None and not reader.keyed:
        source.close()
        raise CubeFormatError(f"{path}: a {source.format} file holds one image; key={key!r} does not apply")
    return source
