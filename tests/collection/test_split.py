"""Splits of a collection: block splits stratified over all scenes, and whole scenes held out."""

from __future__ import annotations

import numpy as np

from hsi.data.sources.split import mosaic_offsets


def test_held_out_scene_gives_no_training_pixel(files, make_dm):
    dm = make_dm(str(files["scene"]))
    dm.setup("fit")
    south = dm.scene_names.index("south")
    train = dm.train_dataset
    assert len(train) > 0 and not np.any(train.scene_index == south)  # no training patch from the held-out scene
    assert not np.any(dm.val_dataset.scene_index == south)
    split = dm.scene_split("south")
    labels = dm.scene_labels("south")
    assert not split.train.any() and not split.buffer.any()
    assert np.array_equal(split.test, labels > 0)  # every labelled pixel of it is a test pixel
    for name in ("north", "west"):  # the training scenes give no test pixel; val comes from their blocks
        assert not dm.scene_split(name).test.any() and dm.scene_split(name).val.any()
    leakage = dm.split_summary()["leakage"]
    assert leakage["held_out"] == {"south": 0} and leakage["test_pixels_in_train_patches"] == 0
    dm.setup("test")
    assert set(np.unique(dm.test_dataset.scene_index)) == {south}


def test_block_split_is_stratified_over_the_collection_without_leakage(files, make_dm):
    dm = make_dm(str(files["block"]))
    dm.setup("fit")
    dm.setup("test")
    k = dm.num_classes
    assert dm.class_names == ["legume", "notill", "mintill", "row"]
    for ds in (dm.train_dataset, dm.test_dataset):  # every class (row is in one scene only) reaches train and test
        assert set(np.unique(ds.labels)) == set(range(k))
    assert {n: c for n, c in dm.scene_classes().items()} == {
        "north": ["legume", "notill", "mintill"], "south": ["legume", "notill", "mintill", "row"],
        "west": ["legume", "notill"]}
    report = dm.split_summary()["leakage"]
    assert report["test_pixels_in_train_patches"] == 0
    assert all(s["min_chebyshev_distance"] > dm.patch_size // 2 for s in report["scenes"].values())
    # the west scene's labels never carry a class it does not have (renumbered into the union's ids)
    assert set(np.unique(dm.scene_labels("west"))) == {0, 1, 2}


def test_mosaic_keeps_scenes_block_aligned_and_beyond_the_buffer():
    offsets = mosaic_offsets([(10, 13), (5, 16), (7, 3)], block_size=8, buffer=9)
    assert offsets == [0, 16 + 16, 32 + 16 + 16]
    assert all(x % 8 == 0 for x in offsets)
