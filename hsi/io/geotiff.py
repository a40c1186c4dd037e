"""GeoTIFF cubes and label maps through rasterio, read window by window.

A multi-band GeoTIFF is a cube H x W x C in band order; a single-band one is a label map
(:func:`hsi.io.read_labels`). Parsed in stages: open the dataset (a file GDAL cannot read
as a TIFF is a :class:`CubeFormatError`), check the band dtype and the nodata value against
it, read per-band scale/offset and the data units (GDAL band units, then ``units`` tags),
find wavelengths and band widths (GDAL band metadata, then band descriptions, then an
ENVI ``.hdr`` beside the file) and the georeference (CRS and affine
transform, refused when unusable unless ``georef="ignore"``). The dataset stays open and
windows are read from it on demand, so a GeoTIFF larger than memory is never loaded whole.
"""

from __future__ import annotations

import json
import re
import struct
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import CubeFormatError, DataQualityWarning, GeoRefError
from hsi.io.georef import IGNORE_HINT, GeoRef, check_policy, check_usable, quiet_gdal
from hsi.io.source import RawSource

__all__ = ["CLASS_NAMES_TAG", "FORMAT_TAG", "GeoTiffBands", "attribute_table_names", "category_names",
           "class_names_tag", "declares_classes", "geotiff_info", "open_geotiff", "read_geotiff_georef", "read_label_band"]

#: dataset tag naming what hsi wrote the file as: ``"hsi-labels"`` (a class map: read as labels), ``"hsi-map"``,
#: ``"hsi-cube"`` (a cube ``hsi convert`` wrote: it replaces only files carrying it)
FORMAT_TAG = "HSI_FORMAT"
#: band tag holding the class names (JSON list, the first for id 0) inside the ``labels.tif`` of ``hsi infer``
CLASS_NAMES_TAG = "class_names"

_IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)
#: the first 4 bytes of classic and BigTIFF files, little- and big-endian
_TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")
#: GDAL's private TIFF tag holding the nodata value as text
_GDAL_NODATA_TAG = 42113
#: band / dataset tags that may say what the values are, in order of preference
DATA_UNITS_TAGS = ("units", "data_units", "data units")
#: a number followed by a length unit, as band descriptions hold it ("Band 1 (450.0 nm)", "0.45 um")
_DESCRIPTION_WAVELENGTH = re.compile(
    r"(?<![\w.])([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
    r"(nm|nanomet(?:er|re)s?|[uµμ]m|micromet(?:er|re)s?|microns?)(?![a-zA-Z])",
    re.IGNORECASE,
)


