"""Where a cube lies on the map: :class:`GeoRef`, a CRS plus a north-up affine transform.

A georeference travels in ``Cube.meta["georef"]`` (and ``LazyCube.meta``) from every reader
that finds one: ENVI ``map info`` / ``coordinate system string``, GeoTIFF, and HDF5
attributes (``crs``, ``transform``, ``pixel_is``, as :func:`hsi.io.write_h5` writes them).
Writers put it back: GeoTIFF and ENVI outputs of ``hsi infer``, ``write_h5``, ``hsi convert``.

The transform is GDAL's affine in rasterio's order ``(a, b, c, d, e, f)``: the corner of
pixel ``(row, col)`` lies at ``x = a * col + b * row + c``, ``y = d * col + e * row + f``.
It always refers to pixel corners; ``pixel_is`` only records whether the producer meant
values at pixel areas or at points (GeoTIFF ``AREA_OR_POINT``), and is written back as such.
Only north-up grids (``b == d == 0``) are supported: a rotated grid is refused by the readers
(:class:`hsi.errors.GeoRefError`) unless georeferencing is ignored.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, Mapping

from hsi.errors import DataQualityWarning, GeoRefError, OptionError

__all__ = ["GEOREF_POLICIES", "IGNORE_HINT", "GeoRef", "check_policy", "check_same_grid", "check_usable", "from_envi",
           "from_h5_attrs", "quiet_gdal"]

#: how readers treat a georeference: "check" refuses broken ones, "ignore" reads none at all
GEOREF_POLICIES = ("check", "ignore")
GeorefPolicy = Literal["check", "ignore"]
#: HDF5 attribute names of a georeference (on the cube dataset)
H5_ATTRS = ("crs", "transform", "pixel_is")
#: how to read without the georeference, in each place that can: the readers, the DataModule and
#: infer_scene, and the commands that have the option (hsi convert has none)
IGNORE_HINT = ("or read without georeferencing (read_cube(..., georef=\"ignore\"); ignore_georef=True for "
               "HSIDataModule and infer_scene; --ignore-georef for hsi train, infer, evaluate and inspect)")


def check_policy(policy: str) -> str:
    """``policy`` when it is one of :data:`GEOREF_POLICIES`; :class:`OptionError` otherwise."""
    if policy not in GEOREF_POLICIES:
        raise OptionError("georef", policy, f"one of {', '.join(GEOREF_POLICIES)}")
    return policy


@dataclass(frozen=True)
class GeoRef:
    """A north-up georeference: CRS (WKT, or None when unknown) and affine transform.

    Attributes
    ----------
    crs : str or None
        The coordinate reference system as WKT.
    transform : tuple of 6 float
        ``(a, b, c, d, e, f)`` as in rasterio's ``Affine`` (corner of pixel (0, 0) at ``(c, f)``).
    pixel_is : {"area", "point"}
        GeoTIFF's ``AREA_OR_POINT``: what the values stand for (the transform is corner-based either way).
    """

    crs: str | None
    transform: tuple[float, float, float, float, float, float]
    pixel_is: str = "area"

    def __post_init__(self) -> None:
        values = tuple(float(v) for v in self.transform)
        if len(values) != 6 or not all(math.isfinite(v) for v in values):
            raise GeoRefError(f"a georeference needs 6 finite transform values (a, b, c, d, e, f); found {self.transform!r}")
        if values[0] == 0 or values[4] == 0:
            raise GeoRefError(f"georeference transform {values} has a zero pixel size")
        object.__setattr__(self, "transform", values)
        object.__setattr__(self, "pixel_is", str(self.pixel_is).lower())
        if self.pixel_is not in ("area", "point"):
            raise GeoRefError(f"pixel_is must be 'area' or 'point'; found {self.pixel_is!r}")

    @property
    def pixel_size(self) -> tuple[float, float]:
        """``(x size, y size)`` of a pixel in CRS units (y positive for a north-up grid)."""
        return self.transform[0], -self.transform[4]

    @property
    def rotated(self) -> bool:
        """True when the grid is not north-up (a shear or rotation term)."""
        return self.transform[1] != 0 or self.transform[3] != 0

    @property
    def crs_name(self) -> str | None:
        """A short name of the CRS ("WGS 84 / UTM zone 10N"), or None when unknown."""
        if self.crs is None:
            return None
        match = re.match(r'\s*(?:PROJCS|GEOGCS|PROJCRS|GEOGCRS|GEODCRS)\s*\[\s*"([^"]*)"', self.crs)
        return match.group(1) if match else None

    def shifted(self, row0: int, col0: int) -> GeoRef:
        """The georeference of a window whose first pixel is ``(row0, col0)`` of this grid."""
        a, b, c, d, e, f = self.transform
        return replace(self, transform=(a, b, c + a * col0 + b * row0, d, e, f + d * col0 + e * row0))

    def pixel_centres(self, rows: Any, cols: Any) -> tuple[Any, Any]:
        """Map coordinates ``(x, y)`` of the centres of pixels at ``rows``, ``cols`` (north-up grids)."""
        a, _, c, _, e, f = self.transform
        return c + a * (cols + 0.5), f + e * (rows + 0.5)

    def same_grid(self, other: GeoRef, tolerance: float = 1e-3) -> bool:
        """True when both grids coincide to ``tolerance`` of a pixel and their CRSs are equal."""
        if not _same_crs(self.crs, other.crs):
            return False
        size = max(abs(self.transform[0]), abs(self.transform[4]))
        scale = (size, size, size, size, size, size)
        return all(abs(x - y) <= tolerance * s for x, y, s in zip(self.transform, other.transform, scale))

    def describe(self) -> str:
        """One line: CRS, pixel size and the upper-left corner."""
        a, _, c, _, e, f = self.transform
        crs = self.crs_name or ("unknown CRS" if self.crs is None else "unnamed CRS")
        epsg = _epsg(self.crs)
        crs = f"{crs} (EPSG:{epsg})" if epsg else crs
        return f"{crs}; pixel {a:g} x {-e:g}; upper-left corner ({c:.3f}, {f:.3f}); pixel is {self.pixel_is}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"crs", "transform", "pixel_is"}`` (checkpoints, manifests)."""
        out = asdict(self)
        out["transform"] = list(self.transform)
        return out

    @classmethod
    def from_dict(cls, value: Mapping[str, Any] | None) -> GeoRef | None:
        """The inverse of :meth:`to_dict` (None stays None)."""
        if value is None:
            return None
        return cls(value.get("crs"), tuple(value["transform"]), value.get("pixel_is", "area"))

    def h5_attrs(self) -> dict[str, Any]:
        """The HDF5 attributes :func:`from_h5_attrs` reads back."""
        return {"crs": self.crs or "", "transform": list(self.transform), "pixel_is": self.pixel_is}

    def to_rasterio(self) -> tuple[Any, Any]:
        """``(rasterio.crs.CRS or None, affine.Affine)``."""
        from affine import Affine
        from rasterio.crs import CRS

        return (None if self.crs is None else CRS.from_wkt(self.crs)), Affine(*self.transform)

    def envi_fields(self) -> dict[str, str]:
        """ENVI header ``map info`` (and ``coordinate system string`` when the CRS is known)."""
        a, _, c, _, e, f = self.transform
        name, extra = _envi_projection(self.crs)
        units = "Degrees" if name.startswith("Geographic") else "Meters"
        fields = {"map info": "{" + ", ".join([name, "1.000", "1.000", repr(c), repr(f), repr(a), repr(-e), *extra,
                                               f"units={units}"]) + "}"}
        if self.crs is not None:
            fields["coordinate system string"] = "{" + _esri_wkt(self.crs) + "}"
        return fields


