"""One data path: a single scene opens as a collection of one, with one checkpoint state for one scene or several."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io as sio

from hsi.data.scene_source import SourceSpec
from tests.data.conftest import SMALL
from tests.helpers import quiet_datamodule

ARGS = {"scene": "synthetic", "scene_options": dict(SMALL), "block_size": 8, "patch_size": 5, "augment": False,
        "cache_dir": None}


def _same_data(a, b) -> None:
    """The split, fitted pipeline and cached arrays of two DataModules are equal, bit for bit."""
    for k in ("train", "val", "test", "buffer"):
        np.testing.assert_array_equal(getattr(a.split, k), getattr(b.split, k))
    assert a.pipeline.to_state() == b.pipeline.to_state()
    ea, eb = a._ensure_entry(), b._ensure_entry()
    assert sorted(ea.arrays) == sorted(eb.arrays)
    for name in ea.arrays:
        np.testing.assert_array_equal(ea.load(name), eb.load(name))


def test_a_single_scenes_state_is_a_collection_of_one_and_loads_back():
    dm = quiet_datamodule(**ARGS, folds=3, fold=2, train_per_class=5, pca=4)
    dm.setup()
    state = dm.state_dict()
    col = state["collection"]
    assert [s["name"] for s in col["scenes"]] == ["synthetic"] and len(col["splits"]) == 1
    assert state["split"] == col["splits"][0] and state["pipeline"] == col["pipeline"]
    assert state["split"]["params"]["fold"] == 1 and state["split"]["params"]["budget"]["train_per_class"] == 5
    again = quiet_datamodule(**ARGS, folds=3, fold=2, train_per_class=5, pca=4)
    again.load_state_dict(state)
    again.setup()
    _same_data(dm, again)


def test_a_single_scene_state_of_an_earlier_hsi_without_collection_loads_with_the_same_data():
    dm = quiet_datamodule(**ARGS, split="random")
    dm.setup()
    earlier = {k: v for k, v in dm.state_dict().items() if k != "collection"}  # as make_state wrote it before
    loaded = quiet_datamodule(**{**ARGS, "split_seed": 99}, split="random")  # another seed: the state's split wins
    loaded.load_state_dict(earlier)
    loaded.setup()
    _same_data(dm, loaded)
    assert loaded.scene_classes() == dm.scene_classes() and loaded.label_values == dm.label_values
    assert loaded.state_dict()["collection"]["splits"] == [earlier["split"]]


def test_a_one_scene_checkpoint_is_refused_by_a_datamodule_of_two_scenes():
    from hsi.errors import CheckpointError

    dm = quiet_datamodule(**ARGS)
    dm.setup()
    two = [{"name": n, "scene": "synthetic", "scene_options": {**SMALL, "seed": s}} for n, s in (("a", 1), ("b", 2))]
    other = quiet_datamodule(scenes=two, block_size=8, patch_size=5, cache_dir=None)
    other.load_state_dict(dm.state_dict())
    with pytest.raises(CheckpointError, match="trained on 1 scene"):
        other.setup()


def test_a_lone_scene_is_read_once_per_opening(monkeypatch):
    calls = []
    read = SourceSpec.read

    def counted(self, index=0):
        calls.append(index)
        return read(self, index)

    monkeypatch.setattr(SourceSpec, "read", counted)
    quiet_datamodule(**ARGS).setup()
    assert calls == [0]  # facts, fit and cache from one reading


def test_a_file_scene_keeps_its_label_ids_and_a_fixed_splits_test_only_classes(tmp_path):
    from hsi.scenes import make_synthetic_scene

    scene = make_synthetic_scene(height=40, width=40, bands=8, n_classes=4, seed=1)
    cols = np.arange(40)[None, :]
    sio.savemat(tmp_path / "cube.mat", {"img": scene.cube.data})
    sio.savemat(tmp_path / "train.mat", {"gt": (np.where(cols < 18, scene.labels, 0) * 10).astype(np.uint8)})
    test = np.where(cols >= 24, scene.labels, 0) * 10
    test[0, 39] = 90  # a class only the test map has
    sio.savemat(tmp_path / "test.mat", {"gt": test.astype(np.uint8)})
    dm = quiet_datamodule(scene=None, cube_path=str(tmp_path / "cube.mat"), labels_path=str(tmp_path / "train.mat"),
                          test_labels_path=str(tmp_path / "test.mat"), split="fixed", fractions=(0.8, 0.2, 0.0),
                          patch_size=5, cache_dir=str(tmp_path / "cache"), augment=False)
    dm.setup()
    assert dm.label_values[-1] == 90 and dm.state_dict()["label_values"] == dm.label_values
    assert dm.scene_classes()["cube"][-1] == "class_90" and dm.split.test[0, 39]
