"""split="fixed": test pixels take their class from the test map, not the (empty there) training map."""

from __future__ import annotations

import numpy as np
import scipy.io as sio

from hsi.data import HSIDataModule
from hsi.scenes import make_synthetic_scene


def test_fixed_split_test_labels_come_from_the_test_map(tmp_path):
    scene = make_synthetic_scene(height=40, width=40, bands=8, n_classes=4, seed=1)
    cols = np.arange(40)[None, :]
    train_map = np.where(cols < 18, scene.labels, 0).astype(np.uint8)
    test_map = np.where(cols >= 24, scene.labels, 0).astype(np.uint8)
    sio.savemat(tmp_path / "cube.mat", {"img": scene.cube.data})
    sio.savemat(tmp_path / "train.mat", {"train_gt": train_map})
    sio.savemat(tmp_path / "test.mat", {"test_gt": test_map})

    dm = HSIDataModule(scene=None, cube_path=str(tmp_path / "cube.mat"), labels_path=str(tmp_path / "train.mat"),
                       labels_key="train_gt", test_labels_path=str(tmp_path / "test.mat"), test_labels_key="test_gt",
                       split="fixed", patch_size=5, cache_dir=None, augment=False)
    dm.prepare_data()
    dm.setup("test")
    ds = dm.test_dataset
    rows, cols_ = ds.coords[:, 0], ds.coords[:, 1]
    assert len(ds) == (test_map > 0).sum()
    np.testing.assert_array_equal(ds.labels, test_map[rows, cols_].astype(np.int64) - 1)
    assert (ds.labels >= 0).all()
    # Training pixels still come from the training map only.
    assert (train_map[dm.train_dataset.coords[:, 0], dm.train_dataset.coords[:, 1]] > 0).all()
