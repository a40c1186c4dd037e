"""Turn DataModule-style arguments into a labeled cube and a stable source identity.

Three kinds of source:

- ``scene="synthetic"`` (default): :func:`hsi.scenes.make_synthetic_scene` with
  ``scene_options``; identity = the generator parameters (no file);
- ``scene=<registry name>``: :func:`hsi.scenes.load_scene` (``root``, ``scene_options``);
  identity = name, root, options and the files the loaded cube came from;
- ``cube_path`` + ``labels_path`` (+ keys): :func:`hsi.io.read_cube` /
  :func:`hsi.io.read_labels`; label values are renumbered to ``1..K`` (originals kept in
  ``label_values``); identity = path, size, mtime and SHA-256 of every file each path stands
  for (:func:`hsi.io.readers.identities_of`: an ENVI header and its binary, an ``.npy``
  scene's ``meta.json`` and arrays; :func:`hsi._identity.file_identity`: whole-file below
  256 MiB, sampled chunks above).

Any of them may keep only the bands within ``wavelength_range`` (:func:`within_range`: the
cube, its wavelengths and band widths are cut as soon as it is loaded).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hsi._identity import file_identity
from hsi.errors import OptionError

__all__ = ["SourceSpec", "LoadedSource", "load_source", "file_identity", "within_range"]


def _files_of(obj: Any) -> list[str]:
    """File paths mentioned in a meta dict (keys such as 'path', 'source', 'files')."""
    out: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (str, Path)) and k in ("path", "source", "file", "source_path", "labels_path", "header"):
                if os.path.isfile(str(v)):
                    out.append(str(v))
            elif k in ("files", "paths") and isinstance(v, (list, tuple, dict)):
                values = v.values() if isinstance(v, dict) else v
                out += [str(x) for x in values if isinstance(x, (str, Path)) and os.path.isfile(str(x))]
    return out


@dataclass
class LoadedSource:
    """A loaded labeled cube.

    Attributes
    ----------
    name : scene name (registry name, or the cube file's stem)
    cube : (H, W, C) float32
    wavelengths : (C,) float64 nm, or None
    labels : (H, W) int64, 0 unlabeled, classes 1..K
    class_names : K names
    palette : (K + 1, 3) uint8
    label_values : original ids of classes 1..K
    test_labels : (H, W) int64 second map for ``split="fixed"`` (same numbering), or None
    identity : JSON-able description of where it came from
    georef : where the cube lies on the map (:class:`hsi.io.georef.GeoRef`), or None
    units : what the values are (``cube.meta["units"]``: kind, scale, source, note), or None
    fwhm : (C,) float64 band widths in nm, or None
    """

    name: str
    cube: np.ndarray
    wavelengths: np.ndarray | None
    labels: np.ndarray
    class_names: list[str]
    palette: np.ndarray
    label_values: list[int]
    test_labels: np.ndarray | None
    identity: dict[str, Any]
    georef: Any = None
    units: dict[str, Any] | None = None
    fwhm: np.ndarray | None = None


@dataclass
class SourceSpec:
    """Where a scene comes from (the DataModule's source arguments)."""

    scene: str | None = "synthetic"
    root: str | None = None
    cube_path: str | None = None
    labels_path: str | None = None
    cube_key: str | None = None
    labels_key: str | None = None
    layout: str | None = None
    download: bool = False
    scene_options: dict[str, Any] = field(default_factory=dict)
    test_labels_path: str | None = None
    test_labels_key: str | None = None
    ignore_georef: bool = False
    units: str | None = None
    scale: float | None = None
    wavelength_range: tuple[float, float] | list[float] | None = None

    def __post_init__(self) -> None:
        self.scene_options = dict(self.scene_options or {})
        if self.cube_path is not None and self.labels_path is None:
            raise OptionError("labels_path", None,
                              f"the ground-truth map of cube_path={self.cube_path!r} (both are needed)")
        if self.cube_path is None and self.scene is None:
            raise OptionError("scene", None, "a registry name such as 'synthetic', or else cube_path= and labels_path=")

    @property
    def kind(self) -> str:
        if self.cube_path is not None:
            return "files"
        return "synthetic" if self.scene == "synthetic" else "registry"

    @property
    def name(self) -> str:
        return Path(self.cube_path).stem if self.cube_path is not None else str(self.scene)

    def read(self, index: int = 0) -> LoadedSource:
        """The scene these arguments name (a collection of one: ``index`` is 0), as :func:`load_source` reads it."""
        return load_source(self)

    def known_identity(self, index: int = 0) -> dict[str, Any] | None:
        """:meth:`identity` (the collection sources' signature: ``index`` is 0)."""
        return self.identity()

    def identity(self) -> dict[str, Any] | None:
        """The identity when it is known without loading (synthetic, files); else None."""
        from hsi.io.readers import identities_of

        test = _second_labels_identity(self.test_labels_path, self.test_labels_key)
        if self.kind == "synthetic":
            return {"kind": "synthetic", "options": self.scene_options, "test_labels": test}
        if self.kind == "files":
            return {"kind": "files",
                    "cube": identities_of(self.cube_path),  # every file it stands for: an ENVI header and binary
                    "cube_key": self.cube_key, "layout": self.layout, "labels": identities_of(self.labels_path),
                    "labels_key": self.labels_key, "test_labels": test, "ignore_georef": self.ignore_georef,
                    **({"units": self.units, "scale": self.scale} if (self.units, self.scale) != (None, None) else {})}
        return None


def _second_labels_identity(path: str | None, key: str | None) -> dict[str, Any] | None:
    """``{"files": identities, "key": key}`` of a second label map (:func:`hsi.io.readers.identities_of`), or None."""
    if not path:
        return None
    from hsi.io.readers import identities_of

    return {"files": identities_of(path), "key": key}


def _renumber(labels: np.ndarray, values: list[int]) -> np.ndarray:
    lut = {v: i + 1 for i, v in enumerate(values)}
    out = np.zeros(labels.shape, dtype=np.int64)
    for v, k in lut.items():
        out[labels == v] = k
    return out


def load_source(spec: SourceSpec) -> LoadedSource:
    """Load the cube and labels described by ``spec`` (only the bands within ``spec.wavelength_range``)."""
    return within_range(_load_whole(spec), spec.wavelength_range)


def within_range(src: LoadedSource, wavelength_range: Any) -> LoadedSource:
    """``src`` with only the bands whose centre lies within ``wavelength_range`` (nm, inclusive); None: ``src``.

    Raises
    ------
    OptionError
        Naming ``wavelength_range``: the scene has no wavelengths, or none of its bands lies in the range.
    """
    if wavelength_range is None:
        return src
    import dataclasses

    from hsi.io.bands import bands_in_range

    keep = bands_in_range(src.wavelengths, wavelength_range, f"scene {src.name!r}")
    if keep.size == src.cube.shape[2]:
        return src
    return dataclasses.replace(src, cube=np.ascontiguousarray(src.cube[..., keep]),
                               wavelengths=np.asarray(src.wavelengths, dtype=np.float64)[keep],
                               fwhm=None if src.fwhm is None else np.asarray(src.fwhm, dtype=np.float64)[keep])


def _load_whole(spec: SourceSpec) -> LoadedSource:
    """The cube and labels of ``spec``, every band."""
    test_raw = None
    if spec.test_labels_path:
        from hsi.io import read_labels

        test_raw = read_labels(spec.test_labels_path, key=spec.test_labels_key)
    if spec.kind == "files":
        return _load_files(spec, test_raw)
    scene, identity = _load_scene(spec)
    values = [int(v) for v in scene.meta.get("label_values", range(1, scene.num_classes + 1))]
    return LoadedSource(
        name=scene.name, cube=np.ascontiguousarray(scene.cube.data, dtype=np.float32),
        wavelengths=scene.cube.wavelengths, labels=np.asarray(scene.labels, dtype=np.int64),
        class_names=list(scene.class_names), palette=np.asarray(scene.palette, dtype=np.uint8), label_values=values,
        test_labels=None if test_raw is None else _renumber(test_raw, values),
        identity=identity,  # type: ignore[arg-type]
        georef=None if spec.ignore_georef else scene.cube.meta.get("georef"), units=scene.cube.meta.get("units"),
        fwhm=_fwhm(scene.cube.meta))


def _load_files(spec: SourceSpec, test_raw: np.ndarray | None) -> LoadedSource:
    """A cube file and its label map; classes are the label values present, renumbered ``1..K``."""
    from hsi.errors import ShapeMismatchError
    from hsi.io import read_cube, read_labels
    from hsi.scenes.palette import scene_palette

    policy = "ignore" if spec.ignore_georef else "check"
    cube = read_cube(spec.cube_path, key=spec.cube_key, layout=spec.layout, georef=policy, units=spec.units,
                     scale=True if spec.scale is None else float(spec.scale))
    raw = read_labels(spec.labels_path, key=spec.labels_key)
    if raw.shape != cube.data.shape[:2]:
        raise ShapeMismatchError(
            f"labels_path={spec.labels_path!r} has shape {raw.shape}, the cube {spec.cube_path!r} is "
            f"{cube.data.shape[:2]} (H x W)"
        )
    check_labels_grid(cube.meta.get("georef"), spec.labels_path, spec.labels_key, spec.cube_path, policy)
    present = set(np.unique(raw[raw > 0]).tolist())
    if test_raw is not None:
        present |= set(np.unique(test_raw[test_raw > 0]).tolist())
    values = sorted(int(v) for v in present)
    names = label_names(spec.labels_path, spec.labels_key, values)
    return LoadedSource(
        name=spec.name, cube=np.ascontiguousarray(cube.data, dtype=np.float32), wavelengths=cube.wavelengths,
        labels=_renumber(raw, values), class_names=names, palette=scene_palette(names), label_values=values,
        test_labels=None if test_raw is None else _renumber(test_raw, values),
        identity=spec.identity(),  # type: ignore[arg-type]
        georef=cube.meta.get("georef"), units=cube.meta.get("units"), fwhm=_fwhm(cube.meta))


def _fwhm(meta: dict[str, Any]) -> np.ndarray | None:
    """The band widths a reader put in ``meta`` (nm), or None."""
    fwhm = meta.get("fwhm")
    return None if fwhm is None else np.asarray(fwhm, dtype=np.float64)


def label_names(path: str | Path, key: str | None, values: list[int]) -> list[str]:
    """The names of the label ``values``, each ``class_<value>`` where none is found.

    Found by :func:`hsi.io.readers.class_names_of`: a names file ``<labels>.names`` beside the
    map, else the names the map stores (an HDF5 dataset's ``class_names``, as
    :func:`hsi.io.write_h5` writes them; a GeoTIFF's category names, attribute table or
    ``hsi infer`` tag).
    """
    from hsi.io.readers import class_names_of

    stored = class_names_of(path, key) or []
    return [stored[v - 1] if 1 <= v <= len(stored) and stored[v - 1] else f"class_{v}" for v in values]


def check_labels_grid(cube_georef: Any, labels_path: Any, labels_key: str | None, cube_name: Any, policy: str) -> None:
    """Refuse a label file whose georeference puts it on another grid than its cube (:class:`~hsi.errors.GeoRefError`).

    Nothing is compared with ``policy="ignore"``, or when either file has no georeference.
    """
    if policy == "ignore" or cube_georef is None:
        return
    from hsi.io.georef import check_same_grid
    from hsi.io.labels import read_label_georef

    check_same_grid(cube_georef, read_label_georef(labels_path, labels_key, georef=policy), str(cube_name), str(labels_path))


def _load_scene(spec: SourceSpec) -> tuple[Any, dict[str, Any]]:
    """A registry scene (the synthetic one regenerated) and the identity its cache is keyed by."""
    from hsi.scenes import load_scene

    if spec.kind == "synthetic":
        return load_scene("synthetic", **spec.scene_options), spec.identity()
    from hsi.io.readers import files_of

    scene = load_scene(spec.scene, root=spec.root, download=spec.download, **spec.scene_options)
    named = _files_of(scene.cube.meta) + _files_of(scene.meta)  # each with its format's other files (ENVI binary)
    files = sorted({str(f) for name in named for f in files_of(name)})
    identity = {"kind": "registry", "name": spec.scene,
                "root": None if spec.root is None else str(Path(spec.root).expanduser().resolve()),
                "options": spec.scene_options, "files": [file_identity(f) for f in files],
                "labels_sha256": hashlib.sha256(np.ascontiguousarray(scene.labels).tobytes()).hexdigest(),
                "test_labels": _second_labels_identity(spec.test_labels_path, spec.test_labels_key)}
    return scene, identity
