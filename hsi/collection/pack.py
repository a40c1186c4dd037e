"""Packing a collection into one HDF5 file, and reading scenes back from it.

Layout (``format`` attribute :data:`~hsi.data.sources.entries.PACK_FORMAT`, version 1)::

    pack.h5
      attrs: format, format_version, scenes (JSON list of names, in order),
             split (JSON: split, test_scenes, val_scenes), hsi_version
      /<name>/cube         (H, W, C) float32, chunked (s x s x C tiles: window reads), georef attrs
                           (GeoRef.h5_attrs: crs, transform, pixel_is)
      /<name>/labels       (H, W) int64, 0 unlabeled, classes 1..K
      /<name>/wavelengths  (C,) float64 nm (absent when the scene has none)
      /<name>/ attrs: class_names (JSON, after the entry's class mapping), label_values (JSON),
                      provenance (JSON: the entry and the identity of the files it was read from)

Each scene is read as its entry would be and written as it was read (its own bands and
classes; resampling and renumbering happen when the collection is used), so a pack gives
the same batches as the separate files. The file is written under a temporary name and
moved into place when complete (:func:`hsi._atomic.atomic_path`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hsi.data.sources.entries import read_collection
from hsi.data.sources.records import PACK_FORMAT, SceneEntry

__all__ = ["PACK_SUFFIXES", "PACK_VERSION", "pack_collection"]

PACK_VERSION = 1
#: the suffixes of a pack file (:func:`hsi.data.sources.entries.read_collection` reads such a file as a pack)
PACK_SUFFIXES = (".h5", ".hdf5", ".he5")


def _write_scene(handle: Any, entry: SceneEntry, src: Any) -> None:
    """One scene's group."""
    from hsi.io.writers.hdf5 import chunk_shape

    group = handle.create_group(entry.name)
    cube = np.ascontiguousarray(src.cube, dtype=np.float32)
    ds = group.create_dataset("cube", data=cube, chunks=chunk_shape(cube.shape, 4), compression="gzip",
                              compression_opts=4, shuffle=True)
    if src.georef is not None:
        for key, value in src.georef.h5_attrs().items():
            ds.attrs[key] = value
    group.create_dataset("labels", data=np.asarray(src.labels, dtype=np.int64),
                         chunks=chunk_shape(src.labels.shape + (1,), 8)[:2], compression="gzip", compression_opts=4)
    if src.wavelengths is not None:
        group.create_dataset("wavelengths", data=np.asarray(src.wavelengths, dtype=np.float64))
    if src.fwhm is not None:
        group.create_dataset("fwhm", data=np.asarray(src.fwhm, dtype=np.float64))
    if src.units is not None:  # the values are stored as read (any scale applied): what they are travels with them
        group.attrs["units"] = json.dumps(src.units)
    names = [str(entry.classes.get(n, n)) for n in src.class_names]
    group.attrs["class_names"] = json.dumps(names)
    group.attrs["label_values"] = json.dumps([int(v) for v in src.label_values])
    group.attrs["provenance"] = json.dumps({"entry": entry.to_dict(), "identity": src.identity}, default=str)


def pack_collection(scenes: Any, out: str | Path, *, overwrite: bool = False, download: bool = False) -> Path:
    """Write the collection ``scenes`` into the HDF5 file ``out``; returns its path.

    Parameters
    ----------
    scenes : Collection, YAML path, list or mapping
        Anything :func:`~hsi.data.sources.entries.read_collection` reads.
    out : str or Path
        The pack file (``.h5``).
    overwrite : bool
        Replace an existing ``out``.
    download : bool
        Fetch registry scenes' missing files.

    Raises
    ------
    OptionError
        ``out`` does not end in one of :data:`PACK_SUFFIXES`.
    RunOutputError
        ``out`` exists and ``overwrite`` is False.
    """
    import h5py

    import hsi
    from hsi._atomic import atomic_path
    from hsi.data.sources.load import load_entry
    from hsi.errors import RunOutputError

    out = Path(out)
    if out.suffix.lower() not in PACK_SUFFIXES:  # before any scene is read: hsi train --scenes knows a pack by it
        from hsi.errors import OptionError

        raise OptionError("out", str(out), f"a pack file name ending in {'/'.join(PACK_SUFFIXES)} (hsi train "
                                           f"--scenes reads a pack by its suffix)")
    col = read_collection(scenes)
    if out.exists() and not overwrite:
        raise RunOutputError(f"{out}: exists; give --overwrite to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out, suffix=".h5") as tmp:
        with h5py.File(tmp, "w") as handle:
            handle.attrs["format"] = PACK_FORMAT
            handle.attrs["format_version"] = PACK_VERSION
            handle.attrs["hsi_version"] = hsi.__version__
            handle.attrs["scenes"] = json.dumps(col.names)
            handle.attrs["split"] = json.dumps({"split": col.split, "test_scenes": list(col.test_scenes),
                                                "val_scenes": list(col.val_scenes), "preprocess": col.preprocess})
            for entry in col.entries:
                _write_scene(handle, entry, load_entry(entry, download=download))
    return out
