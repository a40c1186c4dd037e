"""Choose a reader from the file name (and, for odd extensions, the file's first bytes)."""

from __future__ import annotations

from pathlib import Path

from hsi.errors import CubeFormatError, DatasetNotFoundError
from hsi.io.source import RawSource

MAT_EXT = frozenset({".mat"})
HDF5_EXT = frozenset({".h5", ".hdf5", ".he5", ".hdf"})
ENVI_EXT = frozenset({".hdr"})
ERDAS_EXT = frozenset({".lan", ".gis"})
BINARY_EXT = frozenset({".img", ".dat", ".raw", ".bsq", ".bil", ".bip", ".bin"})
SUPPORTED = (
    ".mat (MATLAB v5 or v7.3), .h5/.hdf5/.he5 (HDF5), ENVI (.hdr header + binary such as "
    ".img/.dat/.raw/.bsq/.bil/.bip), ERDAS .lan/.gis"
)


def file_kind(path: str | Path) -> str:
    """One of "mat", "hdf5", "envi", "erdas"; raises for missing or unsupported files."""
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


def open_source(path: str | Path, key: str | None = None) -> RawSource:
    """Open ``path`` with the reader its kind calls for, returning the raw 3-D source."""
    kind = file_kind(path)
    if kind == "mat":
        from hsi.io.matlab import open_mat

        return open_mat(Path(path), key)
    if kind == "hdf5":
        from hsi.io.hdf5 import open_hdf5

        return open_hdf5(Path(path), key, matlab=False)
    if kind == "envi":
        from hsi.io.envi import open_envi

        source = open_envi(Path(path))
    else:
        from hsi.io.erdas import open_erdas

        source = open_erdas(Path(path))
    if key is not None:
        source.close()
        raise CubeFormatError(f"{path}: a {source.format} file holds one image; key={key!r} does not apply")
    return source
