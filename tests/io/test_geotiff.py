"""GeoTIFF cubes and label maps: values, wavelengths, georeference, windows and broken files.

The files are written by the seeded ``geotiff_fixtures.py`` beside this test into a
temporary folder (tests cannot import each other, so it is loaded by path).
"""

from __future__ import annotations

import warnings

import h5py
import numpy as np
import pytest

pytest.importorskip("rasterio")

from hsi.errors import CubeFormatError, DataQualityWarning, GeoRefError  # noqa: E402
from hsi.io import open_cube, read_cube, read_labels  # noqa: E402
from hsi.io.georef import GeoRef, check_same_grid  # noqa: E402
from hsi.io.labels import read_label_georef  # noqa: E402



@pytest.fixture(scope="module")
def gt(tmp_path_factory, geotiff_module):
    files = geotiff_module.make_fixtures(tmp_path_factory.mktemp("geotiff"))
    files.module = geotiff_module
    return files


def _read(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # the NaN from nodata is warned about on purpose
        return read_cube(path, **kwargs)


def _expected(gt) -> np.ndarray:
    """What cube.tif holds: raw * scale + offset per band, NaN where raw is nodata."""
    m = gt.module
    values = gt.raw.astype(np.float64) * np.array(m.SCALES) + np.array(m.OFFSETS)
    values[gt.raw == m.NODATA] = np.nan
    return values


def test_cube_values_are_scaled_with_nodata_as_nan(gt):
    cube = _read(gt.cube)
    assert cube.shape == (12, 10, 6) and cube.data.dtype == np.float32
    np.testing.assert_allclose(cube.data, _expected(gt), rtol=1e-6, equal_nan=True)
    assert np.isnan(cube.data[0, 0]).all() and np.isnan(cube.data[3, 4, 2]) and not np.isnan(cube.data[3, 4, 1])
    assert cube.meta["n_ignored"] == 7 and cube.meta["ignore_value"] == gt.module.NODATA
    assert cube.meta["band_scale"] == pytest.approx(list(gt.module.SCALES))
    assert cube.meta["band_offset"] == pytest.approx(list(gt.module.OFFSETS))
    assert cube.meta["format"] == "geotiff"


def test_scale_false_gives_raw_values_and_a_number_replaces_the_file_scaling(gt):
    raw = _read(gt.cube, scale=False)
    expected = np.where(gt.raw == gt.module.NODATA, np.nan, gt.raw.astype(np.float32))
    np.testing.assert_array_equal(raw.data, expected)
    assert raw.meta["band_scale"] is None and raw.meta["band_offset"] is None
    divided = _read(gt.cube, scale=1000)
    np.testing.assert_allclose(divided.data, expected / 1000, rtol=1e-6)


def test_unscaled_file_records_no_band_scale(gt):
    cube = _read(gt.sidecar)
    assert cube.meta["band_scale"] is None and cube.meta["band_offset"] is None
    np.testing.assert_array_equal(cube.data, gt.raw.astype(np.float32))  # no nodata declared: -9999 stays


@pytest.mark.parametrize("name, source", [
    ("cube", "GDAL band metadata 'wavelength'"),
    ("imagery", "GDAL band metadata IMAGERY/CENTRAL_WAVELENGTH_UM"),
    ("desc_um", "band descriptions"),
    ("sidecar", "ENVI header sidecar.hdr beside the GeoTIFF"),
])
def test_wavelengths_from_each_source_come_out_ascending_in_nm(gt, name, source):
    cube = _read(getattr(gt, name))
    np.testing.assert_allclose(cube.wavelengths, gt.wavelengths)
    assert cube.meta["wavelength_source"] == source


def test_descending_wavelengths_reverse_the_bands(gt):
    cube = _read(gt.desc_um, scale=False)  # descriptions name 950 nm first
    assert cube.meta["reversed_bands"]
    expected = np.where(gt.raw == gt.module.NODATA, np.nan, gt.raw.astype(np.float32))[..., ::-1]
    np.testing.assert_array_equal(cube.data, expected)
    scaled = _read(gt.desc_um)  # band scale and offset follow their bands when these are reversed
    np.testing.assert_allclose(scaled.data, _expected(gt)[..., ::-1], rtol=1e-6, equal_nan=True)
    assert scaled.meta["band_offset"] == pytest.approx(list(gt.module.OFFSETS)[::-1])


def test_fwhm_comes_with_imagery_wavelengths(gt):
    assert _read(gt.imagery).meta["fwhm"] == pytest.approx([10.0] * 6)


def test_georeference_equals_the_written_one(gt):
    from rasterio.crs import CRS

    m = gt.module
    georef = _read(gt.cube).meta["georef"]
    assert isinstance(georef, GeoRef)
    assert CRS.from_wkt(georef.crs) == CRS.from_epsg(m.EPSG)
    assert georef.transform == (m.PIXEL, 0.0, m.ORIGIN[0], 0.0, -m.PIXEL, m.ORIGIN[1])
    assert georef.pixel_is == "area"
    assert _read(gt.plain).meta["georef"] is None  # identity grid without CRS: no georeference


def test_windows_equal_the_full_read_and_need_an_open_file(gt):
    full = _read(gt.desc_um).data
    lazy = open_cube(gt.desc_um)
    with lazy:
        window = lazy.read_window(slice(2, 7), slice(3, 10))
        assert window.shape == (5, 7, 6)
        np.testing.assert_array_equal(window, full[2:7, 3:10])
        np.testing.assert_array_equal(lazy.read_window(slice(11, 12), slice(0, 1)), full[11:12, 0:1])
    with pytest.raises(CubeFormatError, match="closed"):
        lazy.read_window(slice(0, 2), slice(0, 2))


def test_raw_array_reads_only_the_window_asked_for(gt, monkeypatch):
    from hsi.io.geotiff import open_geotiff

    source = open_geotiff(gt.cube)
    calls = []
    original = source.array.dataset.read
    monkeypatch.setattr(source.array.dataset, "read",
                        lambda indexes, window: calls.append((indexes, window)) or original(indexes, window=window))
    try:
        block = source.array[1:3, 4:6, 2:5]
    finally:
        source.close()
    np.testing.assert_array_equal(block, gt.raw[1:3, 4:6, 2:5])
    (indexes, window), = calls
    assert indexes == [3, 4, 5] and (window.row_off, window.col_off, window.height, window.width) == (1, 4, 2, 2)


def test_single_band_label_maps(gt):
    labels = read_labels(gt.labels)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, gt.label_values)
    expected = gt.label_values.astype(np.int64)
    expected[1, 1] = 0  # NaN nodata of the float map is unlabeled
    np.testing.assert_array_equal(read_labels(gt.labels_float), expected)


