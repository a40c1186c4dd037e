"""List what a file holds (names, shapes, dtypes) without loading the data."""

from __future__ import annotations

from pathlib import Path

from hsi._paths import user_path
from hsi.errors import CubeFormatError
from hsi.io.discovery import ArrayInfo
from hsi.io.readers import find_reader


def list_arrays(path: str | Path) -> list[ArrayInfo]:
    """Arrays in ``path``: MATLAB variables, HDF5 datasets, the one image of ENVI/ERDAS/GeoTIFF/``.npy``.

    An ``.npy`` scene lists its ``cube.npy`` and ``labels.npy``.

    Shapes are as the readers see them (MATLAB v7.3 in MATLAB orientation; ENVI/ERDAS as
    H x W x C; a single-band GeoTIFF as (H, W)); each format's reader
    (:meth:`hsi.io.readers.Reader.list_arrays`) lists them; anything but a list of
    :class:`~hsi.io.discovery.ArrayInfo` from it is a :class:`~hsi.errors.CubeFormatError` naming the reader.
    """
    p = Path(path)
    reader = find_reader(p)
    with user_path(p, f"read it (reader {reader.name!r})"):  # a reader's OSError names the file and the reader
        arrays = reader.list_arrays(p)
    if not isinstance(arrays, list) or not all(isinstance(a, ArrayInfo) for a in arrays):
        found = type(arrays).__name__ if not isinstance(arrays, list) else \
            f"a list of {', '.join(sorted({type(a).__name__ for a in arrays}))}"
        raise CubeFormatError(f"{p}: the {reader.name!r} reader's list_arrays returned {found}, expected a list "
                              f"of hsi.io.discovery.ArrayInfo")
    return arrays
