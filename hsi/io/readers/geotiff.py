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
        """Names of values 1..K from a class map's category names (its ``.aux.xml``, as QGIS and ``hsi infer``
        write them; value 0's, the background's, left out), or None."""
        from hsi.io.geotiff import category_names

        names = category_names(path)
        return names[1:] if names and len(names) > 1 else None
