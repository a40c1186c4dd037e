"""A cube with NaN pixels trains to finite weights, with the excluded pixels recorded (issue 10)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.io
import torch

from hsi.errors import CubeFormatError
from tests.helpers import quiet_trainer


@pytest.fixture
def nan_files(tmp_path, small_scene):
    """The small scene as .mat files, with NaN in ~5 % of its labeled pixels (one band each) and an inf."""
    cube = small_scene.cube.data.copy()
    labels = small_scene.labels
    rng = np.random.default_rng(0)
    labeled = np.argwhere(labels > 0)
    hit = labeled[rng.choice(len(labeled), size=len(labeled) // 20, replace=False)]
    cube[hit[:, 0], hit[:, 1], rng.integers(0, cube.shape[2], size=len(hit))] = np.nan
    unlabeled = np.argwhere(labels == 0)
    r, c = unlabeled[0]
    cube[r, c, 3] = np.inf  # an unlabeled pixel: its value sits in labeled pixels' windows
    scipy.io.savemat(tmp_path / "cube.mat", {"img": cube})
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": labels.astype(np.uint8)})
    return tmp_path, hit, cube


def _dm(make_dm, folder, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = make_dm(cube_path=str(folder / "cube.mat"), labels_path=str(folder / "gt.mat"), augment=False, **kw)
        dm.prepare_data()
        dm.setup("fit")
        dm.setup("test")
    return dm


@pytest.mark.parametrize("cache", ["cube", "memory"])
def test_nonfinite_pixels_are_left_out_of_every_split_and_counted(make_dm, nan_files, small_scene, cache):
    folder, hit, _ = nan_files
    dm = _dm(make_dm, folder, cache=cache)
    record = dm.excluded_nonfinite
    assert record["pixels"] == len(hit) and record["nonfinite_pixels"] == len(hit) + 1
    assert sum(record["per_class"].values()) == len(hit)
    assert record["first"] == [int(v) for v in sorted(map(tuple, hit))[0]]
    bad = np.zeros(small_scene.labels.shape, dtype=bool)
    bad[hit[:, 0], hit[:, 1]] = True
    for mask in (dm.split.train, dm.split.val, dm.split.test):
        assert not (mask & bad).any()
    for ds in (dm.train_dataset, dm.val_dataset, dm.test_dataset):
        assert not bad[ds.coords[:, 0], ds.coords[:, 1]].any()
    padded = dm._ensure_entry().load("cube")
    assert np.isfinite(padded).all()  # values inside other pixels' windows were filled
    assert type(dm.pipeline.steps[0]).__name__ == "NonFiniteFill"


def test_nan_cube_trains_a_tiny_model_to_finite_weights(make_dm, nan_files):
    import lightning.pytorch as pl
    import torch.nn.functional as F

    folder, _, _ = nan_files
    dm = _dm(make_dm, folder, cache="memory")

    class Tiny(pl.LightningModule):
        def __init__(self, n_in: int, k: int) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(n_in, k)

        def training_step(self, batch, i):
            x, y = batch
            assert torch.isfinite(x).all()
            return F.cross_entropy(self.lin(x.flatten(1)), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    torch.manual_seed(0)
    model = Tiny(dm.num_bands * 25, dm.num_classes)
    trainer = quiet_trainer(max_epochs=1, limit_val_batches=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(model, datamodule=dm)
    assert trainer.global_step > 0
    assert all(torch.isfinite(p).all() for p in model.parameters())


@pytest.mark.parametrize("value", [0.0, 7.0, np.nan])
def test_constant_or_empty_cube_is_refused_before_training(make_dm, tmp_path, small_scene, value):
    cube = np.full(small_scene.cube.data.shape, value, dtype=np.float32)
    scipy.io.savemat(tmp_path / "cube.mat", {"img": cube})
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": small_scene.labels.astype(np.uint8)})
    with pytest.raises(CubeFormatError, match="nothing to learn|no finite value"):
        _dm(make_dm, tmp_path, cache="memory")


def test_predict_on_all_leaves_nodata_pixels_out(make_dm, nan_files, small_scene):
    """``predict_on="all"`` serves every pixel with data, none of the no-data ones (as ``hsi infer`` maps them)."""
    folder, hit, cube = nan_files
    dm = _dm(make_dm, folder, predict_on="all")
    dm.setup("predict")
    coords = {tuple(int(v) for v in rc) for rc in dm.predict_dataset.coords}
    nodata = {tuple(int(v) for v in rc) for rc in np.argwhere(~np.isfinite(cube).all(axis=-1))}
    assert len(nodata) == len(hit) + 1
    assert not coords & nodata
    assert len(coords) == small_scene.labels.size - len(nodata)
