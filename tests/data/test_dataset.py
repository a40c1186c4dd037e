from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, default_collate

from hsi.data import HSIIndexDataset, HSIPatchDataset, PatchAugment, collate_patches, gather_index_batch, pad_cube


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    cube = rng.random((15, 13, 6), dtype=np.float32)
    coords = np.array([[y, x] for y in range(15) for x in range(13)])[::3]
    labels = rng.integers(-1, 4, size=len(coords))
    return cube, coords, labels


def test_item_and_batch_contract(data):
    cube, coords, labels = data
    ds = HSIPatchDataset.from_cube(cube, coords, labels, 5)
    patch, label = ds[3]
    assert patch.shape == (6, 5, 5) and patch.dtype == torch.float32
    assert label.shape == () and label.dtype == torch.int64 and int(label) == labels[3]
    padded = np.pad(cube, ((2, 2), (2, 2), (0, 0)), mode="reflect")
    y, x = coords[3]
    np.testing.assert_array_equal(patch.numpy(), padded[y : y + 5, x : x + 5].transpose(2, 0, 1))
    batch = ds.__getitems__([3, 0, 7])
    assert len(batch) == 3 and batch.patches.shape == (3, 6, 5, 5)
    torch.testing.assert_close(batch[0][0], patch, rtol=0, atol=0)
    # default_collate and collate_patches both handle the batch the dataset returns
    for x_, y_ in (default_collate(batch), collate_patches(batch)):
        assert x_.shape == (3, 6, 5, 5) and y_.tolist() == labels[[3, 0, 7]].tolist()
        torch.testing.assert_close(x_, batch.patches, rtol=0, atol=0)
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_dataloader_uses_getitems_and_matches_per_item(data):
    cube, coords, labels = data
    ds = HSIPatchDataset.from_cube(cube, coords, labels, 5)
    xs, ys = zip(*DataLoader(ds, batch_size=8, collate_fn=collate_patches))
    x, y = torch.cat(xs), torch.cat(ys)
    ref = torch.stack([ds[i][0] for i in range(len(ds))])
    torch.testing.assert_close(x, ref, rtol=0, atol=0)
    assert y.tolist() == labels.tolist()


def test_patches_source_equals_cube_source(data):
    cube, coords, labels = data
    a = HSIPatchDataset.from_cube(cube, coords, labels, 5, augment=PatchAugment(scale=0.1), seed=4)
    pats = a.__getitems__(range(len(a))).patches.numpy()  # with augmentation
    plain = HSIPatchDataset.from_cube(cube, coords, labels, 5).__getitems__(range(len(a))).patches.numpy()
    b = HSIPatchDataset(coords, labels, 5, patches=plain, augment=PatchAugment(scale=0.1), seed=4)
    for epoch in (0, 1):
        a.set_epoch(epoch)
        b.set_epoch(epoch)
        torch.testing.assert_close(a.__getitems__([5, 1, 2]).patches, b.__getitems__([5, 1, 2]).patches, rtol=0, atol=0)
    assert not np.array_equal(pats, plain)


def test_pickles_without_open_memmaps(tmp_path, data):
    cube, coords, labels = data
    np.save(tmp_path / "cube.npy", pad_cube(cube, 5))
    ds = HSIPatchDataset(coords, labels, 5, cube=str(tmp_path / "cube.npy"))
    first = ds[0][0]
    assert ds._opened  # opened lazily on first access
    state = ds.__getstate__()
    assert state["_opened"] == {}
    clone = pickle.loads(pickle.dumps(ds))
    torch.testing.assert_close(clone[0][0], first, rtol=0, atol=0)


def test_index_dataset_on_device_equals_host_path(data):
    cube, coords, labels = data
    aug = PatchAugment(scale=0.2, noise=0.05)
    host = HSIPatchDataset.from_cube(cube, coords, labels, 5, augment=aug, seed=9)
    idx = HSIIndexDataset(coords, labels, 5, cube=pad_cube(cube, 5), augment=aug, seed=9)
    dev_cube = torch.from_numpy(pad_cube(cube, 5))
    for epoch in (0, 3):
        host.set_epoch(epoch)
        idx.set_epoch(epoch)
        order = [7, 2, 11, 0, 5, 1]
        x, y = gather_index_batch(idx.__getitems__(order), dev_cube, 5)
        ref = host.__getitems__(order)
        torch.testing.assert_close(x, ref.patches, rtol=0, atol=0)
        assert torch.equal(y, ref.labels)


def test_constructor_errors(data):
    cube, coords, labels = data
    with pytest.raises(ValueError, match="exactly one"):
        HSIPatchDataset(coords, labels, 5)
    with pytest.raises(ValueError, match="labels"):
        HSIPatchDataset(coords, labels[:-1], 5, cube=pad_cube(cube, 5))
    with pytest.raises(ValueError, match="outside"):
        HSIPatchDataset(coords + 100, labels, 5, cube=pad_cube(cube, 5))