class GeoTiffBands:
    """An open GeoTIFF seen as an (H, W, C) array: ``bands[rows, cols, bands]`` reads one window.

    Rows and columns must be contiguous slices (a rasterio ``Window``); bands may be any
    slice. The result is an (h, w, c) numpy array of the file's dtype.
    """

    def __init__(self, dataset: Any, path: Path) -> None:
        self.dataset = dataset
        self.path = path
        self.shape = (int(dataset.height), int(dataset.width), int(dataset.count))
        self.dtype = np.dtype(dataset.dtypes[0])
        self.mask_bands, self.mask_kind = _mask_bands(dataset)

    def invalid(self, rows: slice, cols: slice) -> np.ndarray:
        """(h, w) bool: the pixels of the window that the file's mask band (or alpha band) marks invalid.

        A pixel is invalid when the mask of any band says so (all False without a mask band).
        """
        from rasterio.errors import RasterioError
        from rasterio.windows import Window

        (r0, r1, _), (c0, c1, _) = (sl.indices(n) for sl, n in zip((rows, cols), self.shape[:2]))
        if not self.mask_bands:
            return np.zeros((max(r1 - r0, 0), max(c1 - c0, 0)), dtype=bool)
        try:
            with quiet_gdal():
                masks = self.dataset.read_masks(self.mask_bands, window=Window(c0, r0, c1 - c0, r1 - r0))
        except (RasterioError, OSError, ValueError) as err:
            raise CubeFormatError(f"{self.path}: could not read the {self.mask_kind} for rows {r0}:{r1}, cols "
                                  f"{c0}:{c1} ({type(err).__name__}: {err}); the file may be truncated or "
                                  f"corrupt") from err
        return (masks == 0).any(axis=0)

    def __getitem__(self, index: Any) -> np.ndarray:
        from rasterio.errors import RasterioError
        from rasterio.windows import Window

        index = index if isinstance(index, tuple) else (index,)
        if Ellipsis in index:
            at = index.index(Ellipsis)
            index = index[:at] + (slice(None),) * (4 - len(index)) + index[at + 1:]
        index = tuple(index) + (slice(None),) * (3 - len(index))
        if len(index) != 3 or not all(isinstance(i, slice) for i in index):
            raise TypeError(f"{self.path}: index a GeoTIFF cube with three slices (rows, cols, bands); got {index!r}")
        (r0, r1, rstep), (c0, c1, cstep) = (sl.indices(n) for sl, n in zip(index[:2], self.shape[:2]))
        if rstep != 1 or cstep != 1:
            raise TypeError(f"{self.path}: GeoTIFF windows need contiguous rows and columns (step 1); "
                            f"got {index[:2]!r}")
        bands = [b + 1 for b in range(*index[2].indices(self.shape[2]))]
        if r1 <= r0 or c1 <= c0 or not bands:
            return np.empty((max(r1 - r0, 0), max(c1 - c0, 0), len(bands)), self.dtype)
        try:
            with quiet_gdal():
                block = self.dataset.read(bands, window=Window(c0, r0, c1 - c0, r1 - r0))
        except (RasterioError, OSError, ValueError) as err:
            raise CubeFormatError(f"{self.path}: could not read rows {r0}:{r1}, cols {c0}:{c1} of the GeoTIFF "
                                  f"({type(err).__name__}: {err}); the file may be truncated or corrupt") from err
        return np.moveaxis(block, 0, -1)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        block = self[:, :, :]
        return block if dtype is None else block.astype(dtype)


def _check_magic(path: Path) -> None:
    """Refuse a file whose first bytes are no TIFF header (another format under a .tif name)."""
    from hsi.io.readers.registry import supported

    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError as err:
        raise CubeFormatError(f"{path}: cannot be read ({err})") from err
    if head not in _TIFF_MAGIC:
        raise CubeFormatError(f"{path}: unsupported file type: not a TIFF (its first bytes {head!r} are no TIFF "
                              f"header); expected a GeoTIFF for the {path.suffix} extension. Supported: {supported()}")


def _open(path: Path) -> Any:
    """The rasterio dataset of ``path``; :class:`CubeFormatError` naming it when GDAL cannot read it as a TIFF."""
    import rasterio
    from rasterio.errors import NotGeoreferencedWarning, RasterioError

    _check_magic(path)
    try:
        with quiet_gdal(), warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)  # no georeference is reported as None
            return rasterio.open(path, driver="GTiff")
    except (RasterioError, OSError) as err:
        raise CubeFormatError(f"{path}: not a readable GeoTIFF ({type(err).__name__}: {err}); the file is "
                              f"corrupt, truncated or not a TIFF") from err


def _mask_bands(dataset: Any) -> tuple[list[int], str | None]:
    """``(bands, what)``: the bands whose validity a mask band or an alpha band gives, and which kind of mask.

    GDAL's mask flags per band: ``all_valid`` (no mask) and ``nodata`` (the nodata value,
    handled as such) need nothing more; ``per_dataset`` (an internal or ``.msk`` mask band
    shared by all bands), ``alpha`` and a band's own mask band mark pixels invalid.
    """
    from rasterio.enums import MaskFlags

    bands, kinds = [], set()
    for band, flags in zip(dataset.indexes, dataset.mask_flag_enums):
        if MaskFlags.all_valid in flags or MaskFlags.nodata in flags:
            continue
        bands.append(band)
        kinds.add("alpha band" if MaskFlags.alpha in flags else "mask band")
    if not bands:
        return [], None
    return ([bands[0]] if len(bands) == dataset.count and all(
        MaskFlags.per_dataset in f for f in dataset.mask_flag_enums) else bands), " and ".join(sorted(kinds))


