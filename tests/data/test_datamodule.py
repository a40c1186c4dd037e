from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch


def _epoch_batches(loader, epoch):
    loader.sampler.set_epoch(epoch)  # what Lightning does before each epoch
    return [tuple(t.clone() for t in b) for b in loader]


def _assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        for u, v in zip(x, y):
            assert torch.equal(u, v)


def test_contract_of_every_dataloader(make_dm, small_scene):
    dm = make_dm(predict_on="all")
    dm.prepare_data()
    dm.setup("fit")
    dm.setup("test")
    dm.setup("predict")
    k, p = dm.num_classes, 5
    assert k == 5 and dm.num_bands == 20 and len(dm.class_names) == 5 and dm.palette.shape == (6, 3)
    assert dm.image_shape == (48, 48) and dm.labels.shape == (48, 48) and dm.scene_name == "synthetic"
    for name in ("train", "val", "test", "predict"):
        batch = next(iter(getattr(dm, f"{name}_dataloader")()))
        x, y = batch[0], batch[1]
        assert x.shape == (16, 20, p, p) and x.dtype == torch.float32
        assert y.shape == (16,) and y.dtype == torch.int64
        if name == "predict":
            assert batch[2].shape == (16, 2) and batch[2].dtype == torch.int64
            assert y.min() >= -1
        else:
            assert len(batch) == 2 and 0 <= int(y.min()) and int(y.max()) <= k - 1
    # min-max fitted on train: the centre pixels of the training patches are in [0, 1]
    xs = torch.cat([b[0] for b in dm.train_dataloader()])
    centres = xs[:, :, p // 2, p // 2]
    assert float(centres.min()) >= -1e-6 and float(centres.max()) <= 1 + 1e-6
    assert float(centres.min()) < 0.05 and float(centres.max()) > 0.95
    # sizes match the split masks
    assert len(dm.train_dataset) == int(dm.split.train.sum())
    assert len(dm.test_dataset) == int(dm.split.test.sum())
    assert len(dm.predict_dataset) == 48 * 48


def test_patch_i_is_the_hand_cut_window_of_the_preprocessed_cube(make_dm, small_scene):
    dm = make_dm(predict_on="all", augment=False)
    dm.setup()
    x = dm.pipeline.transform(small_scene.cube.data)
    padded = np.pad(x, ((2, 2), (2, 2), (0, 0)), mode="reflect")
    for name in ("train", "predict"):
        ds = getattr(dm, f"{name}_dataset")
        picks = list(range(0, len(ds), max(1, len(ds) // 40)))
        if name == "predict":  # all four corners and edge pixels are in the predict set
            picks += [0, 47, 48 * 47, 48 * 48 - 1, 48 * 20]
        for i in picks:
            patch, label = ds[i]
            r, c = ds.coords[i]
            np.testing.assert_array_equal(patch.numpy(), padded[r : r + 5, c : c + 5].transpose(2, 0, 1))
            assert int(label) == small_scene.labels[r, c] - 1
    np.testing.assert_array_equal(dm.train_dataset.coords, np.argwhere(dm.split.train))


def test_workers_give_the_same_batches_as_the_main_process(make_dm):
    dm0 = make_dm(num_workers=0, augment=True)
    dm2 = make_dm(num_workers=2, augment=True, persistent_workers=True)
    for dm in (dm0, dm2):
        dm.prepare_data()
        dm.setup("fit")
    l0, l2 = dm0.train_dataloader(), dm2.train_dataloader()
    epochs0 = [_epoch_batches(l0, e) for e in (0, 1)]
    epochs2 = [_epoch_batches(l2, e) for e in (0, 1)]
    for a, b in zip(epochs0, epochs2):
        _assert_same(a, b)
    # augmentation is on and differs between epochs (order and symmetries)
    plain = make_dm(augment=False)
    plain.setup("fit")
    ds = plain.train_dataset
    x0 = torch.cat([b[0] for b in epochs0[0]])
    order = np.random.default_rng([0, 0]).permutation(len(ds))
    ref = torch.cat([ds.__getitems__(order[i : i + 16]).patches for i in range(0, len(ds), 16)])
    assert not torch.equal(x0, ref)
    assert not torch.equal(torch.cat([b[1] for b in epochs0[0]]), torch.cat([b[1] for b in epochs0[1]]))


def test_gather_on_device_matches_host_path(make_dm):
    host = make_dm(augment=True, predict_on="labeled")
    dev = make_dm(augment=True, gather_on_device=True, predict_on="labeled")
    for dm in (host, dev):
        dm.setup()
    for epoch in (0, 1):
        h = _epoch_batches(host.train_dataloader(), epoch)
        loader = dev.train_dataloader()
        loader.sampler.set_epoch(epoch)
        d = [dev.on_after_batch_transfer(b, 0) for b in loader]
        assert isinstance(next(iter(loader)), dict)  # the loader itself yields indices only
        _assert_same(h, d)
    _assert_same(list(host.val_dataloader()), [dev.on_after_batch_transfer(b, 0) for b in dev.val_dataloader()])
    hp = list(host.predict_dataloader())
    dp = [dev.on_after_batch_transfer(b, 0) for b in dev.predict_dataloader()]
    _assert_same(hp, dp)
    assert len(dp[0]) == 3  # coords carried on the device path too


def test_channels_last_false_gives_contiguous_equal_batches(make_dm):
    a, b = make_dm(), make_dm(channels_last=False)
    a.setup("fit")
    b.setup("fit")
    xa, ya = next(iter(a.train_dataloader()))
    xb, yb = next(iter(b.train_dataloader()))
    assert xb.is_contiguous() and xa.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_state_dict_round_trip_reuses_split_and_pipeline(make_dm, small_scene, monkeypatch):
    dm = make_dm(split_seed=0)
    dm.prepare_data()
    dm.setup("fit")
    state = dm.state_dict()
    text = json.dumps(state)  # JSON only
    buf = io.BytesIO()
    torch.save({"datamodule": state}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)["datamodule"]
    assert json.dumps(loaded) == text

    import hsi.preprocess as pre

    def refuse(*a, **k):
        raise AssertionError("refitted / resplit after load_state_dict")

    for name in ("block_split", "random_split", "make_pipeline"):
        monkeypatch.setattr(pre, name, refuse)
    new = make_dm(split_seed=123)  # different seed: must not matter
    new.load_state_dict(loaded)
    new.setup("fit")
    for mask in ("train", "val", "test", "buffer"):
        np.testing.assert_array_equal(getattr(new.split, mask), getattr(dm.split, mask))
    cube = small_scene.cube.data
    np.testing.assert_array_equal(new.pipeline.transform(cube), dm.pipeline.transform(cube))
    assert new.class_names == dm.class_names and new.num_bands == dm.num_bands
    np.testing.assert_array_equal(new.train_dataset.coords, dm.train_dataset.coords)
    a, b = dm.val_dataloader(), new.val_dataloader()
    _assert_same(list(a), list(b))

    # Lightning calls load_state_dict after setup: the datasets are rebuilt from the state
    late = make_dm(split_seed=7, cache_dir=None)
    monkeypatch.undo()
    late.setup("fit")
    assert not np.array_equal(late.split.train, dm.split.train)
    late.load_state_dict(loaded)
    np.testing.assert_array_equal(late.split.train, dm.split.train)
    np.testing.assert_array_equal(late.train_dataset.coords, dm.train_dataset.coords)


def test_in_memory_mode_writes_no_files_and_matches_disk(make_dm, tmp_path):
    mem = make_dm(cache_dir=None, augment=False)
    forced = make_dm(cache="memory", cache_dir=str(tmp_path / "unused"), augment=False)
    for dm in (mem, forced):
        dm.prepare_data()
        dm.setup("fit")
        assert dm.cache_path is None
    assert not (tmp_path / "cache").exists() and not (tmp_path / "unused").exists()
    disk = make_dm(augment=False)
    disk.prepare_data()
    disk.setup("fit")
    assert disk.cache_path.is_dir()
    _assert_same(list(mem.val_dataloader()), list(disk.val_dataloader()))
    _assert_same(list(forced.val_dataloader()), list(disk.val_dataloader()))


def test_constructor_is_cli_friendly(tmp_path):
    """Every argument is typed and YAML-expressible (LightningCLI / jsonargparse)."""
    from jsonargparse import ArgumentParser

    from hsi.data import HSIDataModule

    parser = ArgumentParser()
    parser.add_class_arguments(HSIDataModule, "data")
    cfg = parser.parse_args(["--data.scene_options", '{"height": 48, "width": 48}', "--data.fractions", "[0.5, 0.25, 0.25]",
                             "--data.pca", "0.99", "--data.remove_bands", "[0, 1]", "--data.cache_dir", str(tmp_path)])
    instantiate = getattr(parser, "instantiate", None) or parser.instantiate_classes  # renamed in 4.49
    init = instantiate(cfg).data
    assert isinstance(init, HSIDataModule)
    assert init.hparams.pca == 0.99 and list(init.hparams.fractions) == [0.5, 0.25, 0.25]
    assert init.hparams.scene_options == {"height": 48, "width": 48} and init.hparams.remove_bands == [0, 1]


def test_bad_arguments(make_dm):
    with pytest.raises(ValueError, match="patch_size"):
        make_dm(patch_size=4)
    with pytest.raises(ValueError, match="test_labels_path"):
        make_dm(split="fixed")
    with pytest.raises(ValueError, match="cache"):
        make_dm(cache="disk")
    with pytest.raises(ValueError, match="predict_on"):
        make_dm(predict_on="everything")
    with pytest.raises(ValueError, match="labels_path"):
        make_dm(cube_path="x.mat")



def test_loading_a_state_from_another_scene_fails(make_dm):
    dm = make_dm()
    state = dm.state_dict()
    other = make_dm(scene_options={"height": 48, "width": 48, "bands": 20, "n_classes": 5, "seed": 4, "parcel_size": 12.0})
    other.load_state_dict(state)
    with pytest.raises(ValueError, match="different label map"):
        other.setup("fit")
    with pytest.raises(ValueError, match="format"):
        other.load_state_dict({"split": {}})


def test_a_state_with_other_classes_is_refused_even_when_loaded_before_setup(make_dm):
    state = make_dm().state_dict()
    renamed = {**state, "class_names": [f"other_{n}" for n in state["class_names"]]}
    fresh = make_dm()
    fresh.load_state_dict(renamed)  # before setup, as a resumed run does it
    with pytest.raises(ValueError, match="the checkpoint's classes .* differ from the scene's"):
        fresh.setup("fit")
