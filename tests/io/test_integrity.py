"""Bad values and mislabeled files end in a clear error or a correct, recorded result (issue 10)."""

from __future__ import annotations

import warnings

import h5py
import numpy as np
import pytest
import scipy.io

from hsi.errors import CubeFormatError, DataQualityWarning, OptionError
from hsi.io import list_arrays, open_cube, read_cube, read_labels


def make_cube(shape, seed=0):
    """Random float32 H x W x C (asymmetric shapes so any transpose is caught)."""
    return np.random.default_rng(seed).random(shape).astype(np.float32)


# ---------------------------------------------------------------- non-finite values and constant cubes
def test_read_cube_counts_nonfinite_values_in_meta_and_warns(tmp_path):
    cube = make_cube((9, 8, 5))
    cube[2, 3, 1] = np.nan
    cube[4, 4, :] = np.nan
    cube[7, 0, 4] = np.inf
    scipy.io.savemat(tmp_path / "c.mat", {"cube": cube})
    with pytest.warns(DataQualityWarning, match=r"7 NaN or infinite value\(s\).* in 3 of 72 pixels"):
        out = read_cube(tmp_path / "c.mat", layout="HWC")
    assert out.meta["n_nonfinite"] == 7
    assert out.meta["n_nonfinite_pixels"] == 3
    assert out.meta["n_nonfinite_bands"] == 5


def test_clean_cube_reads_without_warning_and_records_zero(tmp_path):
    scipy.io.savemat(tmp_path / "c.mat", {"cube": make_cube((6, 5, 4))})
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)
        out = read_cube(tmp_path / "c.mat", layout="HWC")
    assert out.meta["n_nonfinite"] == 0 and out.meta["n_nonfinite_pixels"] == 0


@pytest.mark.parametrize("value", [0.0, 3.5])
def test_constant_cube_is_warned_about(tmp_path, value):
    scipy.io.savemat(tmp_path / "c.mat", {"cube": np.full((6, 5, 4), value, dtype=np.float32)})
    with pytest.warns(DataQualityWarning, match=f"every finite value of the cube is {value!r}"):
        read_cube(tmp_path / "c.mat", layout="HWC")


# ---------------------------------------------------------------- label maps
def test_negative_labels_are_refused_with_file_key_count_and_first_position(tmp_path):
    gt = np.zeros((6, 7), dtype=np.int16)
    gt[1:3, 1:3] = 1
    gt[4, 5] = 2
    gt[3, 2] = -1
    gt[5, 6] = -1
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": gt})
    with pytest.raises(CubeFormatError) as err:
        read_labels(tmp_path / "gt.mat")
    msg = str(err.value)
    assert "gt.mat" in msg and "'gt'" in msg and "2 negative label value(s)" in msg and "(3, 2)" in msg


def test_h_w_1_label_map_is_discovered_and_squeezed(tmp_path):
    gt = np.arange(30, dtype=np.uint8).reshape(5, 6, 1) % 4
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": gt})
    assert scipy.io.whosmat(str(tmp_path / "gt.mat"))[0][1] == (5, 6, 1)  # really stored 3-D
    out = read_labels(tmp_path / "gt.mat")  # no key: found as the only label map
    assert out.shape == (5, 6)
    np.testing.assert_array_equal(out, gt[..., 0])


def test_data_matrix_is_refused_as_a_label_map(tmp_path):
    rng = np.random.default_rng(0)
    matrix = rng.integers(0, 5000, size=(198, 1000)).astype(np.int16)
    scipy.io.savemat(tmp_path / "y.mat", {"Y": matrix})
    with pytest.raises(CubeFormatError, match=r"distinct label values .* max_classes=255"):
        read_labels(tmp_path / "y.mat")
    assert read_labels(tmp_path / "y.mat", max_classes=5000).shape == (198, 1000)  # explicit opt-in


def test_max_classes_must_be_a_positive_integer(tmp_path):
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": np.ones((4, 4), dtype=np.uint8)})
    with pytest.raises(OptionError, match="max_classes"):
        read_labels(tmp_path / "gt.mat", max_classes=0)


