"""Spatial k-fold splits: the folds partition the labelled blocks, each fold's split is buffered and leak-free."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hsi.errors import OptionError, SplitError
from hsi.preprocess.leakage import leakage_report
from hsi.preprocess.split_blocks import block_folds, block_split
from hsi.scenes.synthetic import make_synthetic_scene

BLOCK = 8


@pytest.fixture(scope="module")
def labels() -> np.ndarray:
    return np.asarray(make_synthetic_scene(height=48, width=48, bands=4, n_classes=4, seed=2).labels)


def _splits(labels, k, seed=0, buffer=2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [block_split(labels, BLOCK, buffer=buffer, seed=seed, n_folds=k, fold=i) for i in range(k)]


def test_folds_partition_the_labelled_blocks_and_each_is_test_once(labels):
    splits = _splits(labels, 4)
    times_test = sum(s.test.astype(int) for s in splits)
    assert (times_test == (labels > 0)).all()  # every labelled pixel is test in exactly one fold
    block_id = (np.arange(48) // BLOCK)[:, None] * (48 // BLOCK) + (np.arange(48) // BLOCK)[None, :]
    folds = block_folds(labels, BLOCK, 4, seed=0)
    for b in np.unique(block_id[labels > 0]):  # a block goes whole to one fold
        assert len(np.unique(folds[(block_id == b) & (labels > 0)])) == 1
    for i, s in enumerate(splits):
        assert (s.test == (folds == i)).all()
        assert s.params["n_folds"] == 4 and s.params["fold"] == i


def test_folds_are_stratified_by_class(labels):
    folds = block_folds(labels, BLOCK, 3, seed=0)
    for c in range(1, int(labels.max()) + 1):
        per_fold = np.bincount(folds[labels == c], minlength=3)
        assert (per_fold > 0).all(), f"class {c} missing from a fold: {per_fold}"


def test_each_fold_has_val_from_its_training_side_a_buffer_and_no_leak(labels):
    for s in _splits(labels, 3, buffer=2):
        assert s.val.any() and s.buffer.any()
        assert not (s.val & s.test).any()
        assert leakage_report(s.train, s.val | s.test, 5)["test_pixels_in_train_patches"] == 0


def test_same_seed_same_folds_other_seed_other_folds(labels):
    assert (block_folds(labels, BLOCK, 3, seed=4) == block_folds(labels, BLOCK, 3, seed=4)).all()
    assert (block_folds(labels, BLOCK, 3, seed=4) != block_folds(labels, BLOCK, 3, seed=5)).any()
    a, b = _splits(labels, 3, seed=4)[1], _splits(labels, 3, seed=4)[1]
    assert all((getattr(a, m) == getattr(b, m)).all() for m in ("train", "val", "test", "buffer"))


def test_bad_fold_arguments_are_refused(labels):
    with pytest.raises(SplitError, match="go together"):
        block_split(labels, BLOCK, n_folds=3)
    with pytest.raises(SplitError, match="from 0 to n_folds - 1 = 2"):
        block_split(labels, BLOCK, n_folds=3, fold=3)
    with pytest.raises(SplitError, match="fewer than the 99 folds"):
        block_folds(labels, BLOCK, 99)


def test_datamodule_checks_the_fold_options_and_keys_its_cache_by_fold():
    from hsi.data import HSIDataModule
    from hsi.data.build import CacheRecipe

    with pytest.raises(OptionError, match="fold"):
        HSIDataModule(folds=3)
    with pytest.raises(OptionError, match="from 1 to 3"):
        HSIDataModule(folds=3, fold=4)
    with pytest.raises(OptionError, match=">= 1"):
        HSIDataModule(folds=3, fold=0)  # folds count from 1
    with pytest.raises(OptionError, match="split=block"):
        HSIDataModule(folds=3, fold=1, split="random")
    keys = [CacheRecipe(HSIDataModule(folds=3, fold=i)._recipe(), {"split": {}, "pipeline": {}}).description({"scene": "x"}) for i in (1, 2)]
    assert keys[0]["fold"] == 1 and keys[1]["fold"] == 2 and keys[0] != keys[1]


SMALL = {"height": 24, "width": 24, "bands": 8, "n_classes": 3, "seed": 1}


def _fold_dm(**overrides):
    from hsi.data import HSIDataModule

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HSIDataModule(**{"scene": "synthetic", "scene_options": SMALL, "patch_size": 5, "block_size": 6,
                                "folds": 3, "fold": 1, **overrides})


@pytest.mark.filterwarnings("ignore")
def test_fold_1_is_the_first_fold():
    labels = make_synthetic_scene(**SMALL).labels
    for fold in (1, 3):
        dm = _fold_dm(fold=fold)
        dm.prepare_data()
        dm.setup("fit")
        first = block_split(labels, 6, fractions=(0.6, 0.2, 0.2), buffer=2, seed=0, n_folds=3, fold=fold - 1)
        assert np.array_equal(dm.split.test, first.test) and np.array_equal(dm.split.train, first.train)


@pytest.mark.filterwarnings("ignore")
def test_a_checkpoint_that_counted_folds_from_0_loads_with_the_same_split(tmp_path):
    import torch

    from hsi.data import HSIDataModule
    from hsi.data.checkpoint import read_checkpoint
    from tests.helpers import train_checkpoint

    dm = _fold_dm(fold=2)
    train_checkpoint(tmp_path / "new.ckpt", dm, "spectral1d", batches=1)
    ckpt = torch.load(tmp_path / "new.ckpt", weights_only=True)
    assert ckpt["datamodule_hyper_parameters"]["fold"] == 2
    ckpt["datamodule_hyper_parameters"]["fold"] = 1  # what an earlier version wrote for the second fold
    torch.save(ckpt, tmp_path / "old.ckpt")
    for name in ("new.ckpt", "old.ckpt"):
        assert read_checkpoint(tmp_path / name)["datamodule_hyper_parameters"]["fold"] == 2
        loaded = HSIDataModule.load_from_checkpoint(tmp_path / name)
        loaded.setup("fit")
        assert loaded.hparams.fold == 2 and np.array_equal(loaded.split.test, dm.split.test)
