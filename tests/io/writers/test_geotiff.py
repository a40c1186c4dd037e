"""GeoTIFF writers: the class-map COG (layout, colours, class names as GDAL sees them), float maps, cubes, convert."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from rasterio.crs import CRS  # noqa: E402

from hsi.errors import DiskFullError, OptionError, OverwriteError, ShapeMismatchError  # noqa: E402
from hsi.io.georef import GeoRef  # noqa: E402
from hsi.io.writers.geotiff import (  # noqa: E402
    read_label_classes,
    write_cube_gtiff,
    write_float_tif,
    write_label_cog,
)

UTM = GeoRef(CRS.from_epsg(32610).to_wkt(), (2.0, 0.0, 500000.0, 0.0, -2.0, 4000000.0))
NAMES = ["Unclassified", "corn, notill", "grass & trees", "water"]
PALETTE = np.array([[0, 0, 0], [230, 25, 75], [60, 180, 75], [0, 130, 200]], dtype=np.uint8)


def _labels(shape=(40, 30), n=4, seed=0):
    return np.random.default_rng(seed).integers(0, n, size=shape).astype(np.uint8)


def _same_place(src, georef):
    assert src.crs == CRS.from_wkt(georef.crs)
    assert tuple(src.transform)[:6] == georef.transform


def test_label_cog_layout_colours_names_and_georef(tmp_path):
    labels = np.kron(_labels((20, 15)), np.ones((2, 2), np.uint8))  # 2 x 2 blocks: any nearest overview is labels[::2, ::2]
    path = write_label_cog(tmp_path / "labels.tif", labels, NAMES, PALETTE, UTM, block=16)
    with rasterio.open(path) as src:
        np.testing.assert_array_equal(src.read(1), labels)
        _same_place(src, UTM)
        assert src.dtypes == ("uint8",) and src.nodata == 0
        assert src.profile["tiled"] and src.block_shapes == [(16, 16)]
        assert src.tags(ns="IMAGE_STRUCTURE")["LAYOUT"] == "COG" and src.compression.name == "deflate"
        assert src.overviews(1) == [2, 4]  # nearest-neighbour pyramid down to one tile
        np.testing.assert_array_equal(src.read(1, out_shape=(20, 15)), labels[::2, ::2])  # class ids, not averages
        assert src.colormap(1)[0][3] == 0 and src.colormap(1)[1] == (230, 25, 75, 255)
        assert json.loads(src.tags(1)["class_names"]) == NAMES  # travels inside the .tif
    names, colours = read_label_classes(path)
    assert names == NAMES
    np.testing.assert_array_equal(colours, PALETTE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.tif", "labels.tif.aux.xml"]  # no temporaries


def test_gdal_itself_reads_the_category_names_and_attribute_table(tmp_path):
    """GDAL's VRT copy writes out what GDAL read from the band: QGIS reads the same API."""
    import rasterio.shutil

    path = write_label_cog(tmp_path / "labels.tif", _labels(), NAMES, PALETTE, UTM)
    rasterio.shutil.copy(path, tmp_path / "seen.vrt", driver="VRT")
    band = ET.parse(tmp_path / "seen.vrt").getroot().find("VRTRasterBand")
    assert [c.text for c in band.find("CategoryNames")] == NAMES
    rows = band.find("GDALRasterAttributeTable").findall("Row")
    assert [[f.text for f in row] for row in rows][2] == ["2", "grass & trees", "60", "180", "75", "255"]


def test_the_cog_is_built_with_a_fixed_gdal_block_cache(tmp_path, monkeypatch):
    """GDAL's default cache grows with the machine, and the overview pass fills more of it the larger the map."""
    import rasterio.shutil

    from hsi.io.writers import geotiff as geotiff_write

    seen = []
    copy = rasterio.shutil.copy

    def recording_copy(*args, **kwargs):
        seen.append(rasterio.env.getenv().get("GDAL_CACHEMAX"))
        return copy(*args, **kwargs)

    monkeypatch.setattr(rasterio.shutil, "copy", recording_copy)
    write_label_cog(tmp_path / "labels.tif", _labels(), NAMES, PALETTE, UTM)
    assert seen == [geotiff_write.COG_CACHE_MB]
    with rasterio.open(tmp_path / "labels.tif") as src:
        assert src.read(1).tolist() == _labels().tolist()


@pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")
def test_many_classes_give_uint16_and_bad_maps_are_refused(tmp_path):
    names = [f"c{i}" for i in range(300)]
    palette = np.stack([np.arange(300) % 256] * 3, axis=1)
    labels = np.arange(300 * 2, dtype=np.uint16).reshape(20, 30) % 300
    write_label_cog(tmp_path / "big.tif", labels, names, palette, None)
    with rasterio.open(tmp_path / "big.tif") as src:
        assert src.dtypes == ("uint16",) and src.crs is None
        np.testing.assert_array_equal(src.read(1), labels)
    assert read_label_classes(tmp_path / "big.tif")[0] == names
    with pytest.raises(ShapeMismatchError, match="ids reach 4 but there are 4 class names"):
        write_label_cog(tmp_path / "bad.tif", np.full((3, 3), 4), NAMES, PALETTE, UTM)
    with pytest.raises(ShapeMismatchError, match=r"\(4, 3\)"):
        write_label_cog(tmp_path / "bad.tif", np.ones((3, 3), int), NAMES, PALETTE[:3], UTM)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.tif", "big.tif.aux.xml"]  # refused: no file, no scratch


def test_float_maps_nodata_nan_band_names(tmp_path):
    rng = np.random.default_rng(1)
    probs = rng.random((25, 18, 3)).astype(np.float16)
    probs[0, 0] = 0  # a real zero stays a value; only the masked pixel is nodata
    mask = np.zeros((25, 18), bool)
    mask[4, 5] = True
    write_float_tif(tmp_path / "p.tif", probs, UTM, nodata_mask=mask, band_names=NAMES[1:])
    with rasterio.open(tmp_path / "p.tif") as src:
        data = np.moveaxis(src.read(), 0, -1)
        _same_place(src, UTM)
        assert src.dtypes == ("float32",) * 3 and np.isnan(src.nodata) and src.descriptions == tuple(NAMES[1:])
        assert src.profile["tiled"] and src.compression.name == "deflate"
    assert np.isnan(data[4, 5]).all() and (data[0, 0] == 0).all()
    keep = ~mask
    np.testing.assert_array_equal(data[keep], probs[keep].astype(np.float32))


def test_float_map_in_row_blocks_through_one_buffer(tmp_path, monkeypatch):
    """Every block of rows is copied into one reused buffer: the last, shorter block and the nodata of one
    block never reach another."""
    import hsi.io.writers.geotiff as gw

    monkeypatch.setattr(gw, "BLOCK_BYTES", 1)  # one 16-row tile row per block: 16, 16, 16, then 2 rows
    values = np.lib.format.open_memmap(tmp_path / "conf.npy", mode="w+", dtype=np.float16, shape=(50, 21, 2))
    values[:] = np.random.default_rng(4).random((50, 21, 2))
    mask = np.zeros((50, 21), bool)
    mask[3, 4] = mask[49, 20] = True  # the first block and the last, shorter one
    write_float_tif(tmp_path / "c.tif", values, UTM, nodata_mask=mask, block=16)
    with rasterio.open(tmp_path / "c.tif") as src:
        data = np.moveaxis(src.read(), 0, -1)
    assert np.isnan(data[mask]).all() and not np.isnan(data[~mask]).any()  # row 19 (block 2, col 4) kept its value
    np.testing.assert_array_equal(data[~mask], np.asarray(values)[~mask].astype(np.float32))


def test_cube_gtiff_wavelength_metadata_blocks_and_georef(tmp_path, monkeypatch):
    import hsi.io.writers.geotiff as gw

    monkeypatch.setattr(gw, "BLOCK_BYTES", 1)  # 16 x 16 tiles, one tile row per block: the block loop is exercised
    monkeypatch.setattr(gw, "CUBE_TILE_BYTES", 16 * 16 * 5 * 4)
    cube = np.random.default_rng(2).random((50, 21, 5)).astype(np.float32)
    cube[3, 4, 1] = np.nan
    wl = np.array([450.5, 500.0, 612.125, 700.0, 851.25])
    done = []
    write_cube_gtiff(tmp_path / "c.tif", cube, wl, UTM, progress=lambda r, t: done.append((r, t)))
    assert done == [(16, 50), (32, 50), (48, 50), (50, 50)]
    with rasterio.open(tmp_path / "c.tif") as src:
        np.testing.assert_array_equal(np.moveaxis(src.read(), 0, -1), cube)
        _same_place(src, UTM)
        assert [float(src.tags(b)["wavelength"]) for b in src.indexes] == wl.tolist()
        assert {src.tags(b)["wavelength_units"] for b in src.indexes} == {"Nanometers"}
        assert src.descriptions[2] == "612.125 nm" and np.isnan(src.nodata)
        assert src.block_shapes[0] == (16, 16) and src.profile["interleave"] == "pixel"


@pytest.fixture
def tiny_disk(small_disk):
    """A 1 MiB tmpfs (skipped where mounting is not permitted)."""
    return small_disk("1m")