def quiet_gdal() -> Any:
    """A rasterio environment: GDAL's messages become Python logging instead of lines on stderr."""
    import rasterio

    return rasterio.Env()


def _same_crs(one: str | None, two: str | None) -> bool:
    if one is None or two is None:
        return one is two
    if one == two:
        return True
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

    try:
        with quiet_gdal():
            return CRS.from_wkt(one) == CRS.from_wkt(two)
    except CRSError:
        return False


def _epsg(wkt: str | None) -> int | None:
    if wkt is None:
        return None
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

    try:
        with quiet_gdal():
            return CRS.from_wkt(wkt).to_epsg()
    except CRSError:
        return None


def _esri_wkt(wkt: str) -> str:
    """The ESRI dialect of WKT1 that ENVI headers hold."""
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

    try:
        with quiet_gdal():
            return CRS.from_wkt(wkt).to_wkt(version="WKT1_ESRI")
    except (CRSError, ValueError):
        return wkt


def _envi_projection(crs: str | None) -> tuple[str, list[str]]:
    """ENVI's projection name and fields for ``map info``: UTM with zone and datum, or "Geographic Lat/Lon"."""
    epsg = _epsg(crs)
    for datum, (north, south) in _UTM_EPSG.items():
        for base, hemisphere in ((north, "North"), (south, "South")):
            if base and epsg is not None and base + 1 <= epsg <= base + 60:
                return "UTM", [str(epsg - base), hemisphere, datum]
    for datum, code in _GEOGRAPHIC_EPSG.items():
        if epsg == code:
            return "Geographic Lat/Lon", [datum]
    return ("Arbitrary" if crs is None else "Custom"), []