def test_label_readers_refuse_cubes_and_keys(gt):
    with pytest.raises(CubeFormatError, match=rf"{gt.cube}.*one band; this one has 6"):
        read_labels(gt.cube)
    with pytest.raises(CubeFormatError, match="key='gt' does not apply"):
        read_labels(gt.labels, key="gt")


def test_label_georef_same_grid_and_shifted_grid(gt):
    cube = _read(gt.cube).meta["georef"]
    labels = read_label_georef(gt.labels)
    check_same_grid(cube, labels, str(gt.cube), str(gt.labels))  # same grid: no error
    shifted = read_label_georef(gt.labels_shifted)
    assert shifted.transform[2] == cube.transform[2] + gt.module.PIXEL
    with pytest.raises(GeoRefError, match="labels_shifted.tif"):
        check_same_grid(cube, shifted, str(gt.cube), str(gt.labels_shifted))
    with pytest.raises(GeoRefError, match="no_crs.tif.*but no CRS"):
        read_label_georef(gt.no_crs)
    assert read_label_georef(gt.no_crs, georef="ignore") is None


def test_label_georef_of_envi_and_hdf5_labels(gt, tmp_path, io_files):
    georef = _read(gt.cube).meta["georef"]
    fields = georef.envi_fields()
    header, _ = io_files.write_envi(tmp_path, gt.label_values[..., None], name="gt", metadata=fields)
    assert read_label_georef(header).same_grid(georef)
    path = tmp_path / "gt.h5"
    with h5py.File(path, "w") as handle:
        handle["gt"] = gt.label_values
        handle["gt"].attrs.update(georef.h5_attrs())
    assert read_label_georef(path).same_grid(georef)
    scipy_io = pytest.importorskip("scipy.io")
    scipy_io.savemat(tmp_path / "gt.mat", {"gt": gt.label_values})
    assert read_label_georef(tmp_path / "gt.mat") is None


