"""Loading one scene of a collection (:func:`load_entry`, with the entry's declarations, :func:`declare`), and
bringing it onto the collection's bands and classes (:func:`prepare`: the source its cache entry is built from).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from hsi.data.sources.bands import resample
from hsi.data.sources.classes import mapped_names, renumber
from hsi.data.sources.records import SceneEntry
from hsi.data.scene_source import LoadedSource, SourceSpec, load_source
from hsi.preprocess.shift import value_level

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
        from hsi.data.sources.packfile import read_pack_scene

        src = read_pack_scene(entry.pack, entry.name, ignore_georef=ignore_georef)
    else:
        src = load_source(entry_spec(entry, download, ignore_georef))
    identity = {"entry": entry.to_dict(), "source": src.identity}
    return declare(dataclasses.replace(src, name=entry.name, identity=identity), entry)


def declare(src: LoadedSource, entry: SceneEntry) -> LoadedSource:
    """``src`` with the entry's declarations applied: values divided by ``scale``; ``units``, ``wavelengths`` and
    ``fwhm`` as declared (:class:`~hsi.errors.CollectionError` for a list that does not fit the band count)."""
    from hsi.io.units import declared_units

    if entry.scale is None and entry.units is None and entry.wavelengths is None and entry.fwhm is None:
        return src
    bands = int(src.cube.shape[2])
    wavelengths = src.wavelengths if entry.wavelengths is None else \
        _replacing(src.wavelengths, _per_band(entry.wavelengths, bands, entry.name, "wavelengths", single=False),
                   entry, "wavelengths")
    fwhm = src.fwhm if entry.fwhm is None else \
        _replacing(src.fwhm, _per_band(entry.fwhm, bands, entry.name, "fwhm", single=True), entry, "fwhm")
    cube, units = src.cube, src.units
    if entry.scale is not None:
        cube = np.ascontiguousarray(src.cube / np.float32(entry.scale), dtype=np.float32)
    if entry.units is not None or entry.scale is not None:
        kind = entry.units or (units or {}).get("kind") or "unknown"
        note = "declared in the collection entry" + (f": values divided by {entry.scale:g}" if entry.scale else "")
        units = declared_units(kind, entry.scale, note, source="user")
        _check_level(cube, entry)
    return dataclasses.replace(src, cube=cube, wavelengths=wavelengths, fwhm=fwhm, units=units)


def _replacing(own: Any, declared: np.ndarray, entry: SceneEntry, key: str) -> np.ndarray:
    """``declared``, warning (:class:`~hsi.errors.UnitsWarning`) when it replaces different values of the file's own.

    An entry's ``wavelengths:`` / ``fwhm:`` is for a cube whose file has none; where the file has
    its own and they differ, the entry wins (an explicit override), but never silently.
    """
    import warnings

    from hsi.errors import UnitsWarning

    if own is None:
        return declared
    own = np.asarray(own, dtype=np.float64).ravel()
    differ = ~np.isclose(own, declared, rtol=1e-6, atol=1e-3) if own.shape == declared.shape else \
        np.ones(declared.shape, dtype=bool)
    if not differ.any():
        return declared
    first = int(np.flatnonzero(differ)[0])
    warnings.warn(
        f"scene {entry.name!r}: {key}: the collection entry's values ({declared.min():.6g}-{declared.max():.6g} nm) "
        f"replace the file's own ({own.min():.6g}-{own.max():.6g} nm, {entry.cube or entry.pack or entry.scene}), "
        f"which differ (band {first}: {own[first]:.6g} nm in the file, {declared[first]:.6g} nm declared); remove "
        f"{key}: from the entry to use the file's", UnitsWarning, stacklevel=4)
    return declared


def _check_level(cube: np.ndarray, entry: SceneEntry) -> None:
    """Warn (:class:`~hsi.errors.UnitsWarning`) when an entry declares reflectance for values (after its
    ``scale:``) whose typical level is far above 0-1 (:func:`hsi.io.units.level_problem`)."""
    import warnings

    from hsi.errors import UnitsWarning
    from hsi.io.units import level_problem, typical_level

    if entry.units != "reflectance":
        return
    flat = np.asarray(cube).reshape(-1, cube.shape[-1])
    sample = flat[:: max(1, flat.shape[0] // 1024)]  # about a thousand pixels, spread over the scene
    problem = level_problem(typical_level(sample), "the collection entry declares units: reflectance",
                            divisor=entry.scale, advice="give the entry scale: {0}")
    if problem is not None:
        warnings.warn(f"scene {entry.name!r}: {problem}", UnitsWarning, stacklevel=4)


def _per_band(values: tuple[float, ...], bands: int, scene: str, key: str, single: bool) -> np.ndarray:
    """A declared per-band list (or one value for all bands when ``single``) as a (C,) float64 array."""
    from hsi.errors import CollectionError

    if single and len(values) == 1:
        return np.full(bands, values[0], dtype=np.float64)
    if len(values) != bands:
        raise CollectionError(f"scene {scene!r}: {key}: {len(values)} values declared for a cube of {bands} bands")
    return np.asarray(values, dtype=np.float64)


def prepare(src: LoadedSource, entry: SceneEntry, grid: np.ndarray | None, union: list[str],
            palette: np.ndarray, grid_fwhm: np.ndarray | None = None) -> LoadedSource:
    """``src`` on the collection's bands (``grid``, None: its own; widths ``grid_fwhm``) and classes (``union``; a
    single scene's test map too), no-data pixels unlabeled (the collection's state counted them)."""
    from hsi.preprocess._base import nodata_mask

    names = mapped_names(src.class_names, entry.classes, entry.name)
    nodata = nodata_mask(src.cube)  # of the cube as read: the pixels the collection's split left unlabeled
    maps = [None if lab is None else renumber(lab, names, union) for lab in (src.labels, src.test_labels)]
    if nodata is not None:
        maps = [None if lab is None else np.where(nodata, 0, lab) for lab in maps]
    cube, wl = src.cube, src.wavelengths
    if grid is not None and wl is not None:
        cube = resample(cube, wl, grid, f"scene {entry.name!r}", fwhm_from=src.fwhm, fwhm_to=grid_fwhm)
        wl = np.asarray(grid, dtype=np.float64)
    return dataclasses.replace(src, cube=np.ascontiguousarray(cube, dtype=np.float32), wavelengths=wl,
                               labels=maps[0], test_labels=maps[1], class_names=list(union),
                               palette=np.asarray(palette, dtype=np.uint8), label_values=list(range(1, len(union) + 1)))


def scene_facts(src: LoadedSource, entry: SceneEntry) -> dict[str, Any]:
    """What the collection needs of a scene before any is prepared: bands, wavelengths and widths, (mapped) class
    names, units and the typical size of its values (:func:`hsi.preprocess.shift.value_level`)."""
    return {"name": entry.name, "n_bands": int(src.cube.shape[2]), "shape": list(src.labels.shape),
            "wavelengths": None if src.wavelengths is None else np.asarray(src.wavelengths, np.float64).tolist(),
            "fwhm": None if src.fwhm is None else np.asarray(src.fwhm, np.float64).tolist(),
            "class_names": mapped_names(src.class_names, entry.classes, entry.name),
            "georef": None if src.georef is None else src.georef.to_dict(),
            "units": src.units, "value_level": value_level(src.cube)}
