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
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from hsi._identity import file_identity
from hsi._paths import user_path
from hsi._registry import add_unique
from hsi.errors import CubeFormatError, DatasetNotFoundError, HSIError
from hsi.io.discovery import ArrayInfo, is_numeric
from hsi.io.layout import LAYOUTS
from hsi.io.names_file import names_file_of, read_names_file
from hsi.io.source import RawSource
from hsi.plugins import load_plugins

__all__ = ["Reader", "class_names_of", "files_of", "find_reader", "get_reader", "identities_of", "identity_file",
           "known_suffixes", "list_readers", "open_source", "register_reader", "supported", "unregister_reader"]


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
        File suffixes that are this format's, each a dot and a word (".h5"); matched without
        regard to case (:func:`register_reader` stores them in lower case).
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
        """The raw 3-D source of ``path`` (lazy where the format allows); ``georef`` "check" or "ignore".

        Its ``array`` has a ``shape`` with no empty axis and a real ``dtype`` (bool, integer or
        float): the package checks this where it calls ``open`` (:func:`open_source`).
        """

    def list_arrays(self, path: Path) -> list[ArrayInfo]:
        """The arrays ``path`` holds, without reading them (default: the one image :meth:`open` finds)."""
        source = opened(self, path, None, "ignore")
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
        source = opened(self, path, key, "ignore")
        try:
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
        """Every file a read of ``path`` takes data from, ``path``'s own first (default: ``[path]``).

        Runs decide reuse by the content of each of them (:func:`identities_of`), so a format
        made of several files must list them all: an ENVI image is its header and its binary,
        an ``.npy`` scene its ``meta.json``, ``cube.npy`` and ``labels.npy``. Files that do
        not exist are left out (the read reports them).
        """
        return [path]


_REGISTRY: dict[str, type[Reader]] = {}

_ReaderT = TypeVar("_ReaderT", bound=type[Reader])


def register_reader(cls: _ReaderT) -> _ReaderT:
    """Class decorator: make ``cls`` (a :class:`Reader` subclass with a ``name``) a known format.

    Readers are asked in the order they were registered. The suffixes are stored in lower
    case, as :func:`find_reader` compares them.

    Raises
    ------
    TypeError
        ``cls`` is not a :class:`Reader` subclass with a ``name``, or its ``suffixes`` are not a set of strings.
    ValueError
        The name is taken by another class, a suffix is not a dot and a word (".h5"), or a
        suffix is already another reader's.
    """
    if not (isinstance(cls, type) and issubclass(cls, Reader)) or not isinstance(cls.name, str) or not cls.name:
        raise TypeError(f"register_reader: {cls!r} is not a Reader subclass with a name")
    cls.suffixes = _checked_suffixes(cls)
    for other in _REGISTRY.values():
        taken = other.suffixes & cls.suffixes
        if other is not cls and other.name != cls.name and taken:
            raise ValueError(f"register_reader: suffix(es) {sorted(taken)} of {cls.name!r} are already read by "
                             f"{other.name!r}")
    add_unique(_REGISTRY, cls.name, cls, "register_reader")
    return cls


def _checked_suffixes(cls: type[Reader]) -> frozenset[str]:
    """``cls.suffixes`` in lower case; each must be one dot and a word without separators (".csvcube")."""
    suffixes = cls.suffixes
    if isinstance(suffixes, str) or not all(isinstance(s, str) for s in suffixes):
        raise TypeError(f"register_reader: {cls.name!r}: suffixes {suffixes!r} must be a set of strings "
                        f"such as frozenset({{'.h5'}})")
    for suffix in suffixes:
        if Path("x" + suffix).suffix != suffix or suffix != suffix.strip():
            raise ValueError(f"register_reader: {cls.name!r}: suffix {suffix!r} is not a file suffix; expected "
                             f"a dot and a word, such as '.h5' (a file's last suffix is all that is compared)")
    return frozenset(s.lower() for s in suffixes)


def _readers() -> dict[str, type[Reader]]:
    """The registry, once the installed packages' ``hsi.readers`` plug-ins are in it (:mod:`hsi.plugins`)."""
    load_plugins("hsi.readers", _register_plugin, _REGISTRY.__contains__)
    return _REGISTRY


def _register_plugin(name: str, cls: type) -> None:
    """Register an ``hsi.readers`` entry point's class, whose ``name`` must be the entry point's."""
    if isinstance(cls, type) and issubclass(cls, Reader) and cls.name != name:
        raise ValueError(f"{cls.__module__}.{cls.__qualname__} is named {cls.name!r}, not {name!r} as its entry point")
    register_reader(cls)


def unregister_reader(name: str) -> None:
    """Forget the reader registered as ``name`` (a test's toy format); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def list_readers() -> list[str]:
    """Names of the registered readers, in the order they are asked."""
    return list(_readers())


def get_reader(name: str) -> Reader:
    """The reader registered as ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return _readers()[name]()
    except KeyError:
        raise KeyError(f"no reader named {name!r}; known: {', '.join(_REGISTRY)}") from None


def known_suffixes() -> frozenset[str]:
    """Every suffix some reader claims."""
    return frozenset().union(*(cls.suffixes for cls in _readers().values()))


