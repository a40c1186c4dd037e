"""GeoTIFF writers: class maps as Cloud-Optimized GeoTIFF, float maps, and whole cubes, through rasterio.

- :func:`write_label_cog`: a class map (uint8, or uint16 past 255 classes) as a COG (GDAL's
  ``COG`` driver: tiled, deflate, nearest-neighbour overviews), nodata 0, a colour table from
  the scene palette, and the class names twice: as GDAL category names and a thematic raster
  attribute table in the PAM sidecar ``<name>.aux.xml`` (what GDAL and QGIS read; a TIFF has
  no tag for them, and rasterio no API), and as the band tag ``class_names`` (JSON) inside
  the file, so they travel with the ``.tif`` alone. :func:`read_label_classes` reads both back.
- :func:`write_float_tif`: float32 maps (``confidence.tif``, ``probabilities.tif`` with one
  band per class), named bands, nodata NaN, as COGs with averaged overviews: the class map's
  layout, through the same copy (:func:`_copy_as_cog`).
- :func:`write_cube_gtiff`: a cube ``H x W x C`` as a tiled, deflated, pixel-interleaved
  GeoTIFF written block of rows by block of rows (a cube larger than memory never is in
  memory), with the GDAL band metadata ``wavelength`` / ``wavelength_units`` that GDAL's ENVI
  driver writes and EnMAP-Box reads, and band descriptions such as ``"450.5 nm"``.

Every file is written under a temporary name beside its target and renamed into place once
complete (the sidecar is renamed before the ``.tif``). A full disk raises
:class:`~hsi.errors.DiskFullError`; GDAL's messages go to the ``rasterio`` logger, not stderr.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hsi._atomic import atomic_path, is_disk_full, tmp_prefix, write_bytes_atomic
from hsi._pages import release_mapped, row_strips
from hsi.errors import CubeFormatError, HSIError, ShapeMismatchError, WavelengthError
from hsi.io.geotiff import CLASS_NAMES_TAG, FORMAT_TAG, category_names  # what the reader recognises

__all__ = ["CLASS_NAMES_TAG", "read_label_classes", "write_cube_gtiff", "write_float_tif", "write_label_cog"]

#: side in pixels of a COG tile (GDAL's default) and of the tiles of the float maps
COG_BLOCK = 512
FLOAT_BLOCK = 256
#: bytes of pixel data written per block of rows (each block's source pages and copy are held
#: while it is written: 1 MB keeps that the same from a 1024^2 class map up, in the same time as 4 MB)
BLOCK_BYTES = 1 << 20
#: bytes a cube tile aims at (all bands of a pixel-interleaved tile)
CUBE_TILE_BYTES = 1 << 20
#: a GDAL write error with less than this free beside the file is a full disk (GDAL's errors carry no errno)
FULL_MARGIN = 16 << 20
_GDAL_LOGGER = "rasterio"

Progress = Callable[[int, int], None]
#: zlib level of every deflated file: 1, not GDAL's 6, because a map is written once per run
#: and 6 bought almost nothing (2048 x 2048 float32 confidence: 0.27 s and 12.2 MB at 6,
#: 0.18 s and 12.1 MB at 1); any deflate reader opens either
DEFLATE_LEVEL = 1
#: MB of GDAL block cache while a class map COG is built: GDAL's default is 5 % of the machine's
#: memory, so the overview pass kept more blocks the larger the map (peak RSS of the write,
#: one process each: 28 / 34 / 60 MB at 1024^2 / 2048^2 / 4096^2 by default, 28 / 30 / 38 MB
#: with 8, in the same time and to the same bytes)
COG_CACHE_MB = 8


# ---------------------------------------------------------------- common
def _profile(georef: Any, shape: tuple[int, int], count: int, dtype: np.dtype, block: int) -> dict[str, Any]:
    """Creation options of a tiled, deflated GTiff on ``georef``'s grid (none: pixel coordinates)."""
    crs, transform = (None, None) if georef is None else georef.to_rasterio()
    profile: dict[str, Any] = {
        "driver": "GTiff", "height": int(shape[0]), "width": int(shape[1]), "count": int(count),
        "dtype": np.dtype(dtype).name, "tiled": True, "blockxsize": block, "blockysize": block,
        "compress": "deflate", "zlevel": DEFLATE_LEVEL, "predictor": 3 if np.dtype(dtype).kind == "f" else 2,
        "BIGTIFF": "IF_SAFER",
    }
    if georef is not None:
        profile.update(crs=crs, transform=transform)
    return profile


