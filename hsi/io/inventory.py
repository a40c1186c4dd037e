"""List what a file holds (names, shapes, dtypes) without loading the data."""

from __future__ import annotations

from pathlib import Path

from hsi.io.discovery import ArrayInfo
from hsi.io.readers import find_reader


def list_arrays(path: str | Path) -> list[ArrayInfo]:
    """Arrays in ``path``: MATLAB variables, HDF5 datasets, the one image of ENVI/ERDAS/GeoTIFF/``.npy``.

    An ``.npy`` scene lists its ``cube.npy`` and ``labels.npy``.

    Shapes are as the readers see them (MATLAB v7.3 in MATLAB orientation; ENVI/ERDAS as
    H x W x C; a single-band GeoTIFF as (H, W)); each format's reader
    (:meth:`hsi.io.readers.Reader.list_arrays`) lists them.
    """
    p = Path(path)
    return find_reader(p).list_arrays(p)
