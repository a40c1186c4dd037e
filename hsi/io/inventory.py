"""List what a file holds (names, shapes, dtypes) without loading the data."""

from __future__ import annotations

from pathlib import Path

from hsi.io.discovery import ArrayInfo
from hsi.io.dispatch import file_kind


def list_arrays(path: str | Path) -> list[ArrayInfo]:
    """Arrays in ``path``: MATLAB variables, HDF5 datasets, or the one ENVI/ERDAS image.

    Shapes are as the readers see them (MATLAB v7.3 in MATLAB orientation; ENVI/ERDAS as
    H x W x C).
    """
    p = Path(path)
    kind = file_kind(p)
    if kind == "mat":
        from hsi.io.matlab import is_v73, v5_infos

        if not is_v73(p):
            return v5_infos(p)
    if kind in ("mat", "hdf5"):
        from hsi.io.hdf5 import open_file, walk

        matlab = False
        if kind == "mat":
            from hsi.io.matlab import matlab_marks

            matlab = matlab_marks(p) is not None
        with open_file(p) as handle:
            return walk(handle, matlab=matlab)[0]
    if kind == "geotiff":  # a single-band GeoTIFF is a label map, which open_source refuses as a cube
        from hsi.io.geotiff import geotiff_info

        info = geotiff_info(p, georef="ignore")
        return [ArrayInfo(p.name, tuple(info["shape"]), str(info["dtype"]))]
    from hsi.io.dispatch import open_source

    source = open_source(p)
    try:
        return [ArrayInfo(source.path.name, tuple(source.array.shape), str(source.array.dtype))]
    finally:
        source.close()
