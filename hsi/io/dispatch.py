"""Choose a reader from the file name (and, for odd extensions, the file's first bytes)."""

from __future__ import annotations

from pathlib import Path

from hsi.errors import CubeFormatError, DatasetNotFoundError
from hsi.io.formats import BINARY_EXT, ENVI_EXT, ERDAS_EXT, GEOTIFF_EXT, HDF5_EXT, MAT_EXT, SUPPORTED
from hsi.io.source import RawSource

__all__ = ["BINARY_EXT", "ENVI_EXT", "ERDAS_EXT", "GEOTIFF_EXT", "HDF5_EXT", "MAT_EXT", "SUPPORTED", "file_kind",
           "open_source"]


def file_kind(path: str | Path) -> str:
    """One of "mat", "hdf5", "envi", "erdas", "geotiff"; raises for missing or unsupported files."""
    from hsi.io.envi import find_header
    from hsi.io.erdas import is_erdas

    p = Path(path)
    if not p.exists():
        raise DatasetNotFoundError(f"{p}: no such file")
    if p.is_dir():
        raise CubeFormatError(f"{p}: is a directory, expected a file ({SUPPORTED})")
    ext = p.suffix.lower()
    if ext in MAT_EXT:
        return "mat"
    if ext in HDF5_EXT:
        return "hdf5"
    if ext in ENVI_EXT:
        return "envi"
    if ext in GEOTIFF_EXT:
        return "geotiff"
    if ext in ERDAS_EXT or is_erdas(p):
        return "erdas"
    if find_header(p) is not None:
        return "envi"
    if ext in BINARY_EXT:
        raise DatasetNotFoundError(
            f"{p}: looks like an ENVI binary but no header was found beside it "
            f"(tried {p.name}.hdr and {p.stem}.hdr)"
        )
    raise CubeFormatError(f"{p}: unsupported file type {p.suffix or '(no extension)'!r}; supported: {SUPPORTED}")


def open_source(path: str | Path, key: str | None = None, georef: str = "check") -> RawSource:
    """Open ``path`` with the reader its kind calls for, returning the raw 3-D source.

    ``georef`` ("check" or "ignore", :data:`hsi.io.georef.GEOREF_POLICIES`): "ignore" reads
    no georeference at all, so a broken one cannot stop the read; the georeference found is
    ``source.extra["georef"]`` (a :class:`hsi.io.georef.GeoRef` or None).
    """
    from hsi.io.georef import check_policy

    check_policy(georef)
    kind = file_kind(path)
    if kind == "mat":
        from hsi.io.matlab import open_mat

        return open_mat(Path(path), key)
    if kind == "hdf5":
        from hsi.io.hdf5 import open_hdf5

        return open_hdf5(Path(path), key, matlab=False, georef=georef)
    if kind == "envi":
        from hsi.io.envi import open_envi

        source = open_envi(Path(path), georef=georef)
    elif kind == "geotiff":
        from hsi.io.geotiff import open_geotiff

        source = open_geotiff(Path(path), georef=georef)
    else:
        from hsi.io.erdas import open_erdas

        source = open_erdas(Path(path))
    if key is not None:
        source.close()
        raise CubeFormatError(f"{path}: a {source.format} file holds one image; key={key!r} does not apply")
    return source
