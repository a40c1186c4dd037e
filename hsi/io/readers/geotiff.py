"""The GeoTIFF reader: a multi-band file is a cube, a single-band one a label map; see :mod:`hsi.io.geotiff`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hsi.io.discovery import ArrayInfo
from hsi.io.readers.registry import Reader, register_reader
from hsi.io.source import RawSource


@register_reader
class GeoTiffReader(Reader):
    """GeoTIFF ``.tif``/``.tiff`` through rasterio, with CRS, transform, nodata and mask band."""

    name = "geotiff"
    description = "GeoTIFF .tif/.tiff"
    suffixes = frozenset({".tif", ".tiff"})
    carries_georef = True

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        from hsi.io.geotiff import open_geotiff

        return open_geotiff(path, georef=georef)

    def files(self, path: Path) -> list[Path]:
        """The ``.tif``, then the sidecars GDAL reads with it when present: ``<path>.aux.xml`` (PAM: category
        names, nodata, georeference) and ``<path>.msk`` (a mask band). Overviews (``.ovr``) are never read."""
        sidecars = [Path(f"{path}{ext}") for ext in (".aux.xml", ".msk")]
        return [path] + [s for s in sidecars if s.is_file()]

    def list_arrays(self, path: Path) -> list[ArrayInfo]:
        """The one raster ((H, W) for a single-band label map, which :meth:`open` refuses as a cube)."""
        from hsi.io.geotiff import geotiff_info

        info = geotiff_info(path, georef="ignore")
        return [ArrayInfo(path.name, tuple(info["shape"]), str(info["dtype"]))]

    def label_array(self, path: Path, key: str | None, prefer: Callable[[ArrayInfo], bool]
                    ) -> tuple[str | None, Any, int | None]:
        """The band as labels; a declared class map may hold up to the largest value of its dtype."""
        from hsi.io.geotiff import geotiff_info, read_label_band

        array = read_label_band(path)
        info = geotiff_info(path, georef="ignore")
        limit = None
        if info["class_map"] and np.issubdtype(np.dtype(info["dtype"]), np.integer):
            limit = int(np.iinfo(np.dtype(info["dtype"])).max)
        return None, array, limit

    def label_georef(self, path: Path, key: str | None) -> Any:
        from hsi.io.geotiff import geotiff_info

        return geotiff_info(path)["georef"]

    def label_nodata(self, path: Path) -> tuple[float | None, str | None]:
        from hsi.io.geotiff import geotiff_info

        info = geotiff_info(path, georef="ignore")
        return info["nodata"], info["mask"]

    def class_names(self, path: Path, key: str | None) -> list[str] | None:
        """Names of values 1..K (value 0's, the background's, left out; ``""`` for an unnamed value), or None.

        From the PAM sidecar ``<path>.aux.xml`` first, as GDAL and QGIS read and edit it: its
        category names, else its raster attribute table's name column
        (:func:`hsi.io.geotiff.attribute_table_names`); else the ``class_names`` band tag
        ``hsi infer`` writes inside the ``.tif`` (:func:`hsi.io.geotiff.class_names_tag`), so
        a map copied without its sidecar keeps its names.
        """
        from hsi.io.geotiff import attribute_table_names, category_names, class_names_tag

        names = category_names(path) or attribute_table_names(path) or class_names_tag(path)
        return names[1:] if names and any(names[1:]) else None
