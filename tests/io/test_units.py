"""meta["units"]: the undeclared rule as a pure function, detection per format, the caller's override,
and the ``units:`` line of ``hsi inspect``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io

from hsi.errors import DataQualityWarning, OptionError
from hsi.io import open_cube, read_cube
from hsi.io.units import (
    UNIT_KEYS,
    UNIT_KINDS,
    apply_declaration,
    check_units,
    check_units_option,
    declared_units,
    file_declaration,
    infer_units,
    parse_units_text,
)

INT_NOTE = "integer values with no declared scale: kept as stored"
FLOAT_NOTE = "float values within 0-1: taken as reflectance"


def _read(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # nodata NaNs of the GeoTIFF fixtures
        return read_cube(path, **kwargs)


def _units(cube) -> dict:
    units = cube.meta["units"]
    assert tuple(units) == UNIT_KEYS and json.loads(json.dumps(units)) == units  # exactly these keys, JSON-able
    return units


# --- the rule, as a pure function -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int16", "uint16", "uint8", "int32"])
def test_rule_keeps_undeclared_integers_as_unknown_whatever_their_range(dtype):
    for lo, hi in ((0, 1), (0, 10000), (None, None)):
        assert infer_units(dtype, lo, hi) == {"kind": "unknown", "scale": None, "source": "rule", "note": INT_NOTE}


@pytest.mark.parametrize("lo, hi, kind", [
    (0.0, 1.0, "reflectance"), (-0.5, 2.0, "reflectance"), (0.01, 0.6, "reflectance"),
    (-0.51, 1.0, "unknown"), (0.0, 2.01, "unknown"), (0.0, 9000.0, "unknown"),
])
def test_rule_takes_floats_within_minus_half_to_two_as_reflectance(lo, hi, kind):
    units = infer_units(np.float32, lo, hi)
    assert units["kind"] == kind and units["source"] == "rule" and units["scale"] is None
    if kind == "reflectance":
        assert units["note"] == FLOAT_NOTE
    else:
        assert "not within -0.5 to 2" in units["note"]


def test_rule_without_a_range_or_finite_values_says_unknown():
    assert "not scanned" in infer_units("float64", None, None)["note"]
    assert infer_units("float32", np.inf, -np.inf)["kind"] == "unknown"  # read_cube's "no finite value"


def test_rule_judges_integers_a_declared_scale_turned_into_floats_by_their_range():
    units = infer_units("int16", 0.0, 0.9, {"scale": 10000.0, "note": "divided by 10000 (scale=10000)"})
    assert units == {"kind": "reflectance", "scale": 10000.0, "source": "rule",
                     "note": f"divided by 10000 (scale=10000); {FLOAT_NOTE}"}


def test_declared_kind_is_kept_but_a_header_reflectance_outside_zero_one_is_not():
    declared = {"kind": "radiance", "scale": None, "source": "header", "note": "x"}
    assert infer_units("int16", 0, 9000, declared)["kind"] == "radiance"
    refl = {"kind": "reflectance", "scale": None, "source": "header", "note": "data units 'reflectance'"}
    assert infer_units("float32", 0.0, 3.5, refl)["kind"] == "reflectance"  # an outlier does not overturn a header
    out = infer_units("int16", -300.0, 3000.0, refl)
    assert out["kind"] == "unknown" and out["source"] == "header" and "not 0-1" in out["note"]
    assert infer_units("int16", None, None, refl) == out  # decided without the range: open_cube agrees


@pytest.mark.parametrize("text, kind", [
    ("W/(m2 sr um)", "radiance"), ("uW/cm2/sr/nm", "radiance"), ("µW cm-2 sr-1 nm-1", "radiance"),
    ("Watts/m^2/sr/um", "radiance"), ("Radiance", "radiance"), ("reflectance", "reflectance"),
    ("Surface Reflectance", "reflectance"), ("DN", "unknown"), ("W/m2", "unknown"),
    ("reflectance; W/(m2 sr um)", "unknown"), ("", None), ("Unknown", None), (None, None),
])
def test_parse_units_text(text, kind):
    assert parse_units_text(text) == kind


def test_file_declaration_cases():
    env = file_declaration(None, None, 10000.0, True, 10000.0, "reflectance scale factor 10000 applied")
    assert env == {"kind": "reflectance", "scale": 10000.0, "source": "header",
                   "note": "reflectance scale factor 10000 applied"}
    raw = file_declaration(None, None, 10000.0, False, None, None)
    assert raw["kind"] == "unknown" and "not applied (scale=False)" in raw["note"]
    assert file_declaration(None, None, None, True, None, None) is None  # nothing declared, nothing applied
    assert "kind" not in file_declaration(None, None, None, 5.0, 5.0, "divided by 5 (scale=5)")  # the rule decides
    text = file_declaration("W/(m2 sr um)", "ENVI header x.hdr field 'data units'", None, True, None, None)
    assert text["kind"] == "radiance" and "'W/(m2 sr um)'" in text["note"] and "data units" in text["note"]


def test_declared_units_and_their_checks():
    units = declared_units("Radiance", note="at-sensor radiance")
    assert units == {"kind": "radiance", "scale": None, "source": "registry", "note": "at-sensor radiance"}
    assert check_units(units) == units and check_units(units) is not units
    for bad in ({"kind": "radiance"}, [1, 2], {**units, "kind": "brightness"}, {**units, "scale": 0},
                {**units, "source": "guess"}):
        with pytest.raises(OptionError):
            check_units(bad)
    with pytest.raises(OptionError, match="source"):
        declared_units("radiance", source="header")


def test_apply_declaration_keeps_the_scale_read():
    found = {"kind": "reflectance", "scale": 10000.0, "source": "header", "note": "reflectance scale factor applied"}
    user = declared_units("unknown", note="declared by the caller (units='unknown')", source="user")
    out = apply_declaration(found, user)
    assert out["kind"] == "unknown" and out["scale"] == 10000.0 and out["source"] == "user"
    assert "the file gave reflectance (header)" in out["note"]


@pytest.mark.parametrize("value", ["Watts", "", 1, "reflectance factor"])
def test_units_option_error_names_option_value_and_choices(value):
    with pytest.raises(OptionError) as info:
        check_units_option(value)
    message = str(info.value)
    assert message.startswith("units: ") and repr(value) in message
    assert all(repr(kind) in message for kind in UNIT_KINDS)


# --- ENVI ------------------------------------------------------------------------------------------------------

def test_envi_reflectance_scale_factor_is_declared_reflectance(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"reflectance scale factor": 10000})
    out = read_cube(header)
    np.testing.assert_allclose(out.data, cube / np.float32(10000), rtol=1e-6)
    assert _units(out) == {"kind": "reflectance", "scale": 10000.0, "source": "header",
                           "note": "reflectance scale factor 10000 applied"}
    raw = read_cube(header, scale=False)
    assert _units(raw)["kind"] == "unknown" and raw.meta["units"]["scale"] is None
    assert "reflectance x 10000" in raw.meta["units"]["note"]


def test_envi_integers_without_scale_factor_stay_as_stored(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, _ = io_files.write_envi(tmp_path, cube)
    out = read_cube(header)
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))  # nothing divided
    assert _units(out) == {"kind": "unknown", "scale": None, "source": "rule", "note": INT_NOTE}


@pytest.mark.parametrize("data_units, kind", [("W/(m2 sr um)", "radiance"), ("uW/cm2/sr/nm", "radiance"),
                                               ("Reflectance", "reflectance")])
def test_envi_data_units_field(tmp_path, io_files, data_units, kind):
    cube = io_files.make_cube(dtype=np.float32)  # 0-1, so a declared reflectance stands
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"data units": data_units})
    units = _units(read_cube(header))
    assert units["kind"] == kind and units["source"] == "header" and repr(data_units) in units["note"]


def test_envi_declared_reflectance_of_integers_beyond_one_is_unknown(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)  # -300..3000 with no scale factor
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"data units": "reflectance"})
    units = _units(read_cube(header))
    assert units["kind"] == "unknown" and units["source"] == "header" and "not 0-1" in units["note"]


def test_envi_floats_follow_the_rule(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.float32)
    header, _ = io_files.write_envi(tmp_path, cube, name="refl")
    assert _units(read_cube(header)) == {"kind": "reflectance", "scale": None, "source": "rule", "note": FLOAT_NOTE}
    header, _ = io_files.write_envi(tmp_path, cube * 5000, name="big")
    big = _units(read_cube(header))
    assert big["kind"] == "unknown" and big["source"] == "rule"


def test_numeric_scale_is_recorded(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, _ = io_files.write_envi(tmp_path, cube)
    out = read_cube(header, scale=4000)
    np.testing.assert_allclose(out.data, cube / np.float32(4000), rtol=1e-6)
    assert _units(out) == {"kind": "reflectance", "scale": 4000.0, "source": "rule",
                           "note": f"divided by 4000 (scale=4000); {FLOAT_NOTE}"}


# --- GeoTIFF ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gt(tmp_path_factory, geotiff_module):
    files = geotiff_module.make_fixtures(tmp_path_factory.mktemp("geotiff_units"))
    files.module = geotiff_module
    return files


def test_geotiff_band_scale_is_the_recorded_divisor(gt):
    units = _units(_read(gt.cube))
    assert units["kind"] == "reflectance" and units["source"] == "rule" and units["scale"] == 10000.0
    assert "GDAL band scale/offset applied: scale 0.0001" in units["note"] and units["note"].endswith(FLOAT_NOTE)
    raw = _units(_read(gt.cube, scale=False))  # scaling refused: integers as stored
    assert raw == {"kind": "unknown", "scale": None, "source": "rule", "note": INT_NOTE}


def test_geotiff_without_scale_is_left_to_the_rule(gt):
    assert _units(_read(gt.sidecar)) == {"kind": "unknown", "scale": None, "source": "rule", "note": INT_NOTE}


def test_geotiff_units_string_declares_radiance(gt, tmp_path):
    import rasterio

    path = gt.module._write(tmp_path / "rad.tif", gt.raw.astype(np.float32) / 100)
    with rasterio.open(path, "r+") as ds:
        ds.units = ("W/(m2 sr um)",) * ds.count
    units = _units(_read(path))
    assert units["kind"] == "radiance" and units["source"] == "header" and "GDAL band units" in units["note"]
    tagged = gt.module._write(tmp_path / "tagged.tif", gt.raw.astype(np.float32) / 100)
    with rasterio.open(tagged, "r+") as ds:
        ds.update_tags(units="uW/cm2/sr/nm")
    units = _units(_read(tagged))
    assert units["kind"] == "radiance" and "dataset tag 'units'" in units["note"]


# --- HDF5 and MATLAB -------------------------------------------------------------------------------------------

def _h5(path: Path, data: np.ndarray, attrs: dict | None = None, file_attrs: dict | None = None) -> Path:
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("cube", data=data)
        ds.attrs["layout"] = "HWC"
        for k, v in (attrs or {}).items():
            ds.attrs[k] = v
        for k, v in (file_attrs or {}).items():
            f.attrs[k] = v
    return path


def test_hdf5_units_and_reflectance_scale_factor(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    path = _h5(tmp_path / "a.h5", cube, {"units": "reflectance", "reflectance_scale_factor": 10000})
    out = read_cube(path)
    np.testing.assert_allclose(out.data, cube / np.float32(10000), rtol=1e-6)
    units = _units(out)
    assert units["kind"] == "reflectance" and units["scale"] == 10000.0 and units["source"] == "header"
    assert "attribute 'units' of 'cube'" in units["note"]


def test_hdf5_cf_scale_factor_multiplies(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    path = _h5(tmp_path / "cf.h5", cube, {"scale_factor": 1e-4, "add_offset": 0.0})
    out = read_cube(path)
    np.testing.assert_allclose(out.data, cube * np.float32(1e-4), rtol=1e-6)
    units = _units(out)
    assert units["scale"] == 10000.0 and units["kind"] == "reflectance" and units["source"] == "rule"
    assert "CF attributes scale_factor/add_offset applied" in units["note"]


def test_hdf5_file_attribute_declares_radiance(tmp_path, io_files):
    path = _h5(tmp_path / "rad.h5", io_files.make_cube(dtype=np.float32) * 80, file_attrs={"units": "uW/cm2/sr/nm"})
    units = _units(read_cube(path))
    assert units["kind"] == "radiance" and "attribute 'units' of the file" in units["note"]


def test_hdf5_length_units_stay_the_wavelengths_unit(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.float32)
    path = _h5(tmp_path / "wl.h5", cube, {"wavelengths": np.linspace(0.4, 0.9, 6), "units": "um"})
    out = read_cube(path)
    np.testing.assert_allclose(out.wavelengths, np.linspace(400, 900, 6))
    assert _units(out)["source"] == "rule"  # "um" declares no data quantity


def test_matlab_declares_nothing(tmp_path, io_files):
    path = tmp_path / "c.mat"
    scipy.io.savemat(path, {"refl": io_files.make_cube(dtype=np.float32),
                            "counts": io_files.make_cube(dtype=np.int16, shape=(7, 5, 4))})
    assert _units(read_cube(path, key="refl", layout="HWC")) == {"kind": "reflectance", "scale": None, "source": "rule",
                                                    "note": FLOAT_NOTE}
    assert _units(read_cube(path, key="counts", layout="HWC"))["note"] == INT_NOTE


# --- the caller's override and the lazy cube -------------------------------------------------------------------

def test_user_units_override_detection_without_changing_values(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"reflectance scale factor": 10000})
    out = read_cube(header, units="radiance")
    np.testing.assert_allclose(out.data, cube / np.float32(10000), rtol=1e-6)
    units = _units(out)
    assert units["kind"] == "radiance" and units["source"] == "user" and units["scale"] == 10000.0
    assert "units='radiance'" in units["note"] and "the file gave reflectance (header)" in units["note"]
    with open_cube(header, units="unknown") as lazy:
        assert lazy.meta["units"]["source"] == "user" and lazy.meta["units"]["kind"] == "unknown"


def test_bad_units_value_raises_before_reading(tmp_path):
    with pytest.raises(OptionError, match=r"units: 'radiant': one of 'reflectance', 'radiance', 'unknown'"):
        read_cube(tmp_path / "missing.hdr", units="radiant")  # the option is checked before the file is looked for


def test_lazy_cube_carries_units_decided_without_reading(tmp_path, io_files):
    ints = io_files.make_cube(dtype=np.int16)
    header, _ = io_files.write_envi(tmp_path, ints, name="ints", metadata={"reflectance scale factor": 100})
    with open_cube(header) as lazy:
        assert lazy.meta["units"] == read_cube(header).meta["units"]
        assert lazy.meta["fwhm"] is None and lazy.fwhm is None
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(dtype=np.float32), name="floats")
    with open_cube(header) as lazy:
        assert lazy.meta["units"]["kind"] == "unknown" and "not scanned" in lazy.meta["units"]["note"]
    assert read_cube(header).meta["units"]["kind"] == "reflectance"


# --- hsi inspect -----------------------------------------------------------------------------------------------

def test_inspect_prints_units_and_fwhm(tmp_path, io_files, hsi_main):
    cube = io_files.make_cube(dtype=np.int16)
    wl = io_files.wavelengths(6)
    header, _ = io_files.write_envi(tmp_path, cube, name="scaled", metadata={
        "reflectance scale factor": 10000, "wavelength": list(wl), "fwhm": [9, 9.5, 10, 10, 11, 12]})
    status, out, _ = hsi_main(["inspect", str(header)], tmp_path)
    assert status == 0
    assert "units: reflectance, scale 10000 (header: reflectance scale factor 10000 applied)" in out.splitlines()
    assert "fwhm: 9 - 12 nm (6 bands)" in out.splitlines()
    plain, _ = io_files.write_envi(tmp_path, cube, name="plain")
    status, out, _ = hsi_main(["inspect", str(plain)], tmp_path)
    assert f"units: unknown (rule: {INT_NOTE})" in out.splitlines() and "fwhm: unknown" in out.splitlines()