def _band_dtype(dataset: Any, path: Path) -> np.dtype:
    """The one dtype of all bands; complex and mixed dtypes are refused."""
    names = set(dataset.dtypes)
    if any("complex" in name for name in names):
        raise CubeFormatError(f"{path}: complex GeoTIFF bands ({', '.join(sorted(names))}) are not reflectance "
                              f"data; expected real numbers (integer or float bands)")
    if len(names) != 1:
        raise CubeFormatError(f"{path}: bands of different dtypes ({', '.join(sorted(names))}); a cube needs one")
    return np.dtype(names.pop())


def _raw_nodata_tag(path: Path) -> str | None:
    """The text of GDAL's nodata tag in the first IFD, read from the file itself.

    rasterio reports a nodata value outside the band dtype's range (-9999 on uint8, NaN on
    integers) as None; reading the tag is the only way to tell that file from one without nodata.
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
            order = {b"II": "<", b"MM": ">"}.get(head[:2])
            if order is None:
                return None
            version = struct.unpack(order + "H", head[2:4])[0]
            big = version == 43
            handle.seek(struct.unpack(order + ("Q" if big else "I"), head[8:16] if big else head[4:8])[0])
            count_fmt, entry_fmt, offset_fmt = (order + "Q", order + "HHQ", order + "Q") if big else \
                (order + "H", order + "HHI", order + "I")
            head_size, size = struct.calcsize(entry_fmt), struct.calcsize(entry_fmt) + struct.calcsize(offset_fmt)
            n = struct.unpack(count_fmt, handle.read(struct.calcsize(count_fmt)))[0]
            entries = handle.read(size * n)
            for i in range(n):
                entry = entries[i * size:(i + 1) * size]
                tag, _, length = struct.unpack_from(entry_fmt, entry)
                if tag != _GDAL_NODATA_TAG:
                    continue
                if length > size - head_size:  # stored elsewhere: the entry holds its offset
                    handle.seek(struct.unpack_from(offset_fmt, entry, head_size)[0])
                    value = handle.read(length)
                else:
                    value = entry[head_size:head_size + length]
                return value.split(b"\0", 1)[0].decode("ascii", "replace").strip()
    except (OSError, struct.error):
        return None
    return None


def _nodata(dataset: Any, path: Path, dtype: np.dtype) -> float | None:
    """The nodata value, checked against ``dtype``: one the bands cannot hold is "wrong nodata type"."""
    value = dataset.nodata
    if value is None:
        text = _raw_nodata_tag(path)
        if text is None:
            return None
        try:
            value = float(text)
        except ValueError:
            raise CubeFormatError(f"{path}: nodata value {text!r} is not a number (wrong nodata type)") from None
    value = float(value)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        fits = np.isfinite(value) and value == round(value) and info.min <= value <= info.max
    else:
        fits = not np.isfinite(value) or abs(value) <= np.finfo(dtype).max
    if not fits:
        raise CubeFormatError(
            f"{path}: nodata value {value!r} cannot occur in {dtype} bands (wrong nodata type); expected a "
            f"value of the band dtype; set a valid one (gdal_edit.py -a_nodata VALUE) or remove it "
            f"(gdal_edit.py -unsetnodata)"
        )
    return value


def _band_scaling(dataset: Any, path: Path) -> tuple[np.ndarray | None, np.ndarray | None]:
    """GDAL's per-band ``(scale, offset)`` (value = raw * scale + offset); None for all 1 / all 0.

    A scale must be a finite number > 0: a negative one would turn every spectrum upside down.
    """
    scales = np.asarray([1.0 if s is None else s for s in dataset.scales], dtype=np.float64)
    offsets = np.asarray([0.0 if o is None else o for o in dataset.offsets], dtype=np.float64)
    bad = ~np.isfinite(scales) | (scales <= 0) | ~np.isfinite(offsets)
    if bad.any():
        band = int(np.flatnonzero(bad)[0])
        raise CubeFormatError(f"{path}: band {band + 1} has scale {scales[band]!r} and offset {offsets[band]!r}; "
                              f"expected a finite scale > 0 and a finite offset (gdal_edit.py -scale / -offset sets them)")
    return (None if np.all(scales == 1) else scales), (None if np.all(offsets == 0) else offsets)


def _numbers(texts: list[str | None], what: str, path: Path) -> np.ndarray | None:
    """Floats of per-band metadata; None (with a warning when partly present or malformed) otherwise."""
    if all(t is None for t in texts):
        return None
    try:
        if any(t is None for t in texts):
            raise ValueError(f"only {sum(t is not None for t in texts)} of {len(texts)} bands have it")
        return np.array([float(t) for t in texts], dtype=np.float64)
    except ValueError as err:
        warnings.warn(f"{path}: GDAL band metadata {what!r} ignored ({err})", DataQualityWarning, stacklevel=4)
        return None


def _from_band_tags(dataset: Any, path: Path) -> tuple | None:
    """``(values, units, source, fwhm)`` from the band metadata GDAL writes for ENVI (and GDAL's IMAGERY domain)."""
    tags = [dataset.tags(b) for b in dataset.indexes]
    values = _numbers([t.get("wavelength") for t in tags], "wavelength", path)
    if values is not None:
        units = [t.get("wavelength_units") or dataset.tags().get("wavelength_units") for t in tags]
        if len(set(units)) > 1:  # per-band units that differ: convert each to nm here
            from hsi.io.bands import to_nanometers

            converted = [to_nanometers([v], u, str(path)) for v, u in zip(values, units)]
            if any(c[0] is None for c in converted):  # a unit that is no length (already warned about)
                return None
            values, units = np.concatenate([c[0] for c in converted]), ["nm"]
            fwhm = _numbers([t.get("fwhm") for t in tags], "fwhm", path)
            fwhm = None if fwhm is None else fwhm * np.array([c[2] for c in converted])  # band by band, like values
            return values, "nm", "GDAL band metadata 'wavelength'", fwhm
        fwhm = _numbers([t.get("fwhm") for t in tags], "fwhm", path)
        return values, units[0], "GDAL band metadata 'wavelength'", fwhm
    imagery = [dataset.tags(b, ns="IMAGERY") for b in dataset.indexes]
    values = _numbers([t.get("CENTRAL_WAVELENGTH_UM") for t in imagery], "CENTRAL_WAVELENGTH_UM", path)
    if values is None:
        return None
    fwhm = _numbers([t.get("FWHM_UM") for t in imagery], "FWHM_UM", path)
    return values, "um", "GDAL band metadata IMAGERY/CENTRAL_WAVELENGTH_UM", fwhm


def _bands_list(bands: list[int]) -> str:
    """``"band 7"`` / ``"bands 3, 9"`` (1-based, as GDAL numbers them), the first 10 of a long list."""
    shown = ", ".join(str(b) for b in bands[:10]) + (f", ... ({len(bands) - 10} more)" if len(bands) > 10 else "")
    return f"band{'s' if len(bands) > 1 else ''} {shown}"


def _from_descriptions(dataset: Any, path: Path) -> tuple | None:
    """Wavelengths (nm) when every band description holds a number with nm/µm units.

    When only some do, none is used (wavelengths must cover every band) and a
    :class:`DataQualityWarning` says how many had one and which bands did not.
    """
    values, missing = [], []
    for band, text in enumerate(dataset.descriptions, start=1):
        match = _DESCRIPTION_WAVELENGTH.search(text or "")
        if match is None:
            missing.append(band)
            continue
        number, unit = float(match.group(1)), match.group(2).lower()
        values.append(number if unit.startswith("n") else number * 1e3)
    if missing and values:
        warnings.warn(f"{path}: band descriptions give wavelengths for {len(values)} of {dataset.count} bands; "
                      f"{_bands_list(missing)} without one, so no wavelength is used from them (the cube is read "
                      f"without wavelengths; describe every band, e.g. 'Band 1 (450 nm)')", DataQualityWarning,
                      stacklevel=4)
    if missing:
        return None
    return np.array(values, dtype=np.float64), "nm", "band descriptions", None


def _from_header(path: Path) -> tuple | None:
    """Wavelengths from an ENVI-style header beside the file (``x.tif.hdr`` or ``x.hdr``)."""
    import spectral.io.envi as spy_envi

    from hsi.io.envi import _ERRORS as _HEADER_ERRORS  # what spectral raises for a bad header

    for header in (Path(f"{path}.hdr"), path.with_suffix(".hdr")):
        if not header.is_file():
            continue
        try:
            fields = spy_envi.read_envi_header(str(header))
            values = fields.get("wavelength")
            if values is None:
                return None
            values = np.array([float(v) for v in (values if isinstance(values, list) else [values])])
        except _HEADER_ERRORS as err:
            warnings.warn(f"{header}: ENVI header beside {path.name} not used for wavelengths "
                          f"({type(err).__name__}: {err})", DataQualityWarning, stacklevel=4)
            return None
        fwhm = fields.get("fwhm")
        try:
            fwhm = None if fwhm is None else np.array([float(v) for v in (fwhm if isinstance(fwhm, list) else [fwhm])])
        except ValueError as err:  # optional: the wavelengths are still used
            warnings.warn(f"{header}: malformed 'fwhm' ignored ({err})", DataQualityWarning, stacklevel=4)
            fwhm = None
        return values, fields.get("wavelength units"), f"ENVI header {header.name} beside the GeoTIFF", fwhm
    return None


def _data_units(dataset: Any) -> tuple[str | None, str | None]:
    """``(text, where)``: what the bands' values are, from GDAL band units, then band tags, then dataset tags."""
    per_band = [u.strip() for u in (getattr(dataset, "units", None) or ()) if u and u.strip()]
    if per_band:
        found = sorted(set(per_band))
        return "; ".join(found), "GDAL band units" + (" (they differ between bands)" if len(found) > 1 else "")
    for where, tags in [("band 1 tag", dataset.tags(1)), ("dataset tag", dataset.tags())]:
        for name in DATA_UNITS_TAGS:
            if str(tags.get(name) or "").strip():
                return str(tags[name]).strip(), f"GeoTIFF {where} {name!r}"
    return None, None


def read_geotiff_georef(dataset: Any, where: str) -> GeoRef | None:
    """The georeference of an open rasterio dataset; None for the identity grid without CRS.

    Raises
    ------
    GeoRefError
        A transform without CRS, a rotated grid (:func:`hsi.io.georef.check_usable`), or a
        file georeferenced only by ground control points or RPCs.
    """
    transform = tuple(float(v) for v in tuple(dataset.transform)[:6])
    if dataset.crs is None and transform == _IDENTITY:
        if dataset.gcps[0] or dataset.rpcs is not None:
            raise GeoRefError(f"{where}: georeferenced by ground control points or RPCs only, which is not "
                              f"supported; expected an affine transform (warp it first: gdalwarp), {IGNORE_HINT}")
        return None
    pixel_is = "point" if str(dataset.tags().get("AREA_OR_POINT", "Area")).lower() == "point" else "area"
    crs = None if dataset.crs is None else dataset.crs.to_wkt()
    return check_usable(GeoRef(crs, transform, pixel_is), where)


def open_geotiff(path: Path, georef: str = "check") -> RawSource:
    """A multi-band GeoTIFF as a lazy HWC :class:`RawSource` (``georef="ignore"``: no georeference).

    ``extra`` holds ``georef`` (a :class:`GeoRef` or None), ``driver``, ``nodata`` and the
    band descriptions; the dataset stays open until ``source.close()``.

    Raises
    ------
    CubeFormatError
        Not a readable TIFF, a single band (a label map), complex or mixed dtypes, a nodata
        value the dtype cannot hold, or an unusable band scale/offset.
    GeoRefError
        An unusable georeference (with ``georef="check"``).
    """
    check_policy(georef)
    dataset = _open(path)
    try:
        if dataset.count == 1:
            raise CubeFormatError(f"{path}: a single-band GeoTIFF is a label map; read it with read_labels "
                                  f"(a cube needs 2 or more bands)")
        dtype = _band_dtype(dataset, path)
        nodata = _nodata(dataset, path, dtype)
        band_scale, band_offset = _band_scaling(dataset, path)
        geo = None if georef == "ignore" else read_geotiff_georef(dataset, str(path))
        values, units, origin, fwhm = _from_band_tags(dataset, path) or _from_descriptions(dataset, path) \
            or _from_header(path) or (None, None, None, None)
        data_units, data_units_origin = _data_units(dataset)
        bands = GeoTiffBands(dataset, path)
        return RawSource(
            path, "geotiff", bands, layout="HWC", invalid=bands.invalid if bands.mask_bands else None,
            wavelengths=values, wavelength_units=units, wavelength_source=origin, fwhm=fwhm,
            ignore_value=nodata, band_scale=band_scale, band_offset=band_offset,
            data_units=data_units, data_units_origin=data_units_origin, scaling_origin="GDAL band scale/offset",
            extra={"georef": geo, "driver": dataset.driver, "nodata": nodata,
                   "nodata_mask": None if bands.mask_kind is None else f"the file's {bands.mask_kind}",
                   "band_descriptions": list(dataset.descriptions)},
            closer=dataset.close,
        )
    except BaseException:
        dataset.close()
        raise


def geotiff_info(path: Path, georef: str = "check") -> dict[str, Any]:
    """Facts of a GeoTIFF without reading pixels: ``shape`` ((H, W) for one band, else (H, W, C)),
    ``dtype``, ``count``, ``nodata``, ``mask`` (the kind of mask band, "mask band" or "alpha band",
    or None), ``class_map`` (:func:`declares_classes`) and ``georef`` (None with ``georef="ignore"``)."""
    check_policy(georef)
    dataset = _open(path)
    try:
        dtype = _band_dtype(dataset, path)
        shape = (dataset.height, dataset.width) + (() if dataset.count == 1 else (dataset.count,))
        return {"shape": tuple(int(s) for s in shape), "dtype": dtype.name, "count": int(dataset.count),
                "nodata": _nodata(dataset, path, dtype), "mask": _mask_bands(dataset)[1],
                "class_map": declares_classes(dataset),
                "georef": None if georef == "ignore" else read_geotiff_georef(dataset, str(path))}
    finally:
        dataset.close()


def read_label_band(path: Path) -> np.ndarray:
    """The one band of a label GeoTIFF as (H, W), its nodata and masked pixels set to 0 (unlabeled).

    No georeference is read (see :func:`geotiff_info`); values are checked by the caller
    (:func:`hsi.io.labels.to_label_map`).

    Raises
    ------
    CubeFormatError
        Not a readable TIFF, more than one band, or a nodata value the dtype cannot hold.
    """
    dataset = _open(path)
    try:
        if dataset.count != 1:
            raise CubeFormatError(f"{path}: a GeoTIFF label map has one band; this one has {dataset.count} "
                                  f"(read a cube with read_cube)")
        dtype = _band_dtype(dataset, path)
        nodata = _nodata(dataset, path, dtype)
        bands = GeoTiffBands(dataset, path)
        band = bands[:, :, :][..., 0]
        masked = bands.invalid(slice(None), slice(None))
    finally:
        dataset.close()
    if nodata is not None or masked.any():
        band = band.copy()
        if nodata is not None:
            band[np.isnan(band) if np.isnan(nodata) else band == nodata] = 0
        band[masked] = 0
    return band


def declares_classes(dataset: Any) -> bool:
    """Whether a single-band GeoTIFF says it is a class map: a colour table, or hsi's map tag.

    ``hsi infer`` writes both (:func:`hsi.io.writers.geotiff.write_label_cog`); GDAL's
    ``gdal_translate``/QGIS keep the colour table. Such a file is read as labels up to the
    most classes its dtype holds (:func:`hsi.io.labels.read_labels`).
    """
    if dataset.count != 1:
        return False
    if dataset.tags().get(FORMAT_TAG) == "hsi-labels":
        return True
    try:
        return bool(dataset.colormap(1))
    except ValueError:  # rasterio: "NULL color table" when there is none
        return False


def _pam_band(path: Path) -> Any:
    """Band 1's ``PAMRasterBand`` element in the PAM sidecar ``<path>.aux.xml``, or None (no sidecar, no band 1)."""
    sidecar = Path(f"{path}.aux.xml")
    if not sidecar.is_file():
        return None
    try:
        root = ET.parse(sidecar).getroot()
    except (ET.ParseError, OSError) as err:
        raise CubeFormatError(f"{sidecar}: not a readable GDAL PAM sidecar ({err})") from err
    return next((band for band in root.iter("PAMRasterBand") if band.get("band", "1") == "1"), None)


def category_names(path: Path) -> list[str] | None:
    """Band 1's ``CategoryNames`` in the PAM sidecar ``<path>.aux.xml`` (value 0's first), or None."""
    band = _pam_band(path)
    cats = None if band is None else band.find("CategoryNames")
    return None if cats is None else [c.text or "" for c in cats.findall("Category")]


def class_names_tag(path: Path) -> list[str] | None:
    """The names in band 1's :data:`CLASS_NAMES_TAG` tag (a JSON list, value 0's first), or None (no tag)."""
    with _open(path) as src:
        text = src.tags(1).get(CLASS_NAMES_TAG)
    if text is None:
        return None
    try:
        names = json.loads(text)
    except ValueError as err:
        raise CubeFormatError(f"{path}: band tag {CLASS_NAMES_TAG!r} is not JSON ({err})") from err
    if not isinstance(names, list):
        raise CubeFormatError(f"{path}: band tag {CLASS_NAMES_TAG!r} holds {type(names).__name__}, expected a list "
                              f"of names")
    return [str(n) for n in names]


#: GDAL raster attribute table field usages (GDALRATFieldUsage): the class name, the pixel value
#: (min-max), the lower bound of a value range; field type 2 is a string
_RAT_NAME, _RAT_MINMAX, _RAT_MIN, _RAT_STRING = 2, 5, 3, 2


def _rat_columns(table: Any) -> tuple[int | None, int | None]:
    """``(value column or None, name column or None)`` of a ``GDALRasterAttributeTable`` element.

    The name column is the one of usage "name", else the first string column (QGIS's
    "Class"); the value column the one of usage "min-max", else "min".
    """
    fields = [(int(d.findtext("Usage", "0")), int(d.findtext("Type", "0"))) for d in table.findall("FieldDefn")]
    usages = [usage for usage, _ in fields]
    name = next((i for i, u in enumerate(usages) if u == _RAT_NAME),
                next((i for i, (_, kind) in enumerate(fields) if kind == _RAT_STRING), None))
    value = next((i for u in (_RAT_MINMAX, _RAT_MIN) for i, found in enumerate(usages) if found == u), None)
    return value, name


def attribute_table_names(path: Path) -> list[str] | None:
    """Names by value from band 1's raster attribute table (RAT) in ``<path>.aux.xml`` (value 0's first,
    ``""`` for a value without a row), or None (no table, no name column).

    A row's value is its value column's, else ``Row0Min + index * BinSize`` (a linear table),
    else its index. What QGIS's "Create Raster Attribute Table" and ``hsi infer`` write.
    """
    band = _pam_band(path)
    table = None if band is None else band.find("GDALRasterAttributeTable")
    if table is None:
        return None
    try:
        value_col, name_col = _rat_columns(table)
    except ValueError as err:
        raise CubeFormatError(f"{path}.aux.xml: an attribute table field whose usage or type is not a number "
                              f"({err})") from err
    if name_col is None:
        return None
    start, step = float(table.get("Row0Min", "0")), float(table.get("BinSize", "1"))
    named: dict[int, str] = {}
    for index, row in enumerate(table.findall("Row")):
        cells = [f.text or "" for f in row.findall("F")]
        where = f"{path}.aux.xml attribute table row {index}"
        try:
            value = float(cells[value_col]) if value_col is not None else start + int(row.get("index", index)) * step
            name = cells[name_col].strip()
        except (IndexError, ValueError) as err:
            raise CubeFormatError(f"{where}: no class value and name in {cells} ({err})") from err
        if value >= 0 and value == int(value) and name:
            named[int(value)] = name
    return [named.get(v, "") for v in range(max(named) + 1)] if named else None