@pytest.mark.parametrize("name, error, message", [
    ("no_crs", GeoRefError, "but no CRS"),
    ("rotated", GeoRefError, "rotated or sheared grid"),
    ("nodata_uint8", CubeFormatError, r"nodata value -99.0 cannot occur in uint8 bands \(wrong nodata type\)"),
    ("nodata_nan_int16", CubeFormatError, r"nodata value nan cannot occur in int16 bands \(wrong nodata type\)"),
    ("complex", CubeFormatError, "complex GeoTIFF bands"),
    ("truncated", CubeFormatError, "not a readable GeoTIFF"),
    ("not_a_tiff", CubeFormatError, "unsupported file type: not a TIFF"),
    ("labels", CubeFormatError, "a single-band GeoTIFF is a label map; read it with read_labels"),
])
def test_broken_files_raise_naming_the_file(gt, name, error, message, capfd):
    path = getattr(gt, name)
    with pytest.raises(error, match=message) as info:
        _read(path)
    assert str(path) in str(info.value)
    assert "ERROR" not in capfd.readouterr().err  # GDAL's own messages do not reach stderr


@pytest.mark.parametrize("bigtiff", ["NO", "YES"])
def test_nodata_tag_is_read_from_classic_and_big_tiffs(tmp_path, bigtiff):
    """rasterio hides an out-of-range nodata value (None); the reader reads GDAL's tag itself."""
    import rasterio

    from hsi.io.geotiff import _raw_nodata_tag

    path = tmp_path / "n.tif"
    with rasterio.open(path, "w", driver="GTiff", height=2, width=2, count=2, dtype="float32",
                       nodata=-1.25e10, BIGTIFF=bigtiff, crs="EPSG:4326", transform=(0.5, 0, 10, 0, -0.5, 50)) as ds:
        ds.write(np.ones((2, 2, 2), np.float32))
    assert path.read_bytes()[2] == (43 if bigtiff == "YES" else 42)
    assert float(_raw_nodata_tag(path)) == -1.25e10  # longer than 4 bytes: stored outside the entry


@pytest.mark.parametrize("name", ["no_crs", "rotated"])
def test_ignore_georef_reads_broken_georeferences(gt, name):
    cube = _read(getattr(gt, name), georef="ignore")
    assert cube.meta["georef"] is None
    np.testing.assert_array_equal(cube.data, gt.small.astype(np.float32))


def test_inspect_shows_crs_transform_and_nodata(gt, capsys):
    from hsi.cli.inspect import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        assert main([str(gt.cube)]) == 0
    out = capsys.readouterr().out
    assert "georeference: WGS 84 / UTM zone 33N (EPSG:32633); pixel 30 x 30; upper-left corner (500000.000, " \
           "4500000.000)" in out
    assert "transform (a, b, c, d, e, f): (30, 0, 500000, 0, -30, 4500000)" in out and "nodata: -9999" in out
    assert "multiplied by the band scale 0.0001 (all bands)" in out
    assert main([str(gt.labels)]) == 0
    out = capsys.readouterr().out
    assert "label map: 12 x 10" in out and "EPSG:32633" in out and "nodata: 0" in out
    assert main([str(gt.no_crs)]) == 0  # a diagnostic: the broken georeference is reported, not fatal
    assert "georeference: unusable (" in capsys.readouterr().out
    assert main([str(gt.no_crs), "--ignore-georef"]) == 0
    assert "georeference: none" in capsys.readouterr().out


@pytest.mark.parametrize("scale", [-1e-4, 0.0])
def test_a_band_scale_that_is_not_positive_is_refused_naming_the_band(tmp_path, scale):
    from tests.io.geotiff_fixtures import C, OFFSETS, _write

    raw = np.random.default_rng(0).integers(0, 10000, size=(4, 5, C)).astype(np.int16)
    path = _write(tmp_path / "neg.tif", raw, scales=(1e-4,) * (C - 1) + (scale,), offsets=OFFSETS)
    with pytest.raises(CubeFormatError, match=rf"neg.tif: band {C} has scale .*expected a finite scale > 0"):
        read_cube(path)
