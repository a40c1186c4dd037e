"""HDF5 files (.h5/.hdf5) and MATLAB v7.3 files, read lazily through h5py.

Plain HDF5 files may declare what the values are with attributes of the cube dataset (or,
failing that, of the file): ``units`` (a data-units string such as "reflectance" or
"W/(m2 sr um)"; a length unit there is taken as the wavelengths' unit, as before),
``reflectance_scale_factor`` (ENVI's meaning: reflectance = value / factor), ``scale_factor``
and ``add_offset`` (the netCDF/CF meaning: value = stored * scale_factor + add_offset) and
``fwhm`` (band widths, in the wavelengths' unit). MATLAB v7.3 files declare none of these.
A ``scale_factor`` must be a finite number > 0; one > 1 that multiplies the values to
implausible levels (a producer's "divide by 10000" written as CF) is warned about when the
cube is opened (:func:`hsi.io.lazy.check_level`). :func:`hsi.io.write_h5` writes no scale.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import h5py
import numpy as np

from hsi.errors import CubeFormatError, DataQualityWarning
from hsi.io.bands import is_length_unit
from hsi.io.discovery import ArrayInfo, choose, is_numeric, is_vector, is_wavelength_name
from hsi.io.source import RawSource, ReversedAxes
from hsi.io.units import parse_units_text

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


def _text(value) -> str:
    value = value.item() if isinstance(value, np.ndarray) and value.size == 1 else value
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _units(attrs) -> str | None:
    """The wavelengths' unit: ``wavelength_units``, else a ``units`` that names no data quantity."""
    for name in ("wavelength_units", "wavelength units", "units"):
        if name in attrs:
            value = _text(attrs[name])
            if name == "units" and parse_units_text(value) in ("reflectance", "radiance"):
                return None  # the data's units (see _declare_units), not the wavelengths'
            return value
    return None


def _attribute(places: list[tuple[str, h5py.AttributeManager]], name: str) -> tuple[str, object] | None:
    """``(where, value)`` of the first place that has attribute ``name``."""
    for where, attrs in places:
        if name in attrs:
            return f"attribute {name!r} of {where}", attrs[name]
    return None


def _number(found: tuple[str, object] | None, path: Path, finite: bool = True) -> float | None:
    """The one (finite, unless ``finite=False``) number an attribute holds; a malformed one warns and is ignored."""
    if found is None:
        return None
    value = np.asarray(found[1])
    if value.size == 1 and np.issubdtype(value.dtype, np.number) and (not finite or np.isfinite(value.reshape(()))):
        return float(value.reshape(()))
    warnings.warn(f"{path}: {found[0]} ignored (found {value.dtype} {value.shape}; expected one finite number)",
                  DataQualityWarning, stacklevel=4)
    return None


def _declare_units(source: RawSource, dataset: h5py.Dataset, root: h5py.AttributeManager, path: Path) -> None:
    """Data units, scale factors and band widths from the dataset's (else the file's) attributes."""
    places = [(repr(dataset.name.lstrip("/")), dataset.attrs), ("the file", root)]
    units = _attribute(places, "units")
    if units is not None and not is_length_unit(_text(units[1])):
        source.data_units, source.data_units_origin = _text(units[1]), units[0]
    factor = _attribute(places, "reflectance_scale_factor")
    source.scale_factor = _number(factor, path, finite=False)  # a bad one is refused when it is applied
    source.scale_factor_origin = None if factor is None else factor[0]
    found = _attribute(places, "scale_factor")
    cf_scale = _number(found, path, finite=False)
    cf_offset = _number(_attribute(places, "add_offset"), path)
    if cf_scale is not None and not (np.isfinite(cf_scale) and cf_scale > 0):
        raise CubeFormatError(f"{path}: {found[0]} is {cf_scale:g}; expected a finite number > 0 "
                              f"(CF: value = stored * scale_factor + add_offset)")
    if cf_scale not in (None, 1.0) or cf_offset not in (None, 0.0):
        source.band_scale = None if cf_scale in (None, 1.0) else np.array([cf_scale])
        source.band_offset = None if cf_offset in (None, 0.0) else np.array([cf_offset])
        source.scaling_origin = "CF attributes scale_factor/add_offset"
    fwhm = _attribute(places, "fwhm")
    if fwhm is not None:
        values = np.asarray(fwhm[1])
        if values.dtype.kind in "iuf":
            source.fwhm = values.astype(np.float64).ravel()
        else:
            warnings.warn(f"{path}: {fwhm[0]} ignored (found {values.dtype}; expected numbers)",
                          DataQualityWarning, stacklevel=3)


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
        if not matlab:
            _declare_units(source, dataset, handle.attrs, path)
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
