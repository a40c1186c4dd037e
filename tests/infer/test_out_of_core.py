"""Cubes on disk (chunked HDF5, ``.npy``) give the map of the cube in memory, read window by window."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from hsi.infer import infer_scene, load_checkpoint
from hsi.infer.sources import open_scene_source


@pytest.fixture(scope="module")
def files(scene, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ooc")
    cube = scene.cube.data
    np.save(folder / "cube.npy", cube)
    np.save(folder / "cube_chw.npy", np.ascontiguousarray(cube.transpose(2, 0, 1)))
    with h5py.File(folder / "cube.h5", "w") as f:
        f.create_dataset("cube", data=cube, chunks=(8, 8, cube.shape[2]))
    return folder


@pytest.mark.parametrize("model_fixture", ["fcn_ckpt", "cnn_ckpt"])
def test_disk_sources_give_the_in_memory_map(request, scene, files, model_fixture):
    model = load_checkpoint(request.getfixturevalue(model_fixture))
    kw = dict(tile=13, overlap=4, accelerator="cpu", progress=False)
    ref = infer_scene(model, scene.cube.data, **kw)
    for path, extra in [(files / "cube.npy", {}), (files / "cube_chw.npy", {"layout": "CHW"}),
                        (files / "cube.h5", {"cube_key": "cube", "layout": "HWC"})]:
        got = infer_scene(model, path, **extra, **kw)
        np.testing.assert_array_equal(got.labels, ref.labels, err_msg=str(path))
        np.testing.assert_allclose(got.confidence, ref.confidence, atol=1e-6, err_msg=str(path))


def test_sources_read_only_the_windows_asked_for(files, scene):
    # a memory map stays a memory map (nothing is loaded), and a window equals the cube's pixels
    src = open_scene_source(files / "cube.npy")
    assert isinstance(src.array, np.memmap) or isinstance(src.array.base, np.memmap)
    np.testing.assert_array_equal(src.read_window(slice(3, 9), slice(20, 30)), scene.cube.data[3:9, 20:30])
    src.close()
    h5 = open_scene_source(files / "cube.h5", key="cube", layout="HWC")
    np.testing.assert_array_equal(h5.read_window(slice(30, 36), slice(0, 4)), scene.cube.data[30:36, 0:4])
    h5.close()