def supported() -> str:
    """The one sentence listing the readable formats, for error messages."""
    return ", ".join(cls.description for cls in _readers().values())


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
    readers = [cls() for cls in _readers().values()]
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
    """The files ``path`` stands for (:meth:`Reader.files`, ``path``'s own first), or ``[path]`` when no reader
    knows it.

    A path no reader can open is left to the read to report (a missing file, an unsupported one).
    """
    p = Path(path)
    names = names_file_of(p)
    try:
        files = find_reader(p).files(p)
    except (OSError, HSIError):
        files = [p]
    return files + ([names] if names is not None and names not in files else [])


def class_names_of(path: str | Path, key: str | None = None) -> list[str] | None:
    """Names of a label map's ids ``1..K`` (``""`` for an id left unnamed), or None (none, or an unreadable file).

    A names file beside it (:mod:`hsi.io.names_file`) first, else the names the file stores
    (:meth:`Reader.class_names`). A names file that cannot be read raises: it was written to be used.

    Raises
    ------
    CubeFormatError
        The names file is not ``id name`` lines (:func:`hsi.io.names_file.read_names_file`).
    """
    p = Path(path)
    written = names_file_of(p)
    if written is not None:
        return read_names_file(written)
    try:
        return find_reader(p).class_names(p, key)
    except (OSError, HSIError):
        return None


def identity_file(path: str | Path) -> Path:
    """The file that names ``path`` in messages: ``path`` itself for a file, an ``.npy`` scene folder's
    ``meta.json`` (the first of :func:`files_of`). Reuse is decided by all of them (:func:`identities_of`)."""
    return files_of(path)[0]


def identities_of(path: str | Path) -> list[dict[str, Any]]:
    """The content identity (:func:`hsi._identity.file_identity`) of every file ``path`` stands for (:func:`files_of`).

    What a run records of each input it reads, so replacing any one file of a multi-file
    format (an ENVI binary under an unchanged header, an ``.npy`` scene's ``cube.npy``, a
    reader plug-in's companion file) makes the run's outputs and caches count as stale.

    Raises
    ------
    DatasetNotFoundError, FileAccessError
        ``path`` (a file of no known format) cannot be read.
    """
    return [file_identity(f) for f in files_of(path)]


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
    source = opened(reader, Path(path), key, georef)
    if key is not None and not reader.keyed:
        source.close()
        raise CubeFormatError(f"{path}: a {source.format} file holds one image; key={key!r} does not apply")
    return source


def opened(reader: Reader, path: Path, key: str | None, georef: str) -> RawSource:
    """``reader.open(path, key, georef)``, its result checked (:func:`check_source`).

    Every call of a reader's :meth:`Reader.open` goes through here. An ``OSError`` it raises
    (a permission, a disk error) becomes an hsi error naming the file and the reader
    (:func:`hsi._paths.user_path`).
    """
    with user_path(path, f"read it (reader {reader.name!r})"):
        source = reader.open(path, key, georef)
    try:
        check_source(source, reader.name, path)
    except CubeFormatError:
        if isinstance(source, RawSource):
            source.close()
        raise
    return source


def check_source(source: Any, reader: str, path: Path) -> None:
    """Refuse what a reader's ``open`` returned unless it is a :class:`RawSource` of a usable array.

    The array must have a ``shape`` of whole numbers with no empty axis, a real ``dtype``
    (bool, integer or float: not complex, text or objects) and slice indexing, and the
    ``layout`` must be None or one of :data:`hsi.io.layout.LAYOUTS`, so that no
    numpy error from deep inside the pipeline reaches the user. The number of axes is the
    pipeline's to judge (a 2-D array is told to use ``read_labels``).

    Raises
    ------
    CubeFormatError
        Naming the file, the reader and what it returned.
    """
    where = f"{path}: the {reader!r} reader"
    if not isinstance(source, RawSource):
        raise CubeFormatError(f"{where} returned {type(source).__name__}, expected a RawSource")
    array = source.array
    shape, dtype = getattr(array, "shape", None), getattr(array, "dtype", None)
    if shape is None or dtype is None or not hasattr(array, "__getitem__"):
        raise CubeFormatError(f"{where} returned an array of type {type(array).__name__}, expected an array-like "
                              f"with shape, dtype and slice indexing (a numpy array, a memory map, an h5py dataset)")
    try:
        shape = tuple(operator.index(n) for n in shape)
        dtype = np.dtype(dtype)
    except TypeError as err:
        raise CubeFormatError(f"{where} returned an array of shape {shape!r} and dtype {dtype!r}: {err}") from err
    if not is_numeric(dtype):
        raise CubeFormatError(f"{where} returned an array of dtype {dtype}, expected real numbers "
                              f"(bool, integer or float)")
    if any(n < 1 for n in shape):
        raise CubeFormatError(f"{where} returned an empty array (shape {shape}); the file holds no pixels")
    if source.layout is not None and source.layout not in LAYOUTS:
        raise CubeFormatError(f"{where} returned layout {source.layout!r}, expected None (detect it) or one of "
                              f"{', '.join(LAYOUTS)}")
