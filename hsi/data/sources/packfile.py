"""Reading a pack file (:mod:`hsi.collection.pack` describes its layout): its collection, and one scene."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hsi.data.sources.records import PACK_FORMAT, Collection, SceneEntry
from hsi.errors import CollectionError, CubeFormatError, DatasetNotFoundError

__all__ = ["read_pack_collection", "read_pack_scene"]


def _open(path: str | Path) -> Any:
    import h5py

    path = Path(path)
    if not path.is_file():
        raise DatasetNotFoundError(f"scenes: {str(path)!r}: no such pack file")
    try:
        handle = h5py.File(path, "r")
    except OSError as err:
        raise CollectionError(f"scenes: {str(path)!r}: not a readable HDF5 file ({err})") from None
    if handle.attrs.get("format") != PACK_FORMAT:
        handle.close()
        raise CollectionError(f"scenes: {str(path)!r}: an HDF5 file but not a collection pack (no format="
                              f"{PACK_FORMAT!r} attribute); write one with hsi convert --collection FILE.yaml --to h5")
    return handle


def _read(group: Any, dataset: str, path: str | Path, dtype: Any) -> np.ndarray:
    """The whole of ``group[dataset]`` as ``dtype``; a corrupt chunk or a missing dataset: :class:`CubeFormatError`."""
    where = f"{group.name.lstrip('/')}/{dataset}"
    try:
        return np.asarray(group[dataset][...], dtype=dtype)
    except KeyError as err:
        raise CubeFormatError(f"{path}: dataset {where!r} is missing from the pack; pack the collection again "
                              f"(hsi convert --collection FILE.yaml --to h5 PACK.h5)") from err
    except (OSError, ValueError) as err:  # h5py: "filter returned failure during read" for a corrupt gzip chunk
        raise CubeFormatError(f"{path}: dataset {where!r} cannot be read ({err}); a chunk of the pack is corrupt or "
                              f"the file is truncated; pack the collection again (hsi convert --collection "
                              f"FILE.yaml --to h5 PACK.h5)") from err


def read_pack_collection(path: str | Path) -> Collection:
    """The collection a pack holds: one entry per group (in packing order), and its split."""
    with _open(path) as handle:
        names = json.loads(handle.attrs["scenes"])
        split = json.loads(handle.attrs["split"])
    entries = tuple(SceneEntry(name=n, pack=str(Path(path))) for n in names)
    return Collection(entries, split["split"], tuple(split["test_scenes"]), tuple(split["val_scenes"]), str(path),
                      split.get("preprocess", "collection"))


def read_pack_scene(path: str | Path, name: str, ignore_georef: bool = False) -> Any:
    """Scene ``name`` of a pack as a :class:`~hsi.data.scene_source.LoadedSource` (classes already mapped)."""
    from hsi.data.scene_source import LoadedSource, file_identity
    from hsi.io.georef import from_h5_attrs
    from hsi.scenes.palette import scene_palette

    with _open(path) as handle:
        if name not in handle:
            raise CollectionError(f"scenes: {str(path)!r}: no scene {name!r} (scenes: {', '.join(handle)})")
        group = handle[name]
        cube = _read(group, "cube", path, np.float32)
        georef = None if ignore_georef else from_h5_attrs(group["cube"].attrs, f"{path} scene {name!r}")
        labels = _read(group, "labels", path, np.int64)
        wl = _read(group, "wavelengths", path, np.float64) if "wavelengths" in group else None
        fwhm = _read(group, "fwhm", path, np.float64) if "fwhm" in group else None
        units = json.loads(group.attrs["units"]) if "units" in group.attrs else None
        names = json.loads(group.attrs["class_names"])
        values = json.loads(group.attrs["label_values"])
    identity = {"kind": "pack", "pack": file_identity(path), "scene": name}
    return LoadedSource(name=name, cube=cube, wavelengths=wl, labels=labels, class_names=names,
                        palette=scene_palette(names), label_values=values, test_labels=None, identity=identity,
                        georef=georef, units=units, fwhm=fwhm)
