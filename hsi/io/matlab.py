"""MATLAB .mat files: v5 through ``scipy.io``, v7.3 (HDF5 inside) through :mod:`hsi.io.hdf5`."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import h5py
import numpy as np
import scipy.io
from scipy.io.matlab import MatReadError

from hsi.errors import CubeFormatError
from hsi.io.discovery import ArrayInfo, choose, is_vector, is_wavelength_name
from hsi.io.source import RawSource

#: What scipy raises on truncated or corrupt files (turned into CubeFormatError).
READ_ERRORS = (
    OSError, ValueError, TypeError, EOFError, KeyError, IndexError, AttributeError,
    NotImplementedError, UnicodeDecodeError, OverflowError, MemoryError, zlib.error,
    struct.error, MatReadError,
)

_CLASS_DTYPE = {
    "double": "float64", "single": "float32", "logical": "bool",
    **{f"{s}int{b}": f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)},
}


def is_v73(path: Path) -> bool:
    """True when the .mat file is HDF5 inside (MATLAB ``-v7.3``, or a plain HDF5 file named .mat)."""
    try:
        return bool(h5py.is_hdf5(str(path)))
    except OSError:
        return False


def matlab_marks(path: Path) -> str | None:
    """How an HDF5 ``.mat`` file shows that MATLAB wrote it, or None for a plain HDF5 file.

    MATLAB ``-v7.3`` files start with a 512-byte user block whose text begins with
    ``MATLAB`` and tag their variables with a ``MATLAB_class`` attribute. A file that has
    neither (e.g. written by h5py and named ``.mat``) holds arrays in C order and is read
    as stored, not transposed.
    """
    with open(path, "rb") as fh:
        head = fh.read(128)
    if head.startswith(b"MATLAB"):
        return "MATLAB 512-byte header"
    from hsi.io.hdf5 import open_file

    found: list[str] = []

    def visit(name: str, obj) -> bool | None:
        if "MATLAB_class" in obj.attrs:
            found.append(name)
            return True
        return None

    with open_file(path) as handle:
        handle.visititems(visit)
    return f"MATLAB_class attribute on {found[0]!r}" if found else None


def _hdf5_mat_kind(path: Path) -> tuple[bool, str]:
    """``(matlab, decision)``: whether to put arrays back in MATLAB's orientation, and why."""
    marks = matlab_marks(path)
    if marks is not None:
        return True, f"MATLAB v7.3 ({marks}): arrays transposed back to MATLAB's orientation"
    return False, "HDF5 without MATLAB's header or MATLAB_class attributes: arrays read as stored"


def v5_infos(path: Path) -> list[ArrayInfo]:
    """Variables of a v5 file from its headers (no data loaded)."""
    try:
        entries = scipy.io.whosmat(str(path))
    except READ_ERRORS as err:
        raise CubeFormatError(f"{path}: not a readable MATLAB .mat file ({type(err).__name__}: {err})") from err
    infos = []
    for name, shape, cls in entries:
        dtype = _CLASS_DTYPE.get(cls)
        infos.append(ArrayInfo(name, tuple(int(s) for s in shape), dtype or cls, numeric=dtype is not None))
    return infos


def _load(path: Path, names: list[str]) -> dict:
    try:
        return scipy.io.loadmat(str(path), variable_names=names)
    except READ_ERRORS as err:
        raise CubeFormatError(
            f"{path}: corrupt or truncated MATLAB .mat file ({type(err).__name__}: {err})"
        ) from err


def _wavelength_names(infos: list[ArrayInfo], skip: str) -> list[str]:
    return [i.name for i in infos if i.name != skip and is_wavelength_name(i.name) and is_vector(i)]


def open_mat(path: Path, key: str | None) -> RawSource:
    """Raw cube of a .mat file; v7.3 arrays come back in MATLAB's orientation."""
    if is_v73(path):
        from hsi.io.hdf5 import open_hdf5

        matlab, decision = _hdf5_mat_kind(path)
        source = open_hdf5(path, key, matlab=matlab)
        source.extra["mat_container"] = decision
        return source
    infos = v5_infos(path)
    info = choose(infos, key, 3, str(path), "cube")
    wl_names = _wavelength_names(infos, info.name)
    data = _load(path, [info.name, *wl_names])
    if info.name not in data:
        raise CubeFormatError(f"{path}: variable {info.name!r} listed but could not be loaded")
    array = np.asarray(data[info.name])
    if array.dtype.kind == "c":
        raise CubeFormatError(
            f"{path}: variable {info.name!r} holds complex values ({array.dtype}); a cube must be real-valued "
            f"(save abs(x) or real(x) if that is what you mean)"
        )
    if info.dtype == "bool" or array.dtype == np.bool_:
        raise CubeFormatError(
            f"{path}: variable {info.name!r} is a MATLAB logical (boolean) array, a mask, not spectral data; "
            f"a cube must hold numbers (read a mask with read_labels)"
        )
    if not info.numeric or array.dtype.kind not in "biuf":
        raise CubeFormatError(f"{path}: variable {info.name!r} is {info.dtype}, not a numeric array")
    candidates = [
        (f"variable {n!r}", np.asarray(data[n], dtype=np.float64).ravel(), None) for n in wl_names if n in data
    ]
    return RawSource(path, "mat-v5", array, key=info.name, wavelength_candidates=candidates)


def load_label_array(path: Path, key: str | None, prefer) -> tuple[str, np.ndarray]:
    """``(name, array)`` of the label map in a .mat file (v7.3 in MATLAB orientation)."""
    if is_v73(path):
        from hsi.io.hdf5 import load_label_array as h5_labels

        return h5_labels(path, key, matlab=_hdf5_mat_kind(path)[0], prefer=prefer)
    infos = v5_infos(path)
    info = choose(infos, key, 2, str(path), "label map", prefer=prefer)
    data = _load(path, [info.name])
    if info.name not in data:
        raise CubeFormatError(f"{path}: variable {info.name!r} listed but could not be loaded")
    return info.name, np.asarray(data[info.name])