# ---------------------------------------------------------------- HDF5 named .mat
def test_plain_hdf5_named_mat_is_read_as_stored(tmp_path):
    cube = make_cube((40, 44, 12))
    with h5py.File(tmp_path / "plain.mat", "w") as f:  # h5py, not MATLAB: C order, no marks
        f["cube"] = cube
    out = read_cube(tmp_path / "plain.mat")
    assert out.shape == (40, 44, 12)
    np.testing.assert_array_equal(out.data, cube)
    assert "read as stored" in out.meta["mat_container"] and out.meta["matlab_transposed"] is False
    assert [a.shape for a in list_arrays(tmp_path / "plain.mat")] == [(40, 44, 12)]


def test_real_matlab_v73_is_still_transposed_back(tmp_path, io_files):
    cube = make_cube((10, 11, 6))
    io_files.write_v73(tmp_path / "m.mat", {"cube": cube})
    out = read_cube(tmp_path / "m.mat", layout="HWC")
    np.testing.assert_array_equal(out.data, cube)
    assert "MATLAB v7.3" in out.meta["mat_container"] and out.meta["matlab_transposed"] is True


def test_matlab_class_attribute_alone_marks_matlab(tmp_path):
    cube = make_cube((10, 11, 6))
    with h5py.File(tmp_path / "m.mat", "w") as f:  # no user block, but MATLAB's attribute
        ds = f.create_dataset("cube", data=cube.T)
        ds.attrs["MATLAB_class"] = np.bytes_("single")
    out = read_cube(tmp_path / "m.mat", layout="HWC")
    np.testing.assert_array_equal(out.data, cube)
    assert "MATLAB_class" in out.meta["mat_container"]


def test_plain_hdf5_named_mat_label_map_is_not_transposed(tmp_path):
    gt = (np.arange(40 * 44).reshape(40, 44) % 5).astype(np.uint8)
    with h5py.File(tmp_path / "gt.mat", "w") as f:
        f["gt"] = gt
    np.testing.assert_array_equal(read_labels(tmp_path / "gt.mat"), gt)


# ---------------------------------------------------------------- data types
def test_complex_cube_is_named_complex(tmp_path):
    scipy.io.savemat(tmp_path / "c.mat", {"cube": make_cube((5, 4, 3)).astype(np.float64) + 1j})
    with pytest.raises(CubeFormatError, match=r"'cube' holds complex values \(complex128\)"):
        read_cube(tmp_path / "c.mat", layout="HWC")


def test_bool_cube_is_refused(tmp_path):
    scipy.io.savemat(tmp_path / "c.mat", {"mask": make_cube((5, 4, 3)) > 0.5})
    with pytest.raises(CubeFormatError, match=r"'mask' is a MATLAB logical \(boolean\) array"):
        read_cube(tmp_path / "c.mat", layout="HWC")
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f["mask"] = make_cube((5, 4, 3)) > 0.5
    with pytest.raises(CubeFormatError, match="'mask': a boolean array"):
        read_cube(tmp_path / "c.h5", layout="HWC")


@pytest.mark.parametrize("kwargs, option", [({"scale": "yes"}, "scale"), ({"scale": float("nan")}, "scale"),
                                            ({"band_order": "up"}, "band_order")])
def test_bad_read_options_name_the_option(tmp_path, kwargs, option):
    scipy.io.savemat(tmp_path / "c.mat", {"cube": make_cube((5, 4, 3))})
    with pytest.raises(OptionError) as err:
        read_cube(tmp_path / "c.mat", layout="HWC", **kwargs)
    assert err.value.option == option and str(err.value).startswith(f"{option}: ")


# ---------------------------------------------------------------- lazy windows
def test_read_window_out_of_range_and_after_close_raise(tmp_path):
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f["c"] = make_cube((12, 9, 6))
    lazy = open_cube(tmp_path / "c.h5", layout="HWC")
    with pytest.raises(IndexError, match=r"rows=slice\(20, 25, None\) selects none of the cube's 12 rows"):
        lazy.read_window(slice(20, 25), slice(0, 3))
    with pytest.raises(IndexError, match="cols"):
        lazy.read_window(slice(0, 3), slice(5, 5))
    assert lazy.read_window(slice(10, 99), slice(0, 2)).shape == (2, 2, 6)  # clipped like numpy
    lazy.close()
    with pytest.raises(CubeFormatError, match="closed"):
        lazy.read_window(slice(0, 2), slice(0, 2))
