"""Seeded tiny GeoTIFFs for the GeoTIFF reader tests, good and deliberately broken (as torchgeo's data.py).

Run ``python tests/io/geotiff_fixtures.py FOLDER`` to write them into FOLDER; the tests call
:func:`make_fixtures` on a temporary folder, so no binary file is committed.

Good files: ``cube.tif`` (12 x 10 x 6 int16, per-band scale 1e-4 and offsets, nodata -9999,
EPSG:32633 with 30 m pixels, wavelengths in GDAL band metadata), ``desc_um.tif``
(wavelengths only in band descriptions, µm, descending; scaled as cube.tif), ``imagery.tif`` (GDAL IMAGERY
CENTRAL_WAVELENGTH_UM), ``sidecar.tif`` + ``sidecar.hdr`` (wavelengths in an ENVI header
beside it), ``plain.tif`` (no georeference at all), ``labels.tif`` (uint8 on the cube's
grid), ``labels_float.tif`` (float32 whole numbers, NaN nodata).
Broken ones: ``no_crs.tif`` (transform without CRS), ``rotated.tif``, ``nodata_uint8.tif``
(nodata -99 on uint8), ``nodata_nan_int16.tif`` (NaN on int16), ``labels_shifted.tif``
(labels one pixel east of the cube's grid), ``complex.tif``, ``truncated.tif``,
``not_a_tiff.tif``.
"""

from __future__ import annotations

import struct
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

H, W, C = 12, 10, 6
EPSG = 32633
PIXEL = 30.0
ORIGIN = (500000.0, 4500000.0)
NODATA = -9999
WAVELENGTHS = np.array([450.0, 550.0, 650.0, 750.0, 850.0, 950.0])
SCALES = (1e-4,) * C
OFFSETS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.01)


def north_up(x: float, y: float):
    """The affine transform of a north-up grid of PIXEL-sized pixels with upper-left corner (x, y)."""
    from affine import Affine

    return Affine(PIXEL, 0.0, x, 0.0, -PIXEL, y)


def _write(path: Path, data: np.ndarray, *, crs=f"EPSG:{EPSG}", transform=None, nodata=None,
           **band_setup) -> Path:
    """Write (H, W, C) or (H, W) ``data``.

    ``band_setup``: ``tags`` / ``imagery`` (a dict per band), ``descriptions``, ``scales`` with ``offsets``.
    """
    import rasterio
    from rasterio.errors import NotGeoreferencedWarning

    bands = data[..., None] if data.ndim == 2 else data
    profile = {"driver": "GTiff", "height": bands.shape[0], "width": bands.shape[1], "count": bands.shape[2],
               "dtype": bands.dtype.name}
    if crs is not None:
        profile["crs"] = crs
    if transform is not False:
        profile["transform"] = transform or north_up(*ORIGIN)
    if nodata is not None:
        profile["nodata"] = nodata
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)  # plain.tif has no georeference on purpose
        with rasterio.open(path, "w", **profile) as ds:
            ds.write(np.moveaxis(bands, -1, 0))
            for i, tags in enumerate(band_setup.get("tags", []), start=1):
                ds.update_tags(i, **tags)
            for i, tags in enumerate(band_setup.get("imagery", []), start=1):
                ds.update_tags(i, ns="IMAGERY", **tags)
            for i, text in enumerate(band_setup.get("descriptions", []), start=1):
                ds.set_band_description(i, text)
            if "scales" in band_setup:
                ds.scales = band_setup["scales"]
                ds.offsets = band_setup["offsets"]
    return path


