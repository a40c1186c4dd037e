"""HDF5 files (.h5/.hdf5) and MATLAB v7.3 files, read lazily through h5py."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from hsi.errors import CubeFormatError
from hsi.io.discovery import ArrayInfo, choose, is_numeric, is_vector, is_wavelength_name
from hsi.io.source import RawSource, ReversedAxes

_MATLAB_SKIP = {b"char", b"cell", b"struct", b"function_handle", b"struct_array"}


def open_file(path: Path) -> h5py.File:
    """Open read-only; corrupt or truncated files raise :class:`CubeFormatError`."""
    try:
        return h5py.File(str(path), "r")
    except (OSError, ValueError) as err:
        raise CubeFormatError(f"{path}: corrupt, truncated or not an HDF5 file ({err})") from err


def walk(handle: h5py.File, matlab: bool) -> tuple[list[ArrayInfo], dict[str, h5py.Dataset]]:
    """Every dataset (all groups) as ``ArrayInfo`` (shape reversed for MATLAB) and by name.

    MATLAB's hidden ``#refs#`` / ``#subsystem#`` groups and its char/cell/struct data are
    listed as non-numeric so they are never chosen.
    """
    infos: list[ArrayInfo] = []
    datasets: dict[str, h5py.Dataset] = {}

    def visit(name: str, obj) -> None:
        if not isinstance(obj, h5py.Dataset) or any(part.startswith("#") for part in name.split("/")):
            return
        shape = tuple(int(s) for s in obj.shape)
        numeric = is_numeric(obj.dtype)
        if matlab:
            shape = shape[::-1]
            cls = obj.attrs.get("MATLAB_class", b"")
            cls = cls.encode() if isinstance(cls, str) else bytes(cls)
            numeric = numeric and cls not in _MATLAB_SKIP and "MATLAB_empty" not in obj.attrs
        infos.append(ArrayInfo(name, shape, str(obj.dtype), numeric=numeric))
        datasets[name] = obj

    try:
        handle.visititems(visit)
    except (OSError, RuntimeError, KeyError) as err:
        raise CubeFormatError(f"{handle.filename}: corrupt HDF5 structure ({err})") from err
    return infos, datasets


def _units(attrs) -> str | None:
    for name in ("wavelength_units", "wavelength units", "units"):
        if name in attrs:
            value = attrs[name]
            return value.decode() if isinstance(value, bytes) else str(value)
    return None


def _attr_wavelengths(attrs) -> tuple[str, np.ndarray] | None:
    for name, value in attrs.items():
        if is_wavelength_name(name):
            arr = np.asarray(value)
            if arr.dtype.kind in "iuf" and arr.size > 1:
                return name, arr.astype(np.float64).ravel()
    return None


#: dataset attributes that declare the no-data value (GDAL/rasterio, netCDF/CF), in order of preference
NODATA_ATTRIBUTES = ("nodata", "_FillValue")


def nodata_attribute(attrs, where: str) -> float | None:
    """The no-data value a dataset declares in :data:`NODATA_ATTRIBUTES`, or None.

    Raises
    ------
    CubeFormatError
        The attribute is not one number.
    """
    for name in NODATA_ATTRIBUTES:
        if name in attrs:
            value = np.asarray(attrs[name])
            if value.size != 1 or not (np.issubdtype(value.dtype, np.number) or value.dtype == bool):
                raise CubeFormatError(f"{where}: attribute {name!r} must be one number (the no-data value); "
                                      f"found {value.dtype} {value.shape}")
            return float(value.reshape(()))
    return None


def open_hdf5(path: Path, key: str | None, matlab: bool, georef: str = "check") -> RawSource:
    """Raw cube of an HDF5 / MATLAB v7.3 file, left on disk for windowed reads.

    A georeference is read from the cube dataset's ``crs`` / ``transform`` / ``pixel_is``
    attributes (:func:`hsi.io.georef.from_h5_attrs`) unless ``georef="ignore"``.
    """
    from hsi.io.georef import from_h5_attrs

    handle = open_file(path)
    try:
        infos, datasets = walk(handle, matlab)
        info = choose(infos, key, 3, str(path), "cube")
        if not info.numeric:
            raise CubeFormatError(f"{path}: dataset {info.name!r} is {info.dtype}, not a numeric array")
        dataset = datasets[info.name]
        source = RawSource(
            path, "mat-v7.3" if matlab else "hdf5", ReversedAxes(dataset) if matlab else dataset,
            key=info.name, extra={"matlab_transposed": matlab}, closer=handle.close,
        )
        if not matlab and "layout" in dataset.attrs:  # written by hsi.io.write_h5 (or declared by the producer)
            source.layout = str(np.asarray(dataset.attrs["layout"]).item() if np.ndim(dataset.attrs["layout"]) == 0
                                else dataset.attrs["layout"])
        source.ignore_value = nodata_attribute(dataset.attrs, f"{path} dataset {info.name!r}")
        if georef != "ignore" and not matlab:
            source.extra["georef"] = from_h5_attrs(dataset.attrs, f"{path} dataset {info.name!r}")
        declared = _attr_wavelengths(dataset.attrs)
        if declared is not None:
            source.wavelengths = declared[1]
            source.wavelength_units = _units(dataset.attrs)
            source.wavelength_source = f"attribute {declared[0]!r} of {info.name!r}"
        for other in infos:
            if other.name != info.name and is_wavelength_name(other.name) and is_vector(other):
                ds = datasets[other.name]
                values = np.asarray(ds[()], dtype=np.float64).ravel()
                label = f"variable {other.name!r}" if matlab else f"dataset {other.name!r}"
                source.wavelength_candidates.append((label, values, _units(ds.attrs)))
        root = _attr_wavelengths(handle.attrs)
        if root is not None:
            source.wavelength_candidates.append((f"file attribute {root[0]!r}", root[1], _units(handle.attrs)))
        return source
    except BaseException:
        handle.close()
        raise


def load_label_array(path: Path, key: str | None, matlab: bool, prefer) -> tuple[str, np.ndarray]:
    """``(name, array)`` of a 2-D label dataset, in MATLAB orientation when ``matlab``."""
    with open_file(path) as handle:
        infos, datasets = walk(handle, matlab)
        info = choose(infos, key, 2, str(path), "label map", prefer=prefer)
        try:
            array = np.asarray(datasets[info.name][()])
        except (OSError, ValueError) as err:
            raise CubeFormatError(f"{path}: could not read dataset {info.name!r} ({err})") from err
    if matlab:
        array = array.transpose(tuple(range(array.ndim))[::-1])
    return info.name, array
