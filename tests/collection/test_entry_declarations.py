"""A collection entry's declarations (``wavelengths:``, ``fwhm:``, ``units:``, ``scale:``) never replace or
contradict what the file says silently: an override of the file's own values warns, micrometres where nanometres
are asked for are refused, and reflectance far above 1 warns with the divisor to declare."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hsi.data.sources.entries import read_collection
from hsi.data.sources.load import load_entry
from hsi.errors import CollectionError, UnitsWarning
from hsi.io.writers.hdf5 import write_h5

WL = np.linspace(420.0, 870.0, 10)


def _file(folder, name, cube, wavelengths=WL):
    labels = np.zeros(cube.shape[:2], dtype=np.uint8)
    labels[:2, :2] = 1
    return str(write_h5(folder / f"{name}.h5", cube, labels=labels, wavelengths=wavelengths))


def _load(path, **declared):
    """The scene of one entry (cube and labels in ``path``), with every UnitsWarning's message."""
    entry = read_collection([{"name": "north", "cube": path, "labels": path, "labels_key": "labels",
                              **declared}]).entries[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        src = load_entry(entry)
    return src, [str(w.message) for w in caught if issubclass(w.category, UnitsWarning)]


@pytest.fixture
def cube():
    return np.random.default_rng(0).random((6, 5, 10)).astype(np.float32) * 0.5


def test_entry_wavelengths_that_differ_from_the_files_replace_them_with_a_warning(tmp_path, cube):
    path = _file(tmp_path, "north", cube)
    declared = [float(v) for v in WL + 5.0]
    src, said = _load(path, wavelengths=declared)
    np.testing.assert_array_equal(src.wavelengths, declared)  # the explicit override wins...
    assert len(said) == 1  # ...but never silently
    assert said[0].startswith("scene 'north': wavelengths: the collection entry's values (425-875 nm) replace the "
                              "file's own (420-870 nm")
    assert "band 0: 420 nm in the file, 425 nm declared" in said[0] and "remove wavelengths: from the entry" in said[0]
    assert path in said[0]


def test_entry_wavelengths_equal_to_the_files_or_for_a_file_without_them_are_quiet(tmp_path, cube):
    src, said = _load(_file(tmp_path, "same", cube), wavelengths=[float(v) for v in WL])
    assert said == [] and np.allclose(src.wavelengths, WL)
    src, said = _load(_file(tmp_path, "bare", cube, wavelengths=None), wavelengths=[float(v) for v in WL])
    assert said == [] and np.allclose(src.wavelengths, WL)


def test_entry_fwhm_replacing_the_files_own_warns(tmp_path, cube):
    import h5py

    path = _file(tmp_path, "widths", cube)
    with h5py.File(path, "r+") as handle:
        handle["cube"].attrs["fwhm"] = np.full(10, 12.0)
    src, said = _load(path, fwhm=20.0)
    assert src.fwhm.tolist() == [20.0] * 10
    assert len(said) == 1 and said[0].startswith("scene 'north': fwhm: the collection entry's values (20-20 nm) "
                                                 "replace the file's own (12-12 nm")


def test_entry_wavelengths_in_micrometres_are_refused(tmp_path, cube):
    path = _file(tmp_path, "north", cube)
    with pytest.raises(CollectionError, match=r"scenes\[0\] 'north': wavelengths: expected band centres in nm; "
                                              r"found 0\.42-0\.87, below any imaging band \(30 nm\): micrometres\?"):
        read_collection([{"name": "north", "cube": path, "labels": path,
                          "wavelengths": [float(v) / 1000 for v in WL]}])


def test_entry_reflectance_of_values_in_thousands_warns_with_the_scale_to_declare(tmp_path, cube):
    path = _file(tmp_path, "ints", np.round(cube * 10000).astype(np.int16))
    src, said = _load(path, units="reflectance")
    assert src.units["kind"] == "reflectance"
    assert len(said) == 1 and said[0].startswith("scene 'north': the collection entry declares units: reflectance, "
                                                 "but the values' typical level is ")
    assert said[0].endswith("give the entry scale: 10000")
    src, said = _load(path, units="reflectance", scale=10000)
    assert said == [] and float(np.nanmax(src.cube)) <= 1.0
