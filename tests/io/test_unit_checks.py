"""Units and wavelengths are not accepted without a question: bad scale factors, a header that contradicts
itself, reflectance far above 1, wavelengths in another unit than their label, implausible band widths and an
HDF5 CF ``scale_factor`` that multiplies to nonsense each give one clear error or warning (see docs/your-data.md)."""

from __future__ import annotations

import warnings

import h5py
import numpy as np
import pytest

from hsi.errors import (
    CubeFormatError,
    DataQualityWarning,
    OptionError,
    UnitsWarning,
    WavelengthError,
)
from hsi.io import open_cube, read_cube
from hsi.io.bands import to_nanometers
from hsi.io.units import level_problem, typical_level

WL = [400.0, 410.0, 420.0, 430.0, 440.0, 450.0]


def _reflectance_x_10000() -> np.ndarray:
    """int16 reflectance x 10000: values 1000-6000, as many sensors store them."""
    return (np.random.default_rng(3).integers(1000, 6000, size=(12, 10, 6))).astype(np.int16)


def _h5(path, data, attrs):
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("cube", data=data)
        ds.attrs["layout"] = "HWC"
        for key, value in attrs.items():
            ds.attrs[key] = value
    return path


def _quiet_read(path, **kwargs):
    """read_cube with every warning recorded: ``(cube, [UnitsWarning messages])``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cube = read_cube(path, **kwargs)
    return cube, [str(w.message) for w in caught if issubclass(w.category, UnitsWarning)]


# --- scale factors <= 0 or not finite ----------------------------------------------------------------------------

@pytest.mark.parametrize("factor", [-10000, 0, "nan"])
def test_envi_reflectance_scale_factor_must_be_positive(tmp_path, io_files, factor):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(dtype=np.int16),
                                    metadata={"reflectance scale factor": factor})
    with pytest.raises(CubeFormatError) as info:
        read_cube(header)
    message = str(info.value)
    assert "field 'reflectance scale factor' is " in message and "image.hdr" in message
    assert f"is {float(factor):g};" in message and "expected a finite number > 0" in message
    raw = read_cube(header, scale=False)  # the way round it the message gives: values as stored
    assert raw.meta["scale_factor"] is None
    assert read_cube(header, scale=10000).meta["scale_factor"] == 10000.0


@pytest.mark.parametrize("scale", [-10000, -0.5, 0, float("nan"), float("inf")])
def test_scale_option_must_be_a_positive_number(tmp_path, io_files, scale):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(dtype=np.int16))
    with pytest.raises(OptionError, match=r"^scale: .*a finite number > 0 the values are divided by"):
        read_cube(header, scale=scale)
    with pytest.raises(OptionError, match=r"^scale: "):
        open_cube(header, scale=scale)


@pytest.mark.parametrize("attribute, value, where", [
    ("reflectance_scale_factor", -10000.0, "attribute 'reflectance_scale_factor' of 'cube' is -10000"),
    ("reflectance_scale_factor", np.nan, "attribute 'reflectance_scale_factor' of 'cube' is nan"),
    ("scale_factor", -1e-4, "attribute 'scale_factor' of 'cube' is -0.0001"),
    ("scale_factor", np.inf, "attribute 'scale_factor' of 'cube' is inf"),
    ("scale_factor", 0.0, "attribute 'scale_factor' of 'cube' is 0"),
])
def test_hdf5_scale_attributes_must_be_positive(tmp_path, io_files, attribute, value, where):
    path = _h5(tmp_path / "s.h5", io_files.make_cube(dtype=np.int16), {attribute: value})
    with pytest.raises(CubeFormatError, match="expected a finite number > 0") as info:
        read_cube(path)
    assert where in str(info.value) and str(path) in str(info.value)


def test_a_negative_envi_scale_is_one_error_line_on_the_command_line(tmp_path, io_files, hsi_main):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(dtype=np.int16),
                                    metadata={"reflectance scale factor": -10000})
    status, _, err = hsi_main(["inspect", str(header)], tmp_path)
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    assert "'reflectance scale factor' is -10000" in lines[0] and "Traceback" not in err


# --- a header that declares radiance and a reflectance scale factor ------------------------------------------------

def test_radiance_with_a_reflectance_scale_factor_is_refused_naming_both_keys(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"reflectance scale factor": 10000,
                                                              "data units": "W/(m2 sr um)"})
    with pytest.raises(CubeFormatError) as info:
        read_cube(header)
    message = str(info.value)
    assert "field 'data units' says 'W/(m2 sr um)' (radiance)" in message
    assert "field 'reflectance scale factor' is 10000" in message and "contradicts itself" in message
    # the caller says what the values are, and the read goes on
    rad = read_cube(header, units="radiance", scale=1)
    assert rad.meta["units"]["kind"] == "radiance" and rad.meta["scale_factor"] is None
    np.testing.assert_array_equal(rad.data, cube.astype(np.float32))
    assert read_cube(header, scale=False).meta["units"]["kind"] == "radiance"


def test_hdf5_radiance_with_a_reflectance_scale_factor_is_refused(tmp_path, io_files):
    path = _h5(tmp_path / "r.h5", io_files.make_cube(dtype=np.int16),
               {"units": "uW/cm2/sr/nm", "reflectance_scale_factor": 10000})
    with pytest.raises(CubeFormatError, match=r"attribute 'units' of 'cube' says 'uW/cm2/sr/nm' \(radiance\) but "
                                              r"attribute 'reflectance_scale_factor' of 'cube' is 10000"):
        read_cube(path)


# --- reflectance whose values are far above 1 ------------------------------------------------------------------------

def test_units_reflectance_on_values_of_thousands_warns_with_the_level_and_the_scale(tmp_path, io_files):
    header, binary = io_files.write_envi(tmp_path, _reflectance_x_10000())
    cube, found = _quiet_read(header, units="reflectance")
    assert cube.meta["units"]["kind"] == "reflectance"  # as the caller said: the values are not changed
    assert len(found) == 1
    message = found[0]
    assert message.startswith(f"{binary}: units='reflectance' was given") and "far above reflectance" in message
    level = float(message.split("typical level is ")[1].split(" ")[0])
    assert 1000 < level < 6000 and "--scale 10000" in message
    _, found = _quiet_read(header, units="reflectance", scale=10000)
    assert found == []  # divided: 0.1-0.6, reflectance indeed


def test_a_header_declaring_reflectance_of_values_in_thousands_warns(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, _reflectance_x_10000(), metadata={"data units": "Reflectance"})
    _, found = _quiet_read(header)
    assert len(found) == 1 and "the file declares reflectance (ENVI header image.hdr field 'data units'" in found[0]
    assert "--scale 10000" in found[0]


def test_a_scale_factor_too_small_suggests_the_whole_divisor(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, _reflectance_x_10000(), metadata={"reflectance scale factor": 10})
    _, found = _quiet_read(header)
    assert len(found) == 1 and "reflectance scale factor 10 applied" in found[0]
    assert "scale=10000 (--scale 10000)" in found[0]  # 10 already applied, times 1000 still missing


def test_plausible_reflectance_and_undeclared_values_read_no_sample(tmp_path, io_files, monkeypatch):
    from hsi.io import lazy

    header, _ = io_files.write_envi(tmp_path, _reflectance_x_10000(), name="scaled",
                                    metadata={"reflectance scale factor": 10000})
    assert _quiet_read(header)[1] == []
    calls = []
    monkeypatch.setattr(lazy, "sample_values", lambda cube: calls.append(cube) or np.zeros(1))
    plain, _ = io_files.write_envi(tmp_path, _reflectance_x_10000(), name="plain")
    assert _quiet_read(plain)[1] == [] and calls == []  # nothing said about the values: nothing sampled


def test_level_rules_as_pure_functions():
    assert typical_level([np.nan, 1.0, -3.0, 2.0]) == 2.0 and typical_level([np.nan]) is None
    assert level_problem(1.2, "units='reflectance' was given") is None
    assert "reflectance x 100," in level_problem(40.0, "said")
    assert level_problem(3e4, None) is None  # nothing said, no multiplier: no opinion
    assert level_problem(3.0, None, multiplier=2.0) is None  # a multiplier giving plausible values
    assert "scale=10000" in level_problem(3e7, None, multiplier=10000.0, multiplier_origin="x")


# --- HDF5 CF scale_factor: multiplied, as CF says, and questioned when that makes nonsense -----------------------------

def test_hdf5_cf_scale_factor_multiplies_and_warns_when_the_result_is_implausible(tmp_path):
    stored = _reflectance_x_10000()
    path = _h5(tmp_path / "cf.h5", stored, {"scale_factor": 10000.0})
    cube, found = _quiet_read(path)
    np.testing.assert_allclose(cube.data, stored.astype(np.float32) * 10000, rtol=1e-6)  # CF: multiply
    assert len(found) == 1 and "the scale 10000 of CF attributes scale_factor/add_offset multiplies" in found[0]
    assert "typical value of" in found[0] and "scale=10000 (--scale 10000), which divides instead" in found[0]
    divided, found = _quiet_read(path, scale=10000)  # the advice: divide instead of the file's scaling
    np.testing.assert_allclose(divided.data, stored / np.float32(10000), rtol=1e-6)
    assert found == [] and divided.meta["units"]["kind"] == "reflectance"


def test_hdf5_cf_scale_factor_below_one_reads_quietly(tmp_path):
    path = _h5(tmp_path / "cf.h5", _reflectance_x_10000(), {"scale_factor": 1e-4})
    cube, found = _quiet_read(path)
    assert found == [] and cube.meta["units"]["kind"] == "reflectance"


def test_write_h5_files_read_back_as_written(tmp_path):
    from hsi.io import write_h5

    stored = _reflectance_x_10000()
    path = write_h5(tmp_path / "own.h5", stored, wavelengths=WL)
    cube, found = _quiet_read(path)
    np.testing.assert_array_equal(cube.data, stored.astype(np.float32))  # no scale attribute written, none applied
    assert found == [] and cube.meta["band_scale"] is None


# --- wavelengths ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, units, words", [
    ([0.4, 0.41, 0.42], "nm", "labelled 'nm' are 0.4-0.42 nm, shorter than any imaging band; they look like micrometres"),
    ([400, 410, 420], "Micrometers", "labelled 'Micrometers' are 4e+05-4.2e+05 nm, longer than any imaging band"),
    ([400, 410, 420], "um", "they look like nanometres"),
    ([-420, -410, -400], "nm", "wavelength 0 is -420; wavelengths must be > 0"),
    ([0, 410, 420], None, "wavelength 0 is 0; wavelengths must be > 0"),
])
def test_wavelengths_in_another_unit_than_their_label_or_not_positive_are_refused(values, units, words):
    with pytest.raises(WavelengthError) as info:
        to_nanometers(values, units, "f.hdr")
    assert str(info.value).startswith("f.hdr: ") and words in str(info.value).replace(" (30 nm to 100 µm)", "")


def test_unlabelled_micrometres_are_still_converted():
    np.testing.assert_allclose(to_nanometers([0.4, 0.5], None, "f")[0], [400, 500])


@pytest.mark.parametrize("wavelengths, units, words", [
    ([w / 1000 for w in WL], "nm", "they look like micrometres"),
    (WL, "Micrometers", "they look like nanometres"),
    ([-w for w in WL[::-1]], "nm", "wavelength 0 is -450"),
])
def test_envi_wavelengths_mislabelled_or_negative_name_the_header(tmp_path, io_files, wavelengths, units, words):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(), metadata={"wavelength": wavelengths,
                                                                             "wavelength units": units})
    with pytest.raises(WavelengthError, match=words) as info:
        read_cube(header)
    assert "(ENVI header image.hdr)" in str(info.value)


def test_hdf5_wavelengths_mislabelled_are_refused(tmp_path, io_files):
    path = _h5(tmp_path / "wl.h5", io_files.make_cube(), {"wavelengths": np.array(WL) / 1000,
                                                          "wavelength_units": "nanometers"})
    with pytest.raises(WavelengthError, match="attribute 'wavelengths' of 'cube'.*look like micrometres"):
        read_cube(path)


# --- band widths ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fwhm, units, words", [
    ([0.01] * 6, "nm", "band widths 0.01-0.01 nm beside wavelengths 400-450 nm: narrower than 0.1 nm"),
    ([10.0] * 6, "Micrometers", ("band widths 1e+04-1e+04 nm beside wavelengths 400-450 nm: wider than the whole "
                                 "range (50 nm)")),
])
def test_implausible_fwhm_warns_naming_the_key_and_is_dropped(tmp_path, io_files, fwhm, units, words):
    wl = WL if units == "nm" else [w / 1000 for w in WL]
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(), metadata={
        "wavelength": wl, "wavelength units": units, "fwhm": fwhm})
    with pytest.warns(UnitsWarning) as caught:
        cube = read_cube(header)
    message = str(caught[0].message)
    assert "fwhm ignored (" in message and words in message
    assert cube.fwhm is None and cube.wavelengths is not None  # the read goes on without the widths
    assert issubclass(UnitsWarning, DataQualityWarning)  # filters of DataQualityWarning keep working


def test_plausible_fwhm_is_kept(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(), metadata={
        "wavelength": [w / 1000 for w in WL], "wavelength units": "Micrometers", "fwhm": [0.01] * 6})
    cube, found = _quiet_read(header)
    assert found == [] and cube.fwhm.tolist() == [10.0] * 6
