"""hsi convert --bands / --wavelength-range: only the chosen bands, with their wavelengths, widths, no-data and
georeference; the band selection rules of hsi.io.bands; LazyCube.select_bands."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import OptionError
from hsi.io import open_cube, read_cube
from hsi.io.bands import bands_in_range, parse_band_spec
from hsi.io.convert import convert

#: the scene's no-data pixel is warned about on every read
pytestmark = pytest.mark.filterwarnings("ignore::hsi.errors.DataQualityWarning")

MAP_INFO = ["UTM", "1.000", "1.000", "612730.91", "4074488.708", "2.0", "2.0", "10", "North", "WGS-84",
            "units=Meters"]


@pytest.fixture
def envi_scene(tmp_path, io_files):
    """An int16 ENVI cube of 12 bands (400-510 nm) with band widths, a no-data value, a scale factor and a map."""
    cube = io_files.make_cube((20, 17, 12), dtype=np.int16, seed=4)
    cube[3, 5, :] = -9999  # a no-data pixel
    wl = io_files.wavelengths(12)
    fwhm = [5.0 + i for i in range(12)]
    header, _ = io_files.write_envi(tmp_path, cube, metadata={
        "wavelength": list(wl), "wavelength units": "nm", "fwhm": fwhm, "data ignore value": -9999,
        "reflectance scale factor": 1000, "map info": MAP_INFO})
    return header


@pytest.mark.parametrize("to", ["h5", "npy", "gtiff"])
@pytest.mark.parametrize(("options", "kept"), [({"bands": "0-2,5,9-10"}, [0, 1, 2, 5, 9, 10]),
                                               ({"wavelength_range": (425.0, 470.0)}, [3, 4, 5, 6, 7])])
def test_only_the_chosen_bands_are_written_with_their_metadata(envi_scene, tmp_path, to, options, kept):
    out = tmp_path / {"h5": "out.h5", "npy": "out_npy", "gtiff": "out.tif"}[to]
    report = convert(envi_scene, out, to, **options)
    source, back = read_cube(envi_scene), read_cube(out)
    assert report.shape == (20, 17, len(kept)) and back.data.shape == (20, 17, len(kept))
    assert np.array_equal(back.data, source.data[..., kept], equal_nan=True)  # scaled values, NaN no-data kept
    assert np.isnan(back.data[3, 5]).all() and not np.isnan(back.data[0, 0]).any()
    assert np.array_equal(back.wavelengths, source.wavelengths[kept])
    assert back.meta["georef"].same_grid(source.meta["georef"], tolerance=1e-9)
    if to != "gtiff":  # the band widths of the kept bands (a GeoTIFF carries wavelengths only)
        assert back.meta["fwhm"] == pytest.approx(np.asarray(source.meta["fwhm"])[kept].tolist())


def test_bands_are_counted_in_ascending_wavelength_order(tmp_path, io_files):
    cube = io_files.make_cube((6, 5, 5))
    header, _ = io_files.write_envi(tmp_path, cube[..., ::-1].copy(), metadata={"wavelength": [900, 800, 700, 600,
                                                                                               500]})
    convert(header, tmp_path / "out.h5", "h5", bands="0,1")  # the two shortest wavelengths: 500 and 600 nm
    back = read_cube(tmp_path / "out.h5")
    assert back.wavelengths.tolist() == [500.0, 600.0] and np.array_equal(back.data, cube[..., :2])


@pytest.mark.parametrize(("options", "option", "says"), [
    ({"bands": "0-3,12"}, "bands", r"below 12 \(the cube's band count\).*found index 12"),
    ({"bands": "5-2"}, "bands", "runs backwards"),
    ({"bands": "a-3"}, "bands", "'a-3' is not an index or a range"),
    ({"wavelength_range": (470.0, 420.0)}, "wavelength_range", "MIN < MAX"),
    ({"wavelength_range": (600.0, 700.0)}, "wavelength_range", "at least one band.*400.00-510.00 nm"),
    ({"bands": "1", "wavelength_range": (400.0, 500.0)}, "bands", "not both"),
])
def test_bad_selections_name_the_option_and_write_nothing(envi_scene, tmp_path, options, option, says):
    with pytest.raises(OptionError, match=says) as caught:
        convert(envi_scene, tmp_path / "out.h5", "h5", **options)
    assert caught.value.option == option
    assert not (tmp_path / "out.h5").exists()


def test_a_cube_without_wavelengths_cannot_be_cut_by_wavelength(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube())
    with pytest.raises(OptionError, match="band centre wavelengths.*declares none") as caught:
        convert(header, tmp_path / "out.h5", "h5", wavelength_range=(400.0, 500.0))
    assert caught.value.option == "wavelength_range"
    convert(header, tmp_path / "out.h5", "h5", bands="1-2")  # by index it can
    assert np.array_equal(read_cube(tmp_path / "out.h5").data, read_cube(header).data[..., 1:3])


def test_band_rules():
    wl = np.array([400.0, 450.0, 500.0, 550.0])
    assert bands_in_range(wl, (450, 550), "x").tolist() == [1, 2, 3]  # both ends inclusive
    assert parse_band_spec("3, 0-1,1", 4).tolist() == [0, 1, 3]  # ascending, each once
    assert parse_band_spec([2, 0], 4).tolist() == [0, 2]


def test_select_bands_reads_the_kept_bands_of_every_window(envi_scene):
    with open_cube(envi_scene) as whole:
        part = whole.select_bands([1, 4, 11])
        assert part.shape == (20, 17, 3) and part.wavelengths.tolist() == [410.0, 440.0, 510.0]
        assert part.fwhm.tolist() == [6.0, 9.0, 16.0]
        window = whole.read_window(slice(2, 9), slice(4, 10))
        assert np.array_equal(part.read_window(slice(2, 9), slice(4, 10)), window[..., [1, 4, 11]], equal_nan=True)
