"""hsi.io.write_h5 / append_h5: packed HDF5 files read back exactly by read_cube with no key."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from hsi.errors import OptionError, OverwriteError, ShapeMismatchError, WavelengthError
from hsi.io import open_cube, read_cube, read_labels
from hsi.io.writers.hdf5 import append_h5, chunk_shape, write_h5


def _scene(seed: int = 0, shape=(37, 29, 13), dtype=np.uint16):
    rng = np.random.default_rng(seed)
    cube = rng.integers(0, 5000, size=shape).astype(dtype)
    labels = rng.integers(0, 4, size=shape[:2]).astype(np.uint8)
    return cube, labels, 420.0 + 7.5 * np.arange(shape[2])


@pytest.mark.parametrize("compression", [None, "gzip", "lzf"])
def test_round_trip_is_exact_with_no_key(tmp_path, compression):
    cube, labels, wl = _scene()
    path = write_h5(tmp_path / "s.h5", cube, labels, wl, ["soil", "water", "trees"], compression=compression,
                    source="unit test", preprocessing={"scale": "none"})
    back = read_cube(path)
    assert back.data.dtype == np.float32 and np.array_equal(back.data, cube.astype(np.float32))
    assert np.array_equal(back.wavelengths, wl)
    assert np.array_equal(read_labels(path), labels)
    with h5py.File(path) as f:
        assert f["cube"].dtype == np.uint16  # stored in its own dtype
        assert f["cube"].compression == compression
        assert list(f["labels"].attrs["class_names"].astype(str)) == ["soil", "water", "trees"]
        assert f.attrs["source"] == "unit test"
        assert json.loads(f.attrs["preprocessing"]) == {"scale": "none"}
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def test_chunks_are_spatial_tiles_with_every_band_and_overridable(tmp_path):
    cube, _, wl = _scene(shape=(300, 280, 50), dtype=np.float32)
    auto = chunk_shape(cube.shape, 4)
    assert auto[2] == 50 and auto[0] == auto[1] and 8 <= auto[0] < 280
    assert abs(np.prod(auto) * 4 - (1 << 20)) < 0.1 * (1 << 20)
    path = write_h5(tmp_path / "a.h5", cube, wavelengths=wl)
    custom = write_h5(tmp_path / "b.h5", cube, wavelengths=wl, chunks=(16, 32, 10))
    with h5py.File(path) as f, h5py.File(custom) as g:
        assert f["cube"].chunks == auto
        assert g["cube"].chunks == (16, 32, 10)
    with open_cube(custom) as lazy:  # windows read through the chunks are the same values
        assert np.array_equal(lazy.read_window(slice(100, 111), slice(5, 16)), cube[100:111, 5:16])


def test_append_grows_the_datasets_and_reads_back_stacked(tmp_path):
    cube, labels, wl = _scene(0)
    more, more_labels, _ = _scene(1, shape=(11, 29, 13))
    path = write_h5(tmp_path / "s.h5", cube, labels, wl)
    assert append_h5(path, more, more_labels) == (37, 48)
    back = read_cube(path)
    assert back.shape == (48, 29, 13)
    assert np.array_equal(back.data, np.concatenate([cube, more]).astype(np.float32))
    assert np.array_equal(read_labels(path), np.concatenate([labels, more_labels]))
    with h5py.File(path) as f:
        assert list(f.attrs["scene_rows"]) == [0, 37, 48]


def test_append_refuses_mismatches_and_leaves_the_file_unchanged(tmp_path):
    cube, labels, wl = _scene(0)
    path = write_h5(tmp_path / "s.h5", cube, labels, wl)
    with pytest.raises(ShapeMismatchError, match="widths and band counts"):
        append_h5(path, cube[:, :5], labels[:, :5])
    with pytest.raises(OptionError, match="labels"):
        append_h5(path, cube)  # the file has labels: appending needs them
    with pytest.raises(OptionError, match="dtype"):
        append_h5(path, cube.astype(np.float64), labels)
    assert read_cube(path).shape == cube.shape


def test_bad_input_is_refused_before_any_file_is_written(tmp_path):
    cube, labels, wl = _scene()
    target = tmp_path / "s.h5"
    with pytest.raises(WavelengthError, match="12 wavelengths for a cube of 13 bands"):
        write_h5(target, cube, wavelengths=wl[:-1])
    with pytest.raises(WavelengthError, match="monotonic"):
        write_h5(target, cube, wavelengths=wl[::-1].copy() * np.r_[1, -1, np.ones(11)])
    with pytest.raises(ShapeMismatchError, match="labels have shape"):
        write_h5(target, cube, labels.T)
    with pytest.raises(OptionError, match="compression"):
        write_h5(target, cube, compression="zip")
    with pytest.raises(OptionError, match="class_names"):
        write_h5(target, cube, labels, class_names=["only one"])
    assert not any(tmp_path.iterdir())
    write_h5(target, cube)
    with pytest.raises(OverwriteError, match="already exists"):
        write_h5(target, cube)


def test_patches_can_be_appended_and_leave_discovery_alone(tmp_path):
    from hsi.io.writers.hdf5 import append_patches

    cube, labels, wl = _scene()
    path = write_h5(tmp_path / "s.h5", cube, labels, wl)
    rng = np.random.default_rng(5)
    first, second = rng.random((10, 13, 5, 5)).astype(np.float32), rng.random((7, 13, 5, 5)).astype(np.float32)
    assert append_patches(path, first, np.arange(10)) == (0, 10)
    assert append_patches(path, second, np.arange(7)) == (10, 17)
    with h5py.File(path) as f:
        assert np.array_equal(f["patches"][()], np.concatenate([first, second]))
        assert list(f["patch_labels"][()]) == list(range(10)) + list(range(7))
    assert np.array_equal(read_cube(path).data, cube.astype(np.float32))  # still found with no key
    assert np.array_equal(read_labels(path), labels)
    with pytest.raises(ShapeMismatchError, match="patches of 12 bands for a cube of 13"):
        append_patches(path, first[:, :12], np.arange(10))
