from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from hsi.data import SourceSpec, load_source


@pytest.fixture
def mat_files(tmp_path, small_scene):
    cube = small_scene.cube.data
    raw = np.where(small_scene.labels > 0, small_scene.labels * 10 + 1, 0)  # ids 11, 21, ..., 51
    scipy.io.savemat(tmp_path / "cube.mat", {"img": cube})
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": raw.astype(np.uint8)})
    test = raw.copy()
    test[:, :24] = 0
    train = raw.copy()
    train[:, 24:] = 0
    scipy.io.savemat(tmp_path / "train_gt.mat", {"gt": train.astype(np.uint8)})
    scipy.io.savemat(tmp_path / "test_gt.mat", {"gt": test.astype(np.uint8)})
    return tmp_path


def test_files_source_renumbers_labels_and_has_file_identity(mat_files, small_scene):
    spec = SourceSpec(cube_path=str(mat_files / "cube.mat"), labels_path=str(mat_files / "gt.mat"))
    ident = spec.identity()
    assert ident["kind"] == "files" and len(ident["cube"][0]["sha256"]) == 64 and ident["labels"][0]["size"] > 0
    src = load_source(spec)
    assert src.name == "cube" and src.cube.shape == (48, 48, 20) and src.cube.dtype == np.float32
    assert src.label_values == [11, 21, 31, 41, 51]
    np.testing.assert_array_equal(src.labels, small_scene.labels)
    assert src.class_names == ["class_11", "class_21", "class_31", "class_41", "class_51"]
    assert src.palette.shape == (6, 3)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_datamodule_from_files_with_a_fixed_split(mat_files, make_dm):
    dm = make_dm(cube_path=str(mat_files / "cube.mat"), labels_path=str(mat_files / "train_gt.mat"),
                 test_labels_path=str(mat_files / "test_gt.mat"), split="fixed", fractions=(0.8, 0.2, 0.0))
    dm.prepare_data()
    dm.setup("fit")
    dm.setup("test")
    assert dm.scene_name == "cube"
    assert not dm.split.train[:, 24:].any() and not dm.split.test[:, :24].any()
    assert dm.split.val.sum() > 0 and dm.label_values == [11, 21, 31, 41, 51]
    x, y = next(iter(dm.test_dataloader()))
    assert x.shape[1:] == (20, 5, 5) and int(y.max()) <= 4


def test_registry_scene_from_the_shared_data(shared_data, tmp_path):
    from hsi.data import HSIDataModule

    root = shared_data / "envi"
    dm = HSIDataModule(scene="samson", root=str(root), patch_size=5, block_size=10, cache_dir=str(tmp_path))
    dm.prepare_data()
    dm.setup("fit")
    assert dm.num_classes == 3 and dm.num_bands == 156 and dm.image_shape == (95, 95)
    ident = __import__("json").loads((dm.cache_path / "meta.json").read_text())["description"]["source"]["source"]
    assert ident["kind"] == "registry" and any(f["path"].endswith("samson_1.img") for f in ident["files"])