def patch_nodata_tag(path: Path, text: bytes) -> None:
    """Overwrite GDAL's nodata tag (42113) in place with ``text`` of the same length.

    rasterio refuses to write a nodata value its dtype cannot hold; GDAL reads one from
    files other tools wrote, so the broken fixtures are made by editing the tag.
    """
    data = bytearray(path.read_bytes())
    assert data[:4] == b"II*\x00", "classic little-endian TIFF expected"
    ifd = struct.unpack_from("<I", data, 4)[0]
    for i in range(struct.unpack_from("<H", data, ifd)[0]):
        pos = ifd + 2 + 12 * i
        tag, _, count = struct.unpack_from("<HHI", data, pos)
        if tag == 42113:
            assert count == len(text) <= 4, (count, text)
            data[pos + 8:pos + 8 + count] = text
            path.write_bytes(bytes(data))
            return
    raise AssertionError(f"{path}: no nodata tag to patch")


def make_fixtures(folder: Path, seed: int = 0) -> SimpleNamespace:
    """Write every fixture into ``folder``; returns their paths and the values written."""
    from affine import Affine

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 10000, size=(H, W, C)).astype(np.int16)
    raw[0, 0, :] = NODATA
    raw[3, 4, 2] = NODATA
    labels = rng.integers(0, 5, size=(H, W)).astype(np.uint8)
    small = rng.integers(1, 200, size=(4, 3, 3)).astype(np.uint8)
    f = SimpleNamespace(folder=folder, raw=raw, label_values=labels, small=small, wavelengths=WAVELENGTHS)
    f.cube = _write(folder / "cube.tif", raw, nodata=NODATA, scales=SCALES, offsets=OFFSETS,
                    tags=[{"wavelength": f"{w:g}", "wavelength_units": "Nanometers"} for w in WAVELENGTHS])
    f.desc_um = _write(folder / "desc_um.tif", raw, nodata=NODATA, scales=SCALES, offsets=OFFSETS,
                       descriptions=[f"Band {i + 1} ({w / 1000:.3f} µm)" for i, w in enumerate(WAVELENGTHS[::-1])])
    f.imagery = _write(folder / "imagery.tif", raw,
                       imagery=[{"CENTRAL_WAVELENGTH_UM": f"{w / 1000:g}", "FWHM_UM": "0.01"} for w in WAVELENGTHS])
    f.sidecar = _write(folder / "sidecar.tif", raw)
    (folder / "sidecar.hdr").write_text(
        "ENVI\nwavelength units = Nanometers\nwavelength = {" + ", ".join(f"{w:g}" for w in WAVELENGTHS) + "}\n")
    f.plain = _write(folder / "plain.tif", small, crs=None, transform=False)
    f.labels = _write(folder / "labels.tif", labels, nodata=0)
    as_float = labels.astype(np.float32)
    as_float[1, 1] = np.nan
    f.labels_float = _write(folder / "labels_float.tif", as_float, nodata=float("nan"))
    f.labels_shifted = _write(folder / "labels_shifted.tif", labels,
                              transform=north_up(ORIGIN[0] + PIXEL, ORIGIN[1]))
    f.no_crs = _write(folder / "no_crs.tif", small, crs=None)
    f.rotated = _write(folder / "rotated.tif", small, transform=Affine(PIXEL, 5.0, ORIGIN[0], 5.0, -PIXEL, ORIGIN[1]))
    f.nodata_uint8 = _write(folder / "nodata_uint8.tif", small, nodata=100)
    patch_nodata_tag(f.nodata_uint8, b"-99\x00")
    f.nodata_nan_int16 = _write(folder / "nodata_nan_int16.tif", small.astype(np.int16), nodata=100)
    patch_nodata_tag(f.nodata_nan_int16, b"nan\x00")
    f.complex = _write(folder / "complex.tif", small[..., :2].astype(np.complex64))
    f.truncated = folder / "truncated.tif"
    f.truncated.write_bytes(f.cube.read_bytes()[: f.cube.stat().st_size // 2])
    f.not_a_tiff = folder / "not_a_tiff.tif"
    f.not_a_tiff.write_text("this is not a TIFF\n")
    return f


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/io/geotiff_fixtures.py FOLDER")
    print("\n".join(sorted(str(p) for p in vars(make_fixtures(Path(sys.argv[1]))).values() if isinstance(p, Path))))
