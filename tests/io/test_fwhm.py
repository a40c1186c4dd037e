"""meta["fwhm"] / Cube.fwhm: band widths in nm aligned with the output bands, from ENVI, GeoTIFF and HDF5;
a malformed or wrong-length fwhm warns and is dropped."""

from __future__ import annotations

import warnings

import h5py
import numpy as np
import pytest

from hsi.errors import DataQualityWarning
from hsi.io import open_cube, read_cube

FWHM = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_envi_fwhm_follows_reversed_bands(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    wl = io_files.wavelengths(6)[::-1]
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"wavelength": list(wl), "fwhm": FWHM})
    out = read_cube(header)
    assert out.meta["reversed_bands"] is True
    assert out.fwhm.dtype == np.float64
    np.testing.assert_array_equal(out.fwhm, FWHM[::-1])
    with open_cube(header) as lazy:
        np.testing.assert_array_equal(lazy.fwhm, FWHM[::-1])
        assert lazy.meta["fwhm"] == out.meta["fwhm"]


def test_envi_fwhm_in_micrometres_sorted_and_without_bad_bands(tmp_path, io_files):
    cube = io_files.make_cube(shape=(4, 3, 16))
    wl_um = np.r_[0.400 + 0.010 * np.arange(8), 0.465 + 0.010 * np.arange(8)]  # two overlapping detectors
    fwhm_um = np.linspace(0.009, 0.012, 16)
    bbl = [1] * 15 + [0]
    header, _ = io_files.write_envi(tmp_path, cube, metadata={
        "wavelength": list(wl_um), "wavelength units": "Micrometers", "fwhm": list(fwhm_um), "bbl": bbl})
    out = read_cube(header, drop_bad_bands=True)
    order = [i for i in np.argsort(wl_um, kind="stable") if bbl[i]]
    np.testing.assert_allclose(out.fwhm, fwhm_um[order] * 1000)
    np.testing.assert_allclose(out.wavelengths, wl_um[order] * 1000)
    assert out.fwhm.shape == (out.n_bands,) == (15,)


@pytest.mark.parametrize("fwhm, problem", [
    ([1.0, 2.0, 3.0], "3 values for 6 bands"),
    ([1.0, 2.0, 3.0, -4.0, 5.0, 6.0], "value 3 is -4.0"),
    (["a", "b", "c", "d", "e", "f"], "malformed 'fwhm'"),
])
def test_bad_envi_fwhm_warns_and_is_dropped(tmp_path, io_files, fwhm, problem):
    cube = io_files.make_cube()
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"wavelength": list(io_files.wavelengths(6)),
                                                              "fwhm": fwhm})
    with pytest.warns(DataQualityWarning, match=problem):
        out = read_cube(header)
    assert out.meta["fwhm"] is None and out.fwhm is None
    assert out.wavelengths is not None and out.n_bands == 6  # optional metadata: the read goes on


def test_fwhm_without_wavelengths_warns(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(), metadata={"fwhm": FWHM})
    with pytest.warns(DataQualityWarning, match="no usable wavelengths"):
        assert read_cube(header, layout="HWC").fwhm is None


def test_no_fwhm_is_none(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(), metadata={"wavelength": list(range(400, 460, 10))})
    out = read_cube(header)
    assert "fwhm" in out.meta and out.meta["fwhm"] is None and out.fwhm is None


@pytest.fixture(scope="module")
def tiffs(geotiff_module):
    return geotiff_module


def _read(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        return read_cube(path, **kwargs)


def test_geotiff_band_tag_fwhm_reversed_with_descending_wavelengths(tiffs, tmp_path):
    raw = np.arange(4 * 3 * 6, dtype=np.int16).reshape(4, 3, 6)
    wl = [950.0, 850.0, 750.0, 650.0, 550.0, 450.0]
    path = tiffs._write(tmp_path / "desc.tif", raw, tags=[
        {"wavelength": f"{w:g}", "wavelength_units": "Nanometers", "fwhm": f"{f:g}"} for w, f in zip(wl, FWHM)])
    out = _read(path)
    assert out.meta["reversed_bands"] is True
    np.testing.assert_array_equal(out.fwhm, FWHM[::-1])
    np.testing.assert_array_equal(out.data, raw[..., ::-1].astype(np.float32))


def test_geotiff_per_band_units_convert_fwhm_band_by_band(tiffs, tmp_path):
    raw = np.zeros((4, 3, 2), dtype=np.int16)
    path = tiffs._write(tmp_path / "mixed.tif", raw, tags=[
        {"wavelength": "500", "wavelength_units": "nm", "fwhm": "10"},
        {"wavelength": "0.6", "wavelength_units": "um", "fwhm": "0.012"}])
    out = _read(path)
    np.testing.assert_allclose(out.wavelengths, [500.0, 600.0])
    np.testing.assert_allclose(out.fwhm, [10.0, 12.0])


def test_geotiff_sidecar_header_fwhm(tiffs, tmp_path):
    raw = np.zeros((4, 3, 3), dtype=np.int16)
    path = tiffs._write(tmp_path / "side.tif", raw)
    (tmp_path / "side.hdr").write_text("ENVI\nwavelength units = Micrometers\nwavelength = {0.5, 0.6, 0.7}\n"
                                       "fwhm = {0.01, 0.011, 0.012}\n")
    np.testing.assert_allclose(_read(path).fwhm, [10.0, 11.0, 12.0])
    (tmp_path / "side.hdr").write_text("ENVI\nwavelength = {500, 600, 700}\nfwhm = {x, y, z}\n")
    with pytest.warns(DataQualityWarning, match="malformed 'fwhm'"):
        out = read_cube(path)
    assert out.fwhm is None and out.wavelengths is not None  # the wavelengths are still used


def test_hdf5_fwhm_attribute(tmp_path, io_files):
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("cube", data=io_files.make_cube())
        ds.attrs["wavelengths"] = np.linspace(900, 400, 6)
        ds.attrs["fwhm"] = np.array(FWHM)
    out = read_cube(path)
    assert out.meta["reversed_bands"] is True
    np.testing.assert_array_equal(out.fwhm, FWHM[::-1])
