"""Bad input: each error has the right type and a message naming the file and the problem."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import scipy.io

from hsi.errors import (
    BandMismatchError, CubeFormatError, DatasetNotFoundError, LayoutError, VariableKeyError, WavelengthError,
)
from hsi.io import open_cube, read_cube, read_labels


@pytest.mark.parametrize("name", ["missing.mat", "missing.h5", "missing.hdr", "missing.img", "missing.lan"])
def test_missing_file(tmp_path, name):
    path = tmp_path / name
    for reader in (read_cube, read_labels, open_cube):
        with pytest.raises(DatasetNotFoundError) as info:
            reader(path)
        assert isinstance(info.value, FileNotFoundError)
        assert str(path) in str(info.value) and "no such file" in str(info.value)


def test_truncated_mat_v5(tmp_path, io_files):
    path = tmp_path / "cut.mat"
    scipy.io.savemat(path, {"cube": io_files.make_cube(shape=(20, 20, 30))})
    path.write_bytes(path.read_bytes()[:3000])
    with pytest.raises(CubeFormatError) as info:
        read_cube(path)
    assert str(path) in str(info.value) and "truncated" in str(info.value)
    assert info.value.__cause__ is not None


def test_garbage_mat(tmp_path):
    path = tmp_path / "junk.mat"
    path.write_bytes(np.random.default_rng(0).bytes(500))
    with pytest.raises(CubeFormatError) as info:
        read_cube(path)
    assert str(path) in str(info.value) and "MATLAB" in str(info.value)
    assert info.value.__cause__ is not None


@pytest.mark.parametrize("suffix", [".h5", ".mat"])
def test_truncated_hdf5_and_v73(tmp_path, io_files, suffix):
    path = tmp_path / f"cut{suffix}"
    if suffix == ".mat":
        io_files.write_v73(path, {"cube": io_files.make_cube(shape=(30, 30, 20))})
    else:
        with h5py.File(path, "w") as f:
            f["cube"] = io_files.make_cube(shape=(30, 30, 20))
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CubeFormatError) as info:
        read_cube(path)
    assert str(path) in str(info.value) and "truncated" in str(info.value)
    assert info.value.__cause__ is not None


def test_truncated_envi_binary(tmp_path, io_files):
    header, binary = io_files.write_envi(tmp_path, io_files.make_cube(dtype=np.int16))
    binary.write_bytes(binary.read_bytes()[:-20])
    with pytest.raises(CubeFormatError) as info:
        read_cube(header)
    msg = str(info.value)
    assert str(binary) in msg and "400 bytes" in msg and "420 bytes" in msg and "truncated" in msg


def test_envi_header_size_mismatch(tmp_path, io_files):
    header, binary = io_files.write_envi(tmp_path, io_files.make_cube(dtype=np.int16))
    header.write_text(header.read_text().replace("lines = 7", "lines = 9"))
    with pytest.raises(CubeFormatError) as info:
        read_cube(binary)
    msg = str(info.value)
    assert str(binary) in msg and header.name in msg and "420 bytes" in msg and "540 bytes" in msg


def test_not_an_envi_header(tmp_path):
    header = tmp_path / "x.hdr"
    header.write_text("hello\n")
    (tmp_path / "x.img").write_bytes(b"\0" * 10)
    with pytest.raises(CubeFormatError, match="not a valid ENVI header") as info:
        read_cube(header)
    assert str(header) in str(info.value)


def test_wrong_key_lists_available_keys(tmp_path, io_files):
    path = tmp_path / "k.mat"
    scipy.io.savemat(path, {"hsi": io_files.make_cube(), "gt": np.ones((7, 5), np.uint8)})
    with pytest.raises(VariableKeyError) as info:
        read_cube(path, key="indian_pines")
    msg = str(info.value)
    assert str(path) in msg and "'indian_pines' not found" in msg and "'hsi'" in msg and "'gt'" in msg


def test_two_d_array_where_cube_expected(tmp_path):
    path = tmp_path / "gt.mat"
    scipy.io.savemat(path, {"gt": np.ones((7, 5), np.uint8)})
    for key in (None, "gt"):
        with pytest.raises(CubeFormatError) as info:
            read_cube(path, key=key)
        assert str(path) in str(info.value) and "'gt'" in str(info.value)
    assert "2-D" in str(info.value) and "read_labels" in str(info.value)


def test_three_d_where_labels_expected(tmp_path, io_files):
    path = tmp_path / "c.mat"
    scipy.io.savemat(path, {"c": io_files.make_cube()})
    with pytest.raises(CubeFormatError, match="label map must be 2-D") as info:
        read_labels(path, key="c")
    assert str(path) in str(info.value)


def test_non_integral_labels(tmp_path):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f["ok"] = np.array([[0.0, 1.0], [2.0, 3.0]])
        f["bad"] = np.array([[0.0, 1.5], [2.0, 3.0]])
    np.testing.assert_array_equal(read_labels(path, key="ok"), [[0, 1], [2, 3]])
    with pytest.raises(CubeFormatError, match=r"non-integral.*1\.5") as info:
        read_labels(path, key="bad")
    assert str(path) in str(info.value)


def test_ambiguous_layout(tmp_path, io_files):
    path = tmp_path / "cube.h5"
    with h5py.File(path, "w") as f:
        f["c"] = io_files.make_cube(shape=(10, 10, 10))
    with pytest.raises(LayoutError) as info:
        read_cube(path)
    assert str(path) in str(info.value) and "(10, 10, 10)" in str(info.value) and "layout=" in str(info.value)
    assert read_cube(path, layout="HWC").shape == (10, 10, 10)


def test_non_monotonic_wavelengths(tmp_path, io_files):
    cube = io_files.make_cube()
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"wavelength": [400, 420, 410, 430, 440, 450]})
    with pytest.raises(WavelengthError) as info:
        read_cube(header)
    msg = str(info.value)
    assert "image.img" in msg and "not strictly monotonic" in msg and "index 2" in msg


def test_wavelength_count_mismatch(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(), metadata={"wavelength": [400, 410, 420]})
    with pytest.raises(WavelengthError, match="3 wavelengths for 6 bands") as info:
        read_cube(header)
    assert "image" in str(info.value)


def test_expected_bands(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube())
    assert read_cube(header, expected_bands=6).n_bands == 6
    with pytest.raises(BandMismatchError, match="expected 200 bands, found 6") as info:
        read_cube(header, expected_bands=200)
    assert "image.img" in str(info.value)


@pytest.mark.parametrize("name", ["cube.txt", "cube.tif", "cube"])
def test_unknown_extension(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\0" * 64)
    with pytest.raises(CubeFormatError) as info:
        read_cube(path)
    msg = str(info.value)
    assert str(path) in msg and "unsupported file type" in msg and ".mat" in msg and ".hdr" in msg


def test_key_for_single_image_format(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube())
    with pytest.raises(CubeFormatError, match="key='x' does not apply"):
        read_cube(header, key="x")


def test_bad_layout_string(tmp_path, io_files):
    path = tmp_path / "a.mat"
    scipy.io.savemat(path, {"a": io_files.make_cube()})
    with pytest.raises(LayoutError, match="'HXC'"):
        read_cube(path, layout="HXC")


def test_envi_binary_without_header(tmp_path):
    path = tmp_path / "lonely.img"
    path.write_bytes(b"\0" * 64)
    with pytest.raises(DatasetNotFoundError) as info:
        read_cube(path)
    assert str(path) in str(info.value) and "lonely.img.hdr" in str(info.value) and "lonely.hdr" in str(info.value)