def _area_or_point(georef: Any) -> dict[str, str]:
    return {} if georef is None else {"AREA_OR_POINT": "Point" if georef.pixel_is == "point" else "Area"}


class _NoSpace(logging.Handler):
    """Remembers whether GDAL said "No space left" while a file was written (its exceptions do not)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        self.seen = self.seen or "No space left" in record.getMessage()


@contextlib.contextmanager
def _gdal_write(path: Path, what: str) -> Iterator[None]:
    """Quiet GDAL (messages to the ``rasterio`` logger) and turn a full disk into :class:`DiskFullError`.

    Enter it inside :func:`~hsi._atomic.atomic_path`, so the partial file still fills the
    disk when an error is judged: GDAL reports a failed write without an errno (libtiff
    prints "No space left" itself), so a write error with under :data:`FULL_MARGIN` free
    beside the file counts as a full disk too.
    """
    import rasterio
    from rasterio.errors import NotGeoreferencedWarning, RasterioError

    from hsi import transaction

    try:
        from rasterio._err import CPLE_BaseError
    except ImportError:  # pragma: no cover - rasterio's private module moved
        CPLE_BaseError = RasterioError  # noqa: N806
    handler = _NoSpace()
    logger = logging.getLogger(_GDAL_LOGGER)
    logger.addHandler(handler)
    try:
        with rasterio.Env(), warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)  # a map without georeference is allowed
            yield
    except HSIError:
        raise
    except (RasterioError, CPLE_BaseError, OSError, RuntimeError) as err:
        if handler.seen or is_disk_full(err) or _free_bytes(path.parent) < FULL_MARGIN:
            raise transaction.disk_full_error(path.parent, None, f"{what} {path.name}") from err
        if isinstance(err, (RasterioError, CPLE_BaseError)):
            raise CubeFormatError(f"{path}: GDAL could not write {what} ({err})") from err
        raise
    finally:
        logger.removeHandler(handler)


def _free_bytes(folder: Path) -> int:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return FULL_MARGIN


def _row_blocks(height: int, row_bytes: int, block: int) -> Iterator[slice]:
    """Blocks of whole tile rows of about :data:`BLOCK_BYTES` (a tile is compressed once)."""
    return row_strips(height, row_bytes, BLOCK_BYTES, multiple=block)


def _scratch(path: Path, suffix: str) -> Path:
    """An empty temporary file beside ``path`` (named so a later run removes it if this process dies)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=tmp_prefix(path), suffix=suffix)
    os.close(fd)
    return Path(name)


def _remove(*paths: Path) -> None:
    for p in paths:
        for q in (p, Path(f"{p}.aux.xml")):
            with contextlib.suppress(OSError):
                q.unlink()


# ---------------------------------------------------------------- class maps
def _check_label_inputs(labels: Any, class_names: Sequence[str], palette: Any) -> tuple[list[str], np.ndarray]:
    if labels.ndim != 2 or not np.issubdtype(labels.dtype, np.integer):
        raise ShapeMismatchError(f"write_label_cog: labels must be a 2-D integer map; found {labels.dtype} {labels.shape}")
    names = [str(n) for n in class_names]
    table = np.asarray(palette)
    if table.shape != (len(names), 3):
        raise ShapeMismatchError(f"write_label_cog: palette must be ({len(names)}, 3) for {len(names)} class names "
                                 f"(the first for id 0); found {table.shape}")
    if len(names) > 65536:
        raise ShapeMismatchError(f"write_label_cog: {len(names)} classes; a GeoTIFF colour table holds at most 65536")
    return names, np.clip(table.astype(np.int64), 0, 255).astype(np.uint8)


