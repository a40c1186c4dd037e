"""Loading one scene of a collection, and bringing it onto the collection's bands and classes.

:func:`load_entry` reads an entry as the single-scene DataModule would
(:func:`hsi.data.scene_source.load_source`) or from its pack group;
:func:`prepare` resamples its cube onto the common grid, renumbers its labels into the
union's classes and unlabels pixels with a non-finite spectrum (as the single-scene build
does), giving the :class:`~hsi.data.scene_source.LoadedSource` its cache entry is built from.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from hsi.collection.bands import resample
from hsi.collection.classes import mapped_names, renumber
from hsi.collection.records import SceneEntry
from hsi.data.scene_source import LoadedSource, SourceSpec, load_source

__all__ = ["entry_spec", "load_entry", "prepare"]


def entry_spec(entry: SceneEntry, download: bool = False, ignore_georef: bool = False) -> SourceSpec:
    """The single-scene :class:`SourceSpec` of a registry or file entry."""
    if entry.kind == "files":
        return SourceSpec(scene=None, cube_path=entry.cube, labels_path=entry.labels, cube_key=entry.cube_key,
                          labels_key=entry.labels_key, layout=entry.layout, ignore_georef=ignore_georef)
    return SourceSpec(scene=entry.scene, root=entry.root, scene_options=dict(entry.scene_options), download=download,
                      ignore_georef=ignore_georef)


def load_entry(entry: SceneEntry, download: bool = False, ignore_georef: bool = False) -> LoadedSource:
    """The scene of ``entry`` as read (its own bands, classes ``1..K`` of its own names), named ``entry.name``."""
    if entry.kind == "pack":
        from hsi.collection.packfile import read_pack_scene

        src = read_pack_scene(entry.pack, entry.name, ignore_georef=ignore_georef)
    else:
        src = load_source(entry_spec(entry, download, ignore_georef))
    identity = {"entry": entry.to_dict(), "source": src.identity}
    return dataclasses.replace(src, name=entry.name, identity=identity)


def prepare(src: LoadedSource, entry: SceneEntry, grid: np.ndarray | None, union: list[str],
            palette: np.ndarray) -> LoadedSource:
    """``src`` on the collection's bands (``grid``, None: its own) and classes (``union``), no-data pixels unlabeled."""
    from hsi.data.build import exclude_nonfinite
    from hsi.preprocess._base import nodata_mask

    names = mapped_names(src.class_names, entry.classes, entry.name)
    nodata = nodata_mask(src.cube)  # of the cube as read: the pixels the collection's split left unlabeled
    labels = renumber(src.labels, names, union)
    cube, wl = src.cube, src.wavelengths
    if grid is not None and wl is not None:
        cube, wl = resample(cube, wl, grid, f"scene {entry.name!r}"), np.asarray(grid, dtype=np.float64)
    k = len(union)
    out = dataclasses.replace(src, cube=np.ascontiguousarray(cube, dtype=np.float32), wavelengths=wl, labels=labels,
                              class_names=list(union), palette=np.asarray(palette, dtype=np.uint8),
                              label_values=list(range(1, k + 1)), test_labels=None)
    if nodata is not None:
        out, _ = exclude_nonfinite(out, ~nodata)
    return out


def scene_facts(src: LoadedSource, entry: SceneEntry) -> dict[str, Any]:
    """What the collection needs of a scene before any is prepared: bands, wavelengths, (mapped) class names."""
    return {"name": entry.name, "n_bands": int(src.cube.shape[2]), "shape": list(src.labels.shape),
            "wavelengths": None if src.wavelengths is None else np.asarray(src.wavelengths, np.float64).tolist(),
            "class_names": mapped_names(src.class_names, entry.classes, entry.name),
            "georef": None if src.georef is None else src.georef.to_dict()}