def test_full_disk_is_disk_full_error_and_leaves_nothing(tiny_disk):
    noise = np.random.default_rng(3).random((700, 700), dtype=np.float32)  # ~2 MiB, incompressible
    with pytest.raises(DiskFullError, match="no space left"):
        write_float_tif(tiny_disk / "confidence.tif", noise, UTM)
    with pytest.raises(DiskFullError):
        write_label_cog(tiny_disk / "labels.tif", np.random.default_rng(3).integers(0, 200, (1100, 1100)),
                        [f"c{i}" for i in range(200)], np.zeros((200, 3)), UTM)
    assert os.listdir(tiny_disk) == []


# ---------------------------------------------------------------- hsi convert --to gtiff
def _rasterio_cube(path, cube, wl, georef):
    """A GeoTIFF cube as a third-party tool writes it (rasterio, band-interleaved, wavelength tags)."""
    crs, transform = georef.to_rasterio()
    with rasterio.open(path, "w", driver="GTiff", height=cube.shape[0], width=cube.shape[1], count=cube.shape[2],
                       dtype="float32", crs=crs, transform=transform) as dst:
        dst.write(np.moveaxis(cube, -1, 0))
        for band, w in enumerate(wl, start=1):
            dst.update_tags(band, wavelength=str(w), wavelength_units="Nanometers")


def test_geotiff_to_h5_and_back_keeps_data_wavelengths_georef(tmp_path):
    pytest.importorskip("hsi.io.geotiff")
    from hsi.io import read_cube
    from hsi.io.convert import convert

    cube = np.random.default_rng(4).random((33, 27, 4)).astype(np.float32)
    wl = [410.5, 520.25, 630.0, 940.75]
    georef = GeoRef(CRS.from_epsg(32633).to_wkt(), (30.0, 0.0, 399960.0, 0.0, -30.0, 5000040.0))
    _rasterio_cube(tmp_path / "in.tif", cube, wl, georef)
    convert(tmp_path / "in.tif", tmp_path / "mid.h5", "h5")
    report = convert(tmp_path / "mid.h5", tmp_path / "back.tif", "gtiff")
    assert report.to == "gtiff" and report.windows_checked == report.windows_total == 1
    for name in ("mid.h5", "back.tif"):
        got = read_cube(tmp_path / name)
        np.testing.assert_array_equal(got.data, cube)
        assert got.wavelengths.tolist() == wl
        assert got.meta["georef"].same_grid(georef, tolerance=0) and got.meta["georef"].pixel_is == "area"
    with rasterio.open(tmp_path / "back.tif") as src:
        _same_place(src, georef)
    convert(tmp_path / "back.tif", tmp_path / "npy", "npy")
    assert GeoRef.from_dict(json.loads((tmp_path / "npy" / "meta.json").read_text())["georef"]).same_grid(georef)


def test_convert_gtiff_refusals(tmp_path):
    from hsi.io.convert import convert
    from hsi.io.writers.hdf5 import write_h5

    write_h5(tmp_path / "a.h5", np.ones((8, 8, 3), np.float32) * np.arange(3), wavelengths=[400, 500, 600],
             georef=UTM)
    with pytest.raises(OptionError, match=r"\.tif or \.tiff"):
        convert(tmp_path / "a.h5", tmp_path / "a.img", "gtiff")
    with pytest.raises(OptionError, match="labels_path.*GeoTIFF holds the cube alone"):
        convert(tmp_path / "a.h5", tmp_path / "a.tif", "gtiff", labels_path=tmp_path / "a.h5")
    (tmp_path / "mine.tif").write_bytes(b"II*\x00")
    with pytest.raises(OverwriteError, match="not a GeoTIFF cube written by hsi"):
        convert(tmp_path / "a.h5", tmp_path / "mine.tif", "gtiff", overwrite=True)
    assert (tmp_path / "mine.tif").read_bytes() == b"II*\x00"


def test_verify_refuses_an_output_on_another_grid(tmp_path):
    from hsi.errors import IntegrityError
    from hsi.io.verify import verify_conversion
    from hsi.io.writers.hdf5 import write_h5

    cube = np.ones((8, 8, 3), np.float32) * np.arange(3)
    write_h5(tmp_path / "a.h5", cube, wavelengths=[400, 500, 600], georef=UTM)
    write_cube_gtiff(tmp_path / "b.tif", cube, [400, 500, 600], UTM.shifted(0, 1))
    with pytest.raises(IntegrityError, match="georeference .* differs"):
        verify_conversion(tmp_path / "a.h5", tmp_path / "b.tif", n_windows=4)
