"""MATLAB .mat round trips: v5 through scipy, v7.3 emulated with h5py (transposed storage)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from hsi.errors import LayoutError, VariableKeyError
from hsi.io import read_cube, read_labels


def test_v5_hwc_with_wavelengths_round_trip(tmp_path, io_files):
    cube = io_files.make_cube()
    wl = io_files.wavelengths(6)
    path = tmp_path / "scene.mat"
    scipy.io.savemat(path, {"hsi": cube, "wavelengths": wl[:, None]})
    out = read_cube(path)
    assert out.data.dtype == np.float32 and out.data.flags.c_contiguous
    np.testing.assert_array_equal(out.data, cube)
    np.testing.assert_array_equal(out.wavelengths, wl)
    assert out.meta["key"] == "hsi" and out.meta["original_layout"] == "HWC"
    assert out.meta["format"] == "mat-v5" and out.meta["source"] == str(path)
    assert out.meta["wavelength_source"] == "variable 'wavelengths'"


@pytest.mark.parametrize("name", ["wavlength", "wl", "lambda", "Wavelength"])
def test_v5_wavelength_names_and_chw_detection(tmp_path, io_files, name):
    cube = io_files.make_cube(dtype=np.int16)
    wl = io_files.wavelengths(6)
    path = tmp_path / "chw.mat"
    scipy.io.savemat(path, {"img": cube.transpose(2, 0, 1), name: wl})
    out = read_cube(path)
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))
    assert out.meta["original_layout"] == "CHW" and out.meta["transposed"]
    assert out.meta["original_dtype"] == "int16"
    np.testing.assert_array_equal(out.wavelengths, wl)


def test_v5_without_wavelengths_needs_layout_for_unclear_shape(tmp_path, io_files):
    cube = io_files.make_cube()
    path = tmp_path / "plain.mat"
    scipy.io.savemat(path, {"x": cube})
    with pytest.raises(LayoutError, match="layout="):
        read_cube(path)
    out = read_cube(path, layout="HWC")
    np.testing.assert_array_equal(out.data, cube)
    assert out.wavelengths is None


def test_v5_explicit_layouts_are_honored(tmp_path, io_files):
    cube = io_files.make_cube()
    path = tmp_path / "whc.mat"
    scipy.io.savemat(path, {"whc": cube.transpose(1, 0, 2), "cwh": cube.transpose(2, 1, 0)})
    np.testing.assert_array_equal(read_cube(path, key="whc", layout="WHC").data, cube)
    np.testing.assert_array_equal(read_cube(path, key="cwh", layout="cwh").data, cube)


def test_v5_square_scene_detected_without_wavelengths(tmp_path, io_files):
    cube = io_files.make_cube(shape=(9, 9, 4))
    path = tmp_path / "sq.mat"
    scipy.io.savemat(path, {"a": cube.transpose(2, 0, 1)})
    out = read_cube(path)
    np.testing.assert_array_equal(out.data, cube)
    assert out.meta["original_layout"] == "CHW"


def test_v5_wavelengths_of_other_length_are_ignored(tmp_path, io_files):
    cube = io_files.make_cube(shape=(20, 30, 6))
    path = tmp_path / "a.mat"
    scipy.io.savemat(path, {"a": cube, "wavelengths": io_files.wavelengths(11)})
    out = read_cube(path)
    assert out.wavelengths is None and out.meta["original_layout"] == "HWC"


def test_v5_descending_wavelengths_reverse_bands(tmp_path, io_files):
    cube = io_files.make_cube()
    wl = io_files.wavelengths(6)[::-1].copy()
    path = tmp_path / "desc.mat"
    scipy.io.savemat(path, {"c": cube, "wavelengths": wl})
    out = read_cube(path)
    np.testing.assert_array_equal(out.data, cube[..., ::-1])
    np.testing.assert_array_equal(out.wavelengths, wl[::-1])
    assert out.meta["reversed_bands"] is True and out.meta["band_index"] == [5, 4, 3, 2, 1, 0]


def test_v5_several_cubes_need_key(tmp_path, io_files):
    path = tmp_path / "two.mat"
    scipy.io.savemat(path, {"a": io_files.make_cube(), "b": io_files.make_cube(shape=(3, 4, 8))})
    with pytest.raises(VariableKeyError) as info:
        read_cube(path)
    msg = str(info.value)
    assert str(path) in msg and "'a' (7 x 5 x 6" in msg and "'b' (3 x 4 x 8" in msg and "key=" in msg
    assert read_cube(path, key="b", layout="HWC").shape == (3, 4, 8)


def test_v73_cube_comes_back_in_matlab_orientation(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    wl = io_files.wavelengths(6, start=0.4, step=0.05)  # micrometres
    path = io_files.write_v73(tmp_path / "v73.mat", {"cube": cube, "wavelengths": wl[None, :]})
    out = read_cube(path)
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))
    np.testing.assert_allclose(out.wavelengths, wl * 1000)
    assert out.meta["format"] == "mat-v7.3" and out.meta["matlab_transposed"] is True
    assert out.meta["original_shape"] == (7, 5, 6)


def test_v73_labels_in_matlab_orientation(tmp_path, io_files):
    gt = np.random.default_rng(1).integers(0, 5, size=(7, 5)).astype(np.uint8)
    path = io_files.write_v73(tmp_path / "gt.mat", {"gt": gt})
    out = read_labels(path)
    assert out.shape == (7, 5) and out.dtype == np.int64
    np.testing.assert_array_equal(out, gt)


def test_v5_labels_discovery_prefers_integer_maps(tmp_path):
    gt = np.arange(12, dtype=np.uint8).reshape(3, 4)
    path = tmp_path / "gt.mat"
    scipy.io.savemat(path, {"y": gt, "score": np.random.default_rng(0).random((3, 4))})
    np.testing.assert_array_equal(read_labels(path), gt)
    with pytest.raises(VariableKeyError, match="'nope' not found"):
        read_labels(path, key="nope")