#: EPSG bases of UTM zones (north, south) by ENVI datum name; zone z is base + z
_UTM_EPSG = {"WGS-84": (32600, 32700), "North America 1983": (26900, 0), "North America 1927": (26700, 0)}
_GEOGRAPHIC_EPSG = {"WGS-84": 4326, "North America 1983": 4269, "North America 1927": 4267}
_DATUM_ALIASES = {"wgs-84": "WGS-84", "wgs84": "WGS-84", "wgs 84": "WGS-84", "nad83": "North America 1983",
                  "north america 1983": "North America 1983", "nad27": "North America 1927",
                  "north america 1927": "North America 1927"}


def _map_info_crs(fields: list[str], where: str) -> str | None:
    """The WKT of the projection ``map info`` names (UTM or geographic on a known datum), or None."""
    from rasterio.crs import CRS

    name = fields[0].strip().lower()
    if name == "utm" and len(fields) >= 10:
        try:
            zone = int(float(fields[7]))
        except ValueError:
            return None
        north = fields[8].strip().lower().startswith("n")
        datum = _DATUM_ALIASES.get(fields[9].strip().lower())
        if datum is None or not 1 <= zone <= 60:
            return None
        base = _UTM_EPSG[datum][0 if north else 1]
        return CRS.from_epsg(base + zone).to_wkt() if base else None
    if name.startswith("geographic") and len(fields) >= 8:
        datum = _DATUM_ALIASES.get(fields[7].strip().lower())
        return CRS.from_epsg(_GEOGRAPHIC_EPSG[datum]).to_wkt() if datum else None
    return None


def _parse_wkt(text: Any, where: str) -> str | None:
    """The coordinate system string as WKT (None when absent); a string no CRS parser reads is an error."""
    if isinstance(text, (list, tuple)):  # spectral splits every header value at commas
        text = ",".join(str(v).strip() for v in text)
    if not text:
        return None
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

    try:
        with quiet_gdal():
            return CRS.from_wkt(str(text).strip().removeprefix("{").removesuffix("}")).to_wkt()
    except (CRSError, ValueError) as err:
        raise GeoRefError(f"{where}: 'coordinate system string' is not a CRS that GDAL reads ({err}); "
                          f"fix or remove it, {IGNORE_HINT}") from err


