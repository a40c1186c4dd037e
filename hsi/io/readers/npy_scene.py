"""The ``.npy`` reader: the scene ``hsi convert --to npy`` writes, and any 3-D ``.npy`` array.

A scene is a folder holding ``cube.npy`` (float32 H x W x C), ``labels.npy`` (when labels
were given) and ``meta.json`` (format ``"hsi-npy"``: shape, wavelengths in nm, georeference).
It is named by the folder, by its ``cube.npy`` or by its ``meta.json``; the cube is
memory-mapped read-only, wavelengths and georeference come from ``meta.json`` and the labels
from ``labels.npy``. Any other ``.npy`` file (a ``cube.npy`` without hsi's ``meta.json``
beside it too) is one array stored H x W x C unless ``layout`` says otherwise, with no
wavelengths.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import CubeFormatError, IntegrityError
from hsi.io.discovery import ArrayInfo
from hsi.io.readers.registry import Reader, register_reader
from hsi.io.source import RawSource

__all__ = ["CUBE_FILE", "LABELS_FILE", "META_FILE", "NPY_FORMAT", "NpySceneReader", "open_npy_scene", "scene_meta"]

#: ``format`` of a scene's ``meta.json``
NPY_FORMAT = "hsi-npy"
CUBE_FILE, LABELS_FILE, META_FILE = "cube.npy", "labels.npy", "meta.json"


def _scene_folder(path: Path) -> Path | None:
    """The folder of the scene ``path`` names (the folder, its ``meta.json`` or its ``cube.npy``), else None.

    A ``cube.npy`` counts only with a ``meta.json`` of hsi's beside it; a folder or a
    ``meta.json`` is claimed by its name alone (:func:`scene_meta` then says what is wrong).
    """
    if path.is_dir():
        return path if (path / META_FILE).is_file() else None
    if path.name == META_FILE:
        return path.parent
    if path.name == CUBE_FILE and (path.parent / META_FILE).is_file():
        try:
            meta = json.loads((path.parent / META_FILE).read_text())
        except (OSError, ValueError):
            return None  # someone else's meta.json: the .npy alone, as any other
        return path.parent if isinstance(meta, dict) and meta.get("format") == NPY_FORMAT else None
    return None


def scene_meta(folder: Path) -> dict[str, Any]:
    """The checked ``meta.json`` of the scene in ``folder``; :class:`IntegrityError` when it is not hsi's."""
    try:
        meta = json.loads((folder / META_FILE).read_text())
    except (OSError, ValueError) as err:
        raise IntegrityError(f"{folder}: no readable {META_FILE} ({err}); not an hsi .npy scene") from err
    if not isinstance(meta, dict) or meta.get("format") != NPY_FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise IntegrityError(f"{folder}/{META_FILE}: format {found!r}, expected {NPY_FORMAT!r}")
    return meta


def _check_listed(folder: Path, meta: dict[str, Any], name: str) -> None:
    """Refuse ``folder/name`` when it is not the file ``meta.json`` lists (:class:`IntegrityError`).

    ``hsi convert`` records each array's size and whole-file SHA-256 in ``meta.json``'s
    ``files``. Both are compared for a file up to :data:`hsi._identity.FULL_HASH_LIMIT`
    (hashed once per process: :func:`hsi._identity.file_identity` remembers it); above it,
    re-reading the whole file at every open would cost more than the read, so only the size
    is compared. A ``meta.json`` that lists no such file is not checked, and a missing file
    is left to the read to report.
    """
    from hsi._identity import file_identity

    listed = (meta.get("files") or {}).get(name) if isinstance(meta.get("files"), dict) else None
    path = folder / name
    if not isinstance(listed, dict) or not path.is_file():
        return
    found = file_identity(path)
    fix = (f"the file was replaced or edited after hsi convert wrote the scene; convert its source again "
           f"(hsi convert {meta.get('source') or 'SOURCE'} --to npy {folder} --overwrite)")
    if listed.get("size") != found["size"]:
        raise IntegrityError(f"{path}: {found['size']} bytes, {META_FILE} lists {listed.get('size')}; {fix}")
    if found.get("hash") != "sampled" and listed.get("sha256") != found["sha256"]:
        raise IntegrityError(f"{path}: SHA-256 {found['sha256']}, {META_FILE} lists {listed.get('sha256')}; {fix}")


def _load(path: Path) -> np.ndarray:
    """``path`` as a read-only memory map (plain array where numpy cannot map it)."""
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as err:
        raise CubeFormatError(f"{path}: not a readable .npy array ({err})") from err


