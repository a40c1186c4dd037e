"""Label maps: (H, W) int64 with 0 = unlabeled, from the same formats as cubes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hsi.errors import CubeFormatError
from hsi.io.discovery import ArrayInfo
from hsi.io.dispatch import file_kind


def _integer_like(info: ArrayInfo) -> bool:
    return info.dtype == "bool" or np.issubdtype(np.dtype(info.dtype), np.integer)


def to_label_map(array: np.ndarray, source: str) -> np.ndarray:
    """Check a label array and return it as C-contiguous (H, W) int64.

    Single-band images (H, W, 1) are squeezed; float arrays must hold whole numbers.
    """
    array = np.asarray(array)
    if array.ndim == 3 and 1 in array.shape:
        array = array.reshape([s for s in array.shape if s != 1] if array.shape.count(1) == 1 else array.shape)
    if array.ndim != 2:
        raise CubeFormatError(
            f"{source}: shape {array.shape} is {array.ndim}-D; a label map must be 2-D (H x W) "
            f"(use read_cube for cubes)"
        )
    if array.dtype == np.bool_ or np.issubdtype(array.dtype, np.integer):
        return np.ascontiguousarray(array, dtype=np.int64)
    if not np.issubdtype(array.dtype, np.floating):
        raise CubeFormatError(f"{source}: label dtype {array.dtype} is not numeric")
    finite = np.isfinite(array)
    if not finite.all():
        raise CubeFormatError(f"{source}: {int((~finite).sum())} non-finite label value(s); labels must be integers")
    fractional = array != np.round(array)
    if fractional.any():
        first = tuple(int(i) for i in np.argwhere(fractional)[0])
        raise CubeFormatError(
            f"{source}: {int(fractional.sum())} non-integral label value(s), first {array[first]!r} at {first}; "
            f"labels must be whole numbers"
        )
    return np.ascontiguousarray(array, dtype=np.int64)


def read_labels(path: str | Path, key: str | None = None) -> np.ndarray:
    """Read a label map as (H, W) int64, 0 = unlabeled.

    Formats as :func:`hsi.io.read_cube`. With ``key=None`` the only 2-D array is chosen
    (integer arrays first when there are several); MATLAB v7.3 maps come out in MATLAB's
    orientation (PaviaU: 610 x 340). ENVI and ERDAS single-band images are read whole.
    """
    p = Path(path)
    kind = file_kind(p)
    name = None
    if kind == "mat":
        from hsi.io.matlab import load_label_array

        name, array = load_label_array(p, key, _integer_like)
    elif kind == "hdf5":
        from hsi.io.hdf5 import load_label_array

        name, array = load_label_array(p, key, matlab=False, prefer=_integer_like)
    else:
        from hsi.io.dispatch import open_source

        source = open_source(p, key)
        try:
            array = np.array(source.array)
        finally:
            source.close()
    where = f"{p} key {name!r}" if name else str(p)
    return to_label_map(array, where)
