"""ERDAS 7.4 LAN / GIS images (``HEAD74`` 128-byte header, BIL data) through ``spectral``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import spectral.io.erdas as spy_erdas
from spectral.utilities.errors import SpyException

from hsi.errors import CubeFormatError
from hsi.io.source import RawSource

_MAGIC = (b"HEAD74", b"HEADER")


def is_erdas(path: Path) -> bool:
    """True when the file starts with an ERDAS 7.x magic word."""
    try:
        with open(path, "rb") as handle:
            return handle.read(6) in _MAGIC
    except OSError:
        return False


def open_erdas(path: Path) -> RawSource:
    """Raw HWC memory map of a LAN/GIS file (8-bit data read as unsigned, as ERDAS defines it)."""
    if not is_erdas(path):
        raise CubeFormatError(f"{path}: not an ERDAS LAN/GIS file (no HEAD74/HEADER magic at the start)")
    try:
        image = spy_erdas.open(str(path))
    except (SpyException, OSError, ValueError, KeyError, TypeError, IndexError) as err:
        raise CubeFormatError(f"{path}: could not read ERDAS header ({type(err).__name__}: {err})") from err
    expected = image.offset + image.nrows * image.ncols * image.nbands * image.sample_size
    actual = path.stat().st_size
    if actual < expected:
        raise CubeFormatError(
            f"{path}: file is {actual} bytes but its ERDAS header declares {expected} bytes "
            f"({image.nrows} rows x {image.ncols} columns x {image.nbands} bands); the file is truncated"
        )
    try:
        array = image.open_memmap(interleave="bip", writable=False)
    except (OSError, ValueError) as err:
        raise CubeFormatError(f"{path}: could not memory-map ERDAS data ({err})") from err
    if array.dtype == np.int8:
        array = array.view(np.uint8)
    return RawSource(path, "erdas", array, layout="HWC")