def _overview_count(shape: tuple[int, int], block: int) -> int:
    """Halvings until the map fits one tile, at least one (QGIS draws a zoomed-out view from it)."""
    size, count = max(shape), 0
    while size > block:
        size, count = -(-size // 2), count + 1
    return max(count, 1) if min(shape) >= 2 else 0


def _pam_xml(names: list[str], palette: np.ndarray) -> bytes:
    """The PAM sidecar: category names and a thematic raster attribute table (value, name, RGBA)."""
    root = ET.Element("PAMDataset")
    band = ET.SubElement(root, "PAMRasterBand", band="1")
    cats = ET.SubElement(band, "CategoryNames")
    for name in names:
        ET.SubElement(cats, "Category").text = name
    rat = ET.SubElement(band, "GDALRasterAttributeTable", tableType="thematic")
    # GDAL field types: 0 integer, 2 string; usages: 5 min-max (the pixel value), 2 name, 6-9 red..alpha
    columns = [("Value", 0, 5), ("Class", 2, 2), ("Red", 0, 6), ("Green", 0, 7), ("Blue", 0, 8), ("Alpha", 0, 9)]
    for index, (field, kind, usage) in enumerate(columns):
        defn = ET.SubElement(rat, "FieldDefn", index=str(index))
        ET.SubElement(defn, "Name").text = field
        ET.SubElement(defn, "Type").text = str(kind)
        ET.SubElement(defn, "Usage").text = str(usage)
    for value, name in enumerate(names):
        row = ET.SubElement(rat, "Row", index=str(value))
        red, green, blue = (int(v) for v in palette[value])
        for cell in (value, name, red, green, blue, 0 if value == 0 else 255):
            ET.SubElement(row, "F").text = str(cell)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8") + b"\n"


def write_label_cog(path: str | Path, labels: Any, class_names: Sequence[str], palette: Any,
                    georef: Any = None, *, block: int = COG_BLOCK) -> Path:
    """Write a class map as a Cloud-Optimized GeoTIFF with its colours and class names, atomically.

    Parameters
    ----------
    path : str or Path
        The ``.tif`` to write; ``<path>.aux.xml`` (category names, attribute table) is written beside it.
    labels : (H, W) integer array
        Class ids ``0..K``, 0 = unclassified (the file's nodata); a memory map is read in blocks of rows.
    class_names : sequence of str
        ``K + 1`` names, the first for id 0 (e.g. "Unclassified").
    palette : (K + 1, 3) array
        RGB colour (0-255) of each id; id 0 is transparent in the colour table.
    georef : hsi.io.georef.GeoRef, optional
        CRS and transform of the map (None: pixel coordinates).
    block : int
        Tile side in pixels (a multiple of 16).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ShapeMismatchError
        ``labels`` is not a 2-D integer map, the palette does not have one colour per name,
        or ids exceed the names.
    DiskFullError
        The disk filled up (nothing is left behind).
    """
    import rasterio

    path = Path(path)
    labels = labels if isinstance(labels, np.ndarray) else np.asarray(labels)
    names, colours = _check_label_inputs(labels, class_names, palette)
    dtype = np.dtype(np.uint8) if len(names) <= 256 else np.dtype(np.uint16)
    shape = (int(labels.shape[0]), int(labels.shape[1]))
    scratch = _scratch(path, ".src.tif")
    try:
        with _gdal_write(path, "the class map"):
            with rasterio.open(scratch, "w", **_profile(georef, shape, 1, dtype, block), nodata=0) as dst:
                top = _write_label_rows(dst, labels, dtype, block, len(names))
                dst.write_colormap(1, {i: (*(int(v) for v in colours[i]), 0 if i == 0 else 255)
                                       for i in range(len(names))})
                dst.update_tags(1, **{CLASS_NAMES_TAG: json.dumps(names)})
                dst.update_tags(**_area_or_point(georef), **{FORMAT_TAG: "hsi-labels"})
                dst.set_band_description(1, "class")
        if top >= len(names):
            raise ShapeMismatchError(f"write_label_cog: label ids reach {top} but there are {len(names)} "
                                     f"class names (ids 0..{len(names) - 1})")
        _copy_as_cog(scratch, path, "the class map", shape, block, "NEAREST", "NO",
                     after=lambda: write_bytes_atomic(Path(f"{path}.aux.xml"), _pam_xml(names, colours)))
    finally:
        _remove(scratch)
    return path


def _copy_as_cog(scratch: Path, path: Path, what: str, shape: tuple[int, int], block: int, resampling: str,
                 predictor: str, after: Callable[[], Any] | None = None) -> None:
    """Copy the GeoTIFF ``scratch`` to ``path`` as a COG with overviews (:func:`_overview_count`), atomically.

    Every map file with overviews goes through here, so they all have the same layout: the
    class map (``resampling`` NEAREST: no class is averaged into another) and the float maps
    (AVERAGE), with GDAL's COG ``predictor`` ("NO", or "YES": the floating-point predictor of a
    float map). Band descriptions, tags and nodata are carried over by the copy. ``after`` runs
    once the copy is complete, before it is renamed into place (the class map's sidecar).
    """
    import rasterio
    import rasterio.shutil

    with atomic_path(path, suffix=".tif") as tmp, _gdal_write(path, what), rasterio.Env(GDAL_CACHEMAX=COG_CACHE_MB):
        rasterio.shutil.copy(scratch, tmp, driver="COG", COMPRESS="DEFLATE", LEVEL=DEFLATE_LEVEL, BLOCKSIZE=block,
                             OVERVIEWS="IGNORE_EXISTING", OVERVIEW_RESAMPLING=resampling,
                             OVERVIEW_COUNT=_overview_count(shape, block), PREDICTOR=predictor, BIGTIFF="IF_SAFER")
        _remove(Path(f"{tmp}.aux.xml"))  # a sidecar GDAL left is named after the temporary file
        if after is not None:
            after()


def _write_label_rows(dst: Any, labels: np.ndarray, dtype: np.dtype, block: int, n_names: int) -> int:
    """Copy ``labels`` in blocks of rows; returns the largest id (refused ids stop the write early)."""
    from rasterio.windows import Window

    top = 0
    for rows in _row_blocks(labels.shape[0], labels.shape[1] * dtype.itemsize, block):
        part = np.asarray(labels[rows])
        if part.size:
            low, high = int(part.min()), int(part.max())
            if low < 0:
                raise ShapeMismatchError(f"write_label_cog: label ids must be >= 0; found {low}")
            top = max(top, high)
            if top >= n_names:
                return top
        dst.write(part.astype(dtype, copy=False), 1, window=Window(0, rows.start, labels.shape[1], part.shape[0]))
        release_mapped(labels, (rows.start, rows.stop))
    return top


def read_label_classes(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Class names and ``(K + 1, 3)`` uint8 colours of a class-map GeoTIFF (as :func:`write_label_cog` writes).

    The names come from GDAL's category names in ``<path>.aux.xml`` (what QGIS shows and
    edits), else from the band tag :data:`CLASS_NAMES_TAG`; the colours from the colour table.

    Raises
    ------
    CubeFormatError
        The file has no class names or no colour table.
    """
    import rasterio

    path = Path(path)
    names = category_names(path)
    try:
        with rasterio.Env(), rasterio.open(path) as src:
            tag = src.tags(1).get(CLASS_NAMES_TAG)
            try:
                colormap = src.colormap(1)
            except ValueError:
                colormap = None
    except rasterio.errors.RasterioIOError as err:
        raise CubeFormatError(f"{path}: not a readable GeoTIFF ({err})") from err
    if names is None and tag is not None:
        names = [str(n) for n in json.loads(tag)]
    if names is None:
        raise CubeFormatError(f"{path}: no class names (no category names in {path.name}.aux.xml and no "
                              f"{CLASS_NAMES_TAG!r} band tag); was it written by hsi infer?")
    if not colormap:
        raise CubeFormatError(f"{path}: no colour table on band 1")
    colours = np.array([colormap.get(i, (0, 0, 0, 0))[:3] for i in range(len(names))], dtype=np.uint8)
    return names, colours


# ---------------------------------------------------------------- float maps
def write_float_tif(path: str | Path, array: Any, georef: Any = None, *, nodata: float = float("nan"),
                    nodata_mask: Any = None, band_names: Sequence[str] | None = None,
                    block: int = FLOAT_BLOCK) -> Path:
    """Write an ``(H, W)`` or ``(H, W, K)`` map as a float32 Cloud-Optimized GeoTIFF, atomically.

    Tiled and deflated (floating-point predictor), with overviews averaged from the full
    resolution (NaN nodata left out), as :func:`write_label_cog` lays out the class map.

    Parameters
    ----------
    path : str or Path
        The ``.tif`` to write.
    array : (H, W) or (H, W, K) array
        The values (a memory map is read in blocks of rows).
    georef : hsi.io.georef.GeoRef, optional
        CRS and transform (None: pixel coordinates).
    nodata : float
        The file's nodata value, written at ``nodata_mask`` pixels (NaN by default, so no real
        value, 0 included, is mistaken for it).
    nodata_mask : (H, W) bool array, optional
        Pixels without a value (e.g. no-data pixels of the cube).
    band_names : sequence of str, optional
        One description per band (class names for probabilities).
    block : int
        Tile side in pixels (a multiple of 16).

    Returns
    -------
    Path
        ``path``.
    """
    import rasterio

    path = Path(path)
    data = array if isinstance(array, np.ndarray) else np.asarray(array)
    if data.ndim not in (2, 3):
        raise ShapeMismatchError(f"write_float_tif: {path.name} needs an (H, W) or (H, W, K) array; found {data.shape}")
    count = 1 if data.ndim == 2 else int(data.shape[2])
    shape = (int(data.shape[0]), int(data.shape[1]))
    if nodata_mask is not None and np.shape(nodata_mask) != shape:
        raise ShapeMismatchError(f"write_float_tif: nodata_mask {np.shape(nodata_mask)} for a map of {shape}")
    if band_names is not None and len(band_names) != count:
        raise ShapeMismatchError(f"write_float_tif: {len(band_names)} band names for {count} band(s)")
    scratch = _scratch(path, ".src.tif")
    try:
        with _gdal_write(path, "the map"):
            profile = {**_profile(georef, shape, count, np.dtype(np.float32), block), "nodata": nodata}
            with rasterio.open(scratch, "w", **profile) as dst:
                _write_float_rows(dst, data, shape, count, nodata, nodata_mask, block)
                for band, name in enumerate(band_names or (), start=1):
                    dst.set_band_description(band, str(name))
                dst.update_tags(**_area_or_point(georef), **{FORMAT_TAG: "hsi-map"})
        _copy_as_cog(scratch, path, "the map", shape, block, "AVERAGE", "YES")
    finally:
        _remove(scratch)
    return path


def _write_float_rows(dst: Any, data: np.ndarray, shape: tuple[int, int], count: int, nodata: float,
                      nodata_mask: Any, block: int) -> None:
    """Copy ``data`` into ``dst`` in blocks of rows through one float32 buffer, ``nodata`` at ``nodata_mask``."""
    from rasterio.windows import Window

    strips = list(_row_blocks(shape[0], shape[1] * count * 4, block))
    buffer = np.empty((max((r.stop - r.start for r in strips), default=0), shape[1], count), dtype=np.float32)
    for rows in strips:  # one buffer for every strip: the next copy never lives beside the last
        part = buffer[: rows.stop - rows.start]
        np.copyto(part, data[rows].reshape(part.shape), casting="unsafe")
        if nodata_mask is not None:
            part[np.asarray(nodata_mask[rows], dtype=bool)] = nodata
        dst.write(np.moveaxis(part, -1, 0), window=Window(0, rows.start, shape[1], part.shape[0]))
        release_mapped(data, (rows.start, rows.stop))


# ---------------------------------------------------------------- cubes
def _cube_block(n_bands: int, itemsize: int) -> int:
    """Tile side (multiple of 16, 16..512) whose pixel-interleaved tile of every band is about 1 MiB."""
    side = int(math.sqrt(CUBE_TILE_BYTES / max(n_bands * itemsize, 1))) // 16 * 16
    return min(max(side, 16), 512)


def _check_cube_wavelengths(wavelengths: Any, n_bands: int, path: Path) -> np.ndarray | None:
    if wavelengths is None:
        return None
    wl = np.asarray(wavelengths, dtype=np.float64).ravel()
    if wl.size != n_bands or not np.isfinite(wl).all():
        raise WavelengthError(f"write_cube_gtiff: {path.name}: {wl.size} wavelengths (finite: "
                              f"{bool(np.isfinite(wl).all())}) for a cube of {n_bands} bands; expected {n_bands} finite values")
    return wl


def write_cube_gtiff(path: str | Path, cube: Any, wavelengths: Any = None, georef: Any = None, *,
                     nodata: float | None = None, progress: Progress | None = None) -> Path:
    """Write a cube as a tiled, deflated, pixel-interleaved GeoTIFF with wavelength metadata, atomically.

    Parameters
    ----------
    path : str or Path
        The ``.tif`` to write.
    cube : (H, W, C) array or hsi.io.LazyCube
        An array (a memory map is fine) or anything with ``shape``, ``dtype`` and
        ``read_window(rows, cols)``; read one block of rows at a time.
    wavelengths : (C,) array, optional
        Band centres in nm: band metadata ``wavelength`` and ``wavelength_units = Nanometers``
        and descriptions such as ``"450.5 nm"``.
    georef : hsi.io.georef.GeoRef, optional
        CRS and transform (None: pixel coordinates).
    nodata : float, optional
        The file's nodata value; NaN for floating-point data when None (integer data: none).
    progress : callable, optional
        Called as ``progress(rows_done, rows_total)`` after each block of rows.

    Returns
    -------
    Path
        ``path``.
    """
    import rasterio
    from rasterio.windows import Window

    path = Path(path)
    shape = tuple(int(s) for s in cube.shape)
    if len(shape) != 3 or min(shape) < 1:
        raise ShapeMismatchError(f"write_cube_gtiff: {path.name}: cube has shape {shape}; expected (H, W, C)")
    dtype = np.dtype(getattr(cube, "dtype", np.float32))
    wl = _check_cube_wavelengths(wavelengths, shape[2], path)
    read = cube.read_window if hasattr(cube, "read_window") else (lambda rows, cols: np.asarray(cube[rows, cols]))
    if nodata is None and dtype.kind == "f":
        nodata = float("nan")
    block = _cube_block(shape[2], dtype.itemsize)
    with atomic_path(path, suffix=".tif") as tmp, _gdal_write(path, "the cube"):
        profile = {**_profile(georef, shape[:2], shape[2], dtype, block), "interleave": "pixel", "nodata": nodata}
        with rasterio.open(tmp, "w", **profile) as dst:
            for rows in _row_blocks(shape[0], shape[1] * shape[2] * dtype.itemsize, block):
                part = np.asarray(read(rows, slice(None)), dtype=dtype)
                dst.write(np.moveaxis(part, -1, 0), window=Window(0, rows.start, shape[1], part.shape[0]))
                if progress is not None:
                    progress(rows.stop, shape[0])
            for band in range(1, shape[2] + 1):
                if wl is not None:
                    dst.update_tags(band, wavelength=repr(float(wl[band - 1])), wavelength_units="Nanometers")
                    dst.set_band_description(band, f"{wl[band - 1]:.6g} nm")
            dst.update_tags(**_area_or_point(georef), **{FORMAT_TAG: "hsi-cube"})
        _remove(Path(f"{tmp}.aux.xml"))
    return path