@register_reader
class NpySceneReader(Reader):
    """``.npy`` arrays, and the scenes of ``hsi convert --to npy`` (folder, ``cube.npy`` or ``meta.json``)."""

    name = "npy"
    description = ".npy (an H x W x C array, or the folder, cube.npy or meta.json of an hsi convert --to npy scene)"
    suffixes = frozenset({".npy"})
    folders = True
    carries_georef = True

    def sniff(self, path: Path) -> bool:
        return _scene_folder(path) is not None

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        folder = _scene_folder(path)
        if folder is None:
            return RawSource(path, "npy", _load(path), layout="HWC", mapped=True)
        meta = scene_meta(folder)
        _check_listed(folder, meta, CUBE_FILE)
        cube = _load(folder / CUBE_FILE)
        if list(cube.shape) != list(meta.get("shape") or []):
            raise IntegrityError(f"{folder}/{CUBE_FILE}: shape {cube.shape}, {META_FILE} says {meta.get('shape')}")
        wavelengths, fwhm = meta.get("wavelengths"), meta.get("fwhm")
        return RawSource(
            folder / CUBE_FILE, "npy", cube, layout="HWC", mapped=True,
            wavelengths=None if wavelengths is None else np.asarray(wavelengths, dtype=np.float64),
            wavelength_units=meta.get("wavelength_units") or "nm",
            wavelength_source=None if wavelengths is None else f"{folder / META_FILE}",
            fwhm=None if fwhm is None else np.asarray(fwhm, dtype=np.float64),
            extra={"georef": self._georef(folder, meta, georef), "npy_scene": str(folder)},
        )

    @staticmethod
    def _georef(folder: Path, meta: dict[str, Any], georef: str) -> Any:
        from hsi.io.georef import GeoRef, check_usable

        if georef == "ignore":
            return None
        return check_usable(GeoRef.from_dict(meta.get("georef")), str(folder / META_FILE))

    def list_arrays(self, path: Path) -> list[ArrayInfo]:
        """The cube (and the labels of a scene that has them), as stored."""
        folder = _scene_folder(path)
        names = [path] if folder is None else [folder / CUBE_FILE] + \
            ([folder / LABELS_FILE] if scene_meta(folder).get("labels") else [])
        infos = []
        for name in names:
            array = _load(name)
            infos.append(ArrayInfo(name.name, tuple(array.shape), str(array.dtype)))
        return infos

    def label_array(self, path: Path, key: str | None, prefer: Callable[[ArrayInfo], bool]
                    ) -> tuple[str | None, Any, int | None]:
        """A scene's ``labels.npy``; any other ``.npy`` is itself the label map."""
        folder = _scene_folder(path)
        if folder is None:
            return None, np.array(_load(path)), None
        meta = scene_meta(folder)
        if not meta.get("labels"):
            raise CubeFormatError(f"{folder}: this .npy scene holds no labels ({META_FILE} says 'labels': null); "
                                  f"convert it again with its labels (hsi convert --labels)")
        _check_listed(folder, meta, LABELS_FILE)
        return None, np.load(folder / LABELS_FILE, allow_pickle=False), None

    def files(self, path: Path) -> list[Path]:
        """A scene's ``meta.json``, ``cube.npy`` and ``labels.npy`` (those present; the one named, or ``meta.json``
        for the folder, first); a lone ``.npy``: itself."""
        folder = _scene_folder(path)
        if folder is None:
            return [path]
        first = folder / META_FILE if path == folder else path
        rest = [folder / name for name in (META_FILE, CUBE_FILE, LABELS_FILE) if folder / name != first]
        return [first] + [f for f in rest if f.is_file()]

    def label_georef(self, path: Path, key: str | None) -> Any:
        """A scene's labels lie on its cube's grid; a lone ``.npy`` has none."""
        folder = _scene_folder(path)
        return None if folder is None else self._georef(folder, scene_meta(folder), "check")


def open_npy_scene(folder: str | Path) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """``(cube memmap (H, W, C), labels or None, meta)`` of a scene as stored, for tools that want its files.

    The same checks as :class:`NpySceneReader` (``meta.json`` is hsi's, ``cube.npy`` has its
    shape); :func:`hsi.io.open_cube` / :func:`hsi.io.read_cube` read the scene as a cube.
    """
    path = Path(folder)
    scene = _scene_folder(path)
    if scene is None:
        scene_meta(path)  # raises, naming what is missing
    reader = NpySceneReader()
    source = reader.open(scene, None, "ignore")
    meta = scene_meta(scene)
    labels = reader.label_array(scene, None, bool)[1] if meta.get("labels") else None
    return source.array, labels, meta
