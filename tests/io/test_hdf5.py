"""Plain HDF5: dataset discovery in groups, wavelengths from datasets or attributes, lazy reads."""

from __future__ import annotations

import tempfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hsi.errors import VariableKeyError, WavelengthError
from hsi.io import open_cube, read_cube, read_labels


def test_nested_dataset_with_attribute_wavelengths(tmp_path, io_files):
    cube = io_files.make_cube()
    wl = io_files.wavelengths(6)
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_group("scene").create_dataset("radiance", data=cube.transpose(2, 0, 1))
        ds.attrs["wavelength"] = wl
        f["scene/labels"] = np.zeros((7, 5), dtype=np.uint8)
    out = read_cube(path)
    np.testing.assert_array_equal(out.data, cube)
    np.testing.assert_array_equal(out.wavelengths, wl)
    assert out.meta["key"] == "scene/radiance" and out.meta["original_layout"] == "CHW"
    assert "attribute 'wavelength'" in out.meta["wavelength_source"]
    np.testing.assert_array_equal(read_labels(path), np.zeros((7, 5)))


def test_wavelength_dataset_and_file_attribute(tmp_path, io_files):
    cube = io_files.make_cube()
    wl = io_files.wavelengths(6)
    p1, p2 = tmp_path / "ds.hdf5", tmp_path / "attr.h5"
    with h5py.File(p1, "w") as f:
        f["data"] = cube
        f["wavelengths"] = wl[::-1]
    with h5py.File(p2, "w") as f:
        f["data"] = cube
        f.attrs["wavelengths"] = wl / 1000.0
        f.attrs["wavelength_units"] = "micrometers"
    out1 = read_cube(p1)
    np.testing.assert_array_equal(out1.data, cube[..., ::-1])
    assert out1.meta["reversed_bands"]
    np.testing.assert_array_equal(out1.wavelengths, wl)
    out2 = read_cube(p2)
    np.testing.assert_array_equal(out2.data, cube)
    np.testing.assert_allclose(out2.wavelengths, wl)


def test_declared_attribute_with_wrong_count_raises(tmp_path, io_files):
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        f["data"] = io_files.make_cube()
        f["data"].attrs["wavelengths"] = io_files.wavelengths(4)
    with pytest.raises(WavelengthError, match=r"4 wavelengths for 6 bands"):
        read_cube(path, layout="HWC")


def test_wrong_key_lists_datasets(tmp_path, io_files):
    path = tmp_path / "k.h5"
    with h5py.File(path, "w") as f:
        f["g/cube"] = io_files.make_cube()
    with pytest.raises(VariableKeyError) as info:
        read_cube(path, key="cube")
    assert str(path) in str(info.value) and "'g/cube' (7 x 5 x 6 float32)" in str(info.value)
    assert read_cube(path, key="/g/cube", layout="HWC").shape == (7, 5, 6)


def test_windows_match_full_read(tmp_path, io_files):
    cube = io_files.make_cube(shape=(12, 9, 6), dtype=np.int16)
    path = tmp_path / "w.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("c", data=cube.transpose(2, 0, 1), chunks=(6, 4, 4))
        f["c"].attrs["wavelengths"] = io_files.wavelengths(6)[::-1]
    full = read_cube(path).data
    with open_cube(path) as lazy:
        assert lazy.shape == (12, 9, 6)
        win = lazy.read_window(slice(3, 8), slice(-4, None))
    assert win.dtype == np.float32 and win.shape == (5, 4, 6)
    np.testing.assert_array_equal(win, full[3:8, 5:9])
    np.testing.assert_array_equal(full, cube[..., ::-1].astype(np.float32))


def test_window_of_cube_larger_than_memory(tmp_path):
    """A 40000 x 40000 x 32 float32 cube (~200 GB) that HDF5 never allocated: windows still read."""
    path = tmp_path / "huge.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("big", shape=(40000, 40000, 32), dtype="f4", chunks=(64, 64, 32), fillvalue=0.5)
        ds[100:102, 200:203, :] = 7.0
    assert path.stat().st_size < 1_000_000
    with open_cube(path, layout="HWC") as lazy:
        assert lazy.shape == (40000, 40000, 32)
        win = lazy.read_window(slice(99, 103), slice(200, 204))
    assert win.shape == (4, 4, 32)
    assert (win[1:3, 0:3] == 7.0).all() and win[0, 0, 0] == 0.5 and win[1, 3, 0] == 0.5


@settings(max_examples=30, deadline=None)
@given(
    layout=st.sampled_from(["HWC", "HCW", "WHC", "WCH", "CHW", "CWH"]),
    shape=st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
    seed=st.integers(0, 2**16),
)
def test_any_explicit_layout_round_trips(layout, shape, seed):
    """Stored in any axis order, read back with that layout= it is the original H x W x C cube."""
    cube = np.random.default_rng(seed).integers(0, 1000, size=shape).astype(np.uint16)
    stored = cube.transpose(["HWC".index(letter) for letter in layout])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.h5"
        with h5py.File(path, "w") as f:
            f["c"] = stored
        out = read_cube(path, key="c", layout=layout)
        with open_cube(path, key="c", layout=layout) as lazy:
            win = lazy.read_window(slice(0, 2), slice(0, 3))
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))
    np.testing.assert_array_equal(win, out.data[0:2, 0:3])
    assert out.meta["original_layout"] == layout


def test_declared_wavelengths_matching_no_axis(tmp_path, io_files):
    path = tmp_path / "bad2.h5"
    with h5py.File(path, "w") as f:
        f["data"] = io_files.make_cube()
        f["data"].attrs["wavelengths"] = io_files.wavelengths(4)
    with pytest.raises(WavelengthError, match=r"4 wavelengths .* no axis of shape \(7, 5, 6\)") as info:
        read_cube(path)
    assert str(path) in str(info.value)


def test_unused_wavelength_vector_is_reported(tmp_path, io_files):
    path = tmp_path / "u.h5"
    with h5py.File(path, "w") as f:
        f["data"] = io_files.make_cube(shape=(30, 40, 6))
        f["aux/wavelengths"] = io_files.wavelengths(9)
    out = read_cube(path)
    assert out.wavelengths is None and out.meta["ignored_wavelength_vectors"] == ["dataset 'aux/wavelengths' (9 values)"]
