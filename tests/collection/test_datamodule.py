"""``HSIDataModule(scenes=...)``: one cache entry per scene, the same batches from a pack, state in checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hsi.errors import CollectionError, OptionError


def _batches(dm, name="train", n=3):
    loader = getattr(dm, f"{name}_dataloader")()
    out = []
    for i, (x, y) in enumerate(loader):
        if i == n:
            break
        out.append((x.clone(), y.clone()))
    return out


def test_pack_gives_the_same_batches_as_the_separate_files(files, make_dm, tmp_path):
    from hsi.collection.pack import pack_collection

    pack = pack_collection(files["block"], tmp_path / "pack.h5")
    a, b = make_dm(str(files["block"])), make_dm(str(pack))
    for dm in (a, b):
        dm.setup("fit")
    assert b.scene_names == a.scene_names and b.class_names == a.class_names
    assert np.array_equal(a.train_dataset.coords, b.train_dataset.coords)
    for (xa, ya), (xb, yb) in zip(_batches(a), _batches(b)):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)
    assert a.state_dict()["pipeline"] == b.state_dict()["pipeline"]
    import h5py

    with h5py.File(pack) as handle:  # chunked for window reads, with its classes and provenance
        cube = handle["south/cube"]
        assert cube.chunks is not None and cube.chunks[2] == cube.shape[2] == 20
        assert "legume" in handle["south"].attrs["class_names"] and "south.h5" in handle["south"].attrs["provenance"]
        assert handle["south/wavelengths"][0] == 420.0


def test_one_cache_entry_per_scene_and_no_concatenated_cube(files, make_dm, tmp_path):
    dm = make_dm(str(files["block"]), cache_dir=str(tmp_path / "cache"))
    dm.prepare_data()
    dm.setup("fit")
    folders = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "cache").iterdir() if p.is_dir())
    assert folders == ["north", "south", "west"]
    import hsi.data.sources.build as build

    def refit(*args, **kwargs):
        raise AssertionError("the collection's state was made again")

    again = make_dm(str(files["block"]), cache_dir=str(tmp_path / "cache"))
    with pytest.MonkeyPatch.context() as mp:  # a second run reads the kept state and the caches: nothing refitted
        mp.setattr(build, "collection_state", refit)
        again.setup("fit")
    assert again.state_dict()["pipeline"] == dm.state_dict()["pipeline"]
    assert len(list((tmp_path / "cache").glob("collection-*.json"))) == 1
    parts = dm.train_dataset.parts
    cubes = [p._array("cube") for p in parts]
    assert [c.shape[:2] for c in cubes] == [(36, 36), (28, 40), (32, 32)]  # each scene's own padded cube
    assert all(isinstance(c, np.memmap) for c in cubes)
    assert dm.num_bands == 14 and len(dm.wavelengths) == 14  # the common grid: north's bands in 420-2400 nm
    # a sample is (scene, row, col): the batch holds each sample's own window (flips keep the centre; the
    # spectral augmentation several scenes get by default would change its values, so it is off here)
    assert (dm.hparams.spectral_scale, dm.hparams.spectral_noise) == (0.1, 0.05)
    ds = dm._make_dataset("train", augmented=False)
    i = int(np.flatnonzero(ds.scene_index == 1)[3])
    x, _ = ds[i]
    r, c = ds.coords[i]
    assert torch.equal(x, ds.parts[1][i - int(ds.starts[1])][0])
    assert np.allclose(x.numpy()[:, 2, 2], cubes[1][r + 2, c + 2])


def test_state_dict_restores_split_pipeline_and_classes(files, make_dm):
    dm = make_dm(str(files["scene"]))
    dm.setup("fit")
    state = dm.state_dict()
    col = state["collection"]
    assert [s["name"] for s in col["scenes"]] == ["north", "south", "west"]
    assert col["scenes"][2]["classes"] == ["legume", "notill"] and len(col["grid"]) == 14
    assert state["class_names"] == ["legume", "notill", "mintill", "row"] and state["num_classes"] == 4
    other = make_dm(str(files["scene"]), fractions=(0.4, 0.4, 0.2))  # would split differently
    other.load_state_dict(state)
    other.setup("fit")
    assert np.array_equal(other.train_dataset.coords, dm.train_dataset.coords)
    assert other.state_dict()["pipeline"] == state["pipeline"]
    import pickle  # ddp_spawn and copies pickle the DataModule

    copy = pickle.loads(pickle.dumps(dm))
    assert type(copy) is type(dm) and copy.scene_names == dm.scene_names
    assert np.array_equal(copy.train_dataset.labels, dm.train_dataset.labels)


def test_distributed_sampler_shards_the_whole_collection(files, make_dm):
    from torch.utils.data import DistributedSampler

    from hsi.data.samplers import ClassBalancedSampler

    dm = make_dm(str(files["block"]))
    dm.setup("fit")
    ds = dm.train_dataset
    shards = [list(DistributedSampler(ds, num_replicas=2, rank=r, seed=0)) for r in (0, 1)]
    assert set(shards[0]) | set(shards[1]) == set(range(len(ds))) and len(set(shards[0]) & set(shards[1])) <= 1
    for shard in shards:  # each rank draws from every scene
        assert set(np.unique(ds.scene_index[shard]).tolist()) == {0, 1, 2}
    balanced = [list(ClassBalancedSampler(ds.labels, num_replicas=2, rank=r, seed=0)) for r in (0, 1)]
    assert all(set(np.unique(ds.labels[b]).tolist()) == {0, 1, 2, 3} for b in balanced)


def test_bad_arguments_with_scenes_are_refused_early(files, make_dm):
    with pytest.raises(OptionError, match="cube_path"):
        make_dm(str(files["block"]), cube_path="x.h5", labels_path="y.mat")
    with pytest.raises(OptionError, match="split"):
        make_dm(str(files["block"]), split="random")
    with pytest.raises(CollectionError, match="classes: 'class_9'"):
        dm = make_dm([{"name": "n", "cube": str(files["north"]), "labels": str(files["north"].with_name("north_gt.mat")),
                       "classes": {"class_9": "x"}}])
        dm.setup("fit")


def test_lightning_cli_takes_the_same_entries(files, tmp_path, monkeypatch):
    import sys

    import yaml

    monkeypatch.setattr(sys, "argv", ["hsi"])
    pytest.importorskip("jsonargparse")
    from lightning.pytorch.cli import LightningCLI

    from hsi.data import HSIDataModule
    from hsi.training import HSIClassifier

    scenes = yaml.safe_load(files["block"].read_text())["scenes"]
    for entry in scenes[:2]:
        entry["cube"], entry["labels"] = (str(files["block"].parent / entry[k]) for k in ("cube", "labels"))
    config = {"model": {"model": "spectral1d"}, "data": {"scenes": scenes, "patch_size": 5, "block_size": 8},
              "trainer": {"max_epochs": 1, "logger": False, "enable_checkpointing": False,
                          "default_root_dir": str(tmp_path)}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    cli = LightningCLI(HSIClassifier, HSIDataModule, run=False, args=["--config", str(tmp_path / "config.yaml")],
                       save_config_callback=None)
    dm = cli.datamodule
    assert type(dm) is HSIDataModule and dm.scene_names == ["north", "south", "west"]
    dm.setup("fit")
    x, y = next(iter(dm.train_dataloader()))
    assert x.shape[1:] == (14, 5, 5) and int(y.max()) < 4


def test_preprocessing_fitted_once_on_all_training_scenes_or_per_scene(files, make_dm):
    import yaml

    from hsi.preprocess import Pipeline

    doc = yaml.safe_load(files["block"].read_text())
    for entry in doc["scenes"][:2]:
        entry["cube"], entry["labels"] = (str(files["block"].parent / entry[k]) for k in ("cube", "labels"))
    shared, own = make_dm(doc, scaling="minmax"), make_dm({**doc, "preprocess": "scene"}, scaling="minmax")
    for dm in (shared, own):
        dm.setup("fit")
    scaler = Pipeline.from_state(shared.state_dict()["pipeline"]).steps[-1]
    lo, hi = scaler.data_min_, scaler.data_max_  # min-max over the training pixels of the three scenes together
    per = [Pipeline.from_state(p).steps[-1] for p in own.state_dict()["collection"]["pipelines"]]
    assert np.allclose(lo, np.min([p.data_min_ for p in per], axis=0))
    assert np.allclose(hi, np.max([p.data_max_ for p in per], axis=0))
    assert not np.allclose(per[0].data_min_, per[1].data_min_)  # each scene scaled by its own statistics
    # each scene's cached cube went through its own pipeline
    train = own.train_dataset
    for s, part in enumerate(train.parts):
        cube = part._array("cube")[2:-2, 2:-2]
        inside = cube[part.coords[:, 0], part.coords[:, 1]]
        assert inside.min() >= -1e-6 and inside.max() <= 1 + 1e-6 and inside.max() > 0.99