def from_envi(fields: Mapping[str, Any], where: str) -> GeoRef | None:
    """The georeference of an ENVI header (its ``map info`` and ``coordinate system string``), or None.

    ENVI draws with ``map info``: when it names UTM or geographic coordinates on a known
    datum, that CRS is used, and a ``coordinate system string`` that disagrees with it is
    warned about (Samson's has a semi-major axis of 637 km). Otherwise the coordinate
    system string gives the CRS. "Arbitrary" (pixel) coordinates are no georeference.

    Raises
    ------
    GeoRefError
        ``map info`` is malformed or rotated, or gives a projection without any CRS.
    """
    raw = fields.get("map info")
    if raw is None:
        return None
    items = [str(v).strip() for v in (raw if isinstance(raw, list) else str(raw).strip("{}").split(","))]
    if not items or items[0].lower() in ("arbitrary", "pixel", ""):
        return None
    named = [v for v in items if "=" not in v]
    options = dict(v.split("=", 1) for v in items if "=" in v)
    try:
        ref_x, ref_y, easting, northing, size_x, size_y = (float(v) for v in named[1:7])
    except ValueError as err:
        raise GeoRefError(f"{where}: 'map info' = {raw!r} does not hold reference pixel, coordinates and pixel size "
                          f"as numbers ({err}); {IGNORE_HINT}") from err
    rotation = float(options.get("rotation", "0").strip() or 0)
    if rotation != 0:
        raise GeoRefError(f"{where}: 'map info' has rotation={rotation:g}; only north-up grids are supported "
                          f"(resample the image north-up first, e.g. gdalwarp), {IGNORE_HINT}")
    from_map = _map_info_crs(named, where)
    from_string = _parse_wkt(fields.get("coordinate system string"), where)
    if from_map is not None and from_string is not None and not _same_crs(from_map, from_string):
        warnings.warn(
            f"{where}: 'coordinate system string' describes another CRS than 'map info' ({', '.join(named[:1] + named[7:])}); "
            f"using map info's, which ENVI draws with", DataQualityWarning, stacklevel=3,
        )
    crs = from_map or from_string
    if crs is None:
        raise GeoRefError(f"{where}: 'map info' names projection {named[0]!r} but hsi cannot tell its CRS (no "
                          f"'coordinate system string'); add one, {IGNORE_HINT}")
    transform = (size_x, 0.0, easting - (ref_x - 1) * size_x, 0.0, -size_y, northing + (ref_y - 1) * size_y)
    return GeoRef(crs, transform)


def from_h5_attrs(attrs: Mapping[str, Any], where: str) -> GeoRef | None:
    """The georeference in a dataset's :data:`H5_ATTRS`, or None when it has no ``transform``.

    Raises
    ------
    GeoRefError
        A transform that is not 6 numbers, or with no CRS, or rotated.
    """
    if "transform" not in attrs:
        return None
    import numpy as np

    values = np.asarray(attrs["transform"]).ravel()
    if values.size != 6 or values.dtype.kind not in "iuf":
        raise GeoRefError(f"{where}: attribute 'transform' must be 6 numbers (a, b, c, d, e, f); found "
                          f"{values.dtype} {values.shape}; {IGNORE_HINT}")
    crs = attrs.get("crs", "")
    crs = crs.decode() if isinstance(crs, bytes) else str(crs)
    pixel_is = attrs.get("pixel_is", "area")
    georef = GeoRef(_parse_wkt(crs, where) if crs else None, tuple(values.tolist()),
                    pixel_is.decode() if isinstance(pixel_is, bytes) else str(pixel_is))
    return check_usable(georef, where)


def check_usable(georef: GeoRef | None, where: str) -> GeoRef | None:
    """``georef`` when it has a CRS and a north-up grid; :class:`GeoRefError` naming ``where`` otherwise."""
    if georef is None:
        return None
    if georef.crs is None:
        raise GeoRefError(f"{where}: a map transform {georef.transform} but no CRS: the coordinates mean nothing "
                          f"without one; add the CRS, {IGNORE_HINT}")
    if georef.rotated:
        raise GeoRefError(f"{where}: a rotated or sheared grid (transform {georef.transform}); only north-up grids "
                          f"(b = d = 0) are supported; warp it north-up first (gdalwarp), {IGNORE_HINT}")
    return georef


def check_same_grid(cube: GeoRef | None, labels: GeoRef | None, cube_name: str, labels_name: str) -> None:
    """Raise :class:`GeoRefError` when a label map lies on another grid than its cube (both georeferenced)."""
    if cube is None or labels is None or cube.same_grid(labels):
        return
    raise GeoRefError(
        f"labels {labels_name} ({labels.describe()}) lie on another grid than cube {cube_name} ({cube.describe()}); "
        f"resample the labels onto the cube's grid (e.g. gdalwarp -tr/-te with nearest), {IGNORE_HINT}"
    )
