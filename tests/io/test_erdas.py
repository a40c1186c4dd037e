"""ERDAS 7.4 LAN/GIS files (HEAD74 header, BIL data) through spectral."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import CubeFormatError
from hsi.io import open_cube, read_cube, read_labels


def test_lan_cube_round_trip_and_window(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    path = io_files.write_lan(tmp_path / "scene.lan", cube)
    out = read_cube(path)
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))
    assert out.wavelengths is None and out.meta["format"] == "erdas"
    with open_cube(path) as lazy:
        np.testing.assert_array_equal(lazy.read_window(slice(2, 4), slice(1, 5)), out.data[2:4, 1:5])


def test_gis_labels_are_unsigned_bytes(tmp_path, io_files):
    gt = np.array([[0, 1, 200], [255, 3, 0]], dtype=np.uint8)[..., None]
    path = io_files.write_lan(tmp_path / "MAP.GIS", gt)
    labels = read_labels(path)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, gt[..., 0].astype(np.int64))


def test_truncated_lan(tmp_path, io_files):
    path = io_files.write_lan(tmp_path / "cut.lan", io_files.make_cube(dtype=np.int16))
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(CubeFormatError) as info:
        read_cube(path)
    assert str(path) in str(info.value) and "truncated" in str(info.value)
    assert "538 bytes" in str(info.value) and "548 bytes" in str(info.value)


def test_lan_without_magic(tmp_path):
    path = tmp_path / "fake.lan"
    path.write_bytes(b"NOTLAN" + bytes(200))
    with pytest.raises(CubeFormatError, match="HEAD74"):
        read_cube(path)
