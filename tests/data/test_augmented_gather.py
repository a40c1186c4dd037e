"""Symmetries folded into the gather: equal to transforming the plain window, on every path."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from hsi.data import (
    EpochShuffleSampler,
    HSIDataLoader,
    HSIIndexDataset,
    HSIPatchDataset,
    PatchAugment,
    collate_patches,
    gather_index_batch,
    gather_windows,
    pad_cube,
)
from hsi.data.augment import dihedral, symmetry_offsets
from hsi.data.patches import gather_pixels, gather_rows

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _plain_windows(padded: np.ndarray, rows: np.ndarray, cols: np.ndarray, p: int) -> np.ndarray:
    """(N, P, P, C) windows sliced one by one: the reference."""
    return np.stack([padded[r : r + p, c : c + p] for r, c in zip(rows, cols)])


def _expected(padded, rows, cols, codes, p):
    plain = _plain_windows(padded, rows, cols, p)
    return np.stack([np.ascontiguousarray(dihedral(w, int(k), axes=(0, 1))) for w, k in zip(plain, codes)])


@pytest.fixture(params=[(1, 7, 5), (3, 9, 13), (5, 12, 7)], ids=["P1", "P3", "P5"])
def case(request):
    p, h, w = request.param
    rng = np.random.default_rng(p)
    padded = pad_cube(rng.random((h, w, 4), dtype=np.float32), p, "symmetric")
    n = 64
    rows, cols = rng.integers(0, h, n), rng.integers(0, w, n)
    codes = np.arange(n) % 8  # every code, several times
    rng.shuffle(codes)
    return padded, rows, cols, codes, p


def test_symmetry_offsets_are_the_dihedral_of_a_position_grid():
    p = 5
    window = np.arange(p * p).reshape(p, p)
    offsets = symmetry_offsets(p)
    assert offsets.shape == (8, p, p, 2) and not offsets.flags.writeable
    for code in range(8):
        moved = window[offsets[code, ..., 0], offsets[code, ..., 1]]
        np.testing.assert_array_equal(moved, dihedral(window, code))
    assert len({offsets[c].tobytes() for c in range(8)}) == 8


def test_numpy_gather_equals_symmetry_of_plain_window_for_all_codes(case, tmp_path):
    padded, rows, cols, codes, p = case
    want = _expected(padded, rows, cols, codes, p)
    np.save(tmp_path / "cube.npy", padded)
    mapped = np.load(tmp_path / "cube.npy", mmap_mode="r")  # read-only memory map
    for cube in (padded, mapped):
        got = gather_rows(cube, rows, cols, p, codes)
        assert got.flags.c_contiguous and got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
    # bands not contiguous (a strided view), or a byte order torch cannot view: same values
    wide = np.repeat(padded, 2, axis=2)[:, :, ::2]
    np.testing.assert_array_equal(gather_rows(wide, rows, cols, p, codes), want)
    np.testing.assert_array_equal(gather_rows(padded.astype(">f4"), rows, cols, p, codes), want)
    # the (N, C, P, P) front end, both memory formats
    coords = np.stack([rows, cols], axis=1)
    for channels_last in (True, False):
        out = gather_windows(padded, coords, p, channels_last=channels_last, codes=codes)
        np.testing.assert_array_equal(out, want.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("device", DEVICES)
def test_torch_gather_equals_symmetry_of_plain_window_for_all_codes(case, device):
    padded, rows, cols, codes, p = case
    want = torch.from_numpy(_expected(padded, rows, cols, codes, p))
    cube = torch.from_numpy(padded).to(device)
    coords = torch.from_numpy(np.stack([rows, cols], axis=1)).to(device)
    codes_t = torch.from_numpy(codes).to(device)
    out = gather_windows(cube, coords, p, codes=codes_t)
    assert out.device.type == device and out.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(out.cpu(), want.permute(0, 3, 1, 2), rtol=0, atol=0)
    flat = gather_pixels(cube, coords[:, 0], coords[:, 1], p, codes_t)
    torch.testing.assert_close(flat.cpu(), want, rtol=0, atol=0)
    strided = torch.from_numpy(np.repeat(padded, 2, axis=2)).to(device)[:, :, ::2]  # not contiguous
    torch.testing.assert_close(gather_pixels(strided, coords[:, 0], coords[:, 1], p, codes_t).cpu(), want, rtol=0, atol=0)


# --------------------------------------------------------------------------- datasets
def _old_two_step(padded, coords, idx, p, aug, seed, epoch):
    """The pre-fold result: plain windows, then each sample's symmetry, then scale and noise."""
    params = aug.sample(seed, epoch, idx, padded.shape[2])
    plain = _plain_windows(padded, coords[idx, 0], coords[idx, 1], p).transpose(0, 3, 1, 2)  # (B, C, P, P)
    x = torch.from_numpy(np.stack([np.ascontiguousarray(dihedral(w, int(k))) for w, k in zip(plain, params["code"])]))
    if "scale" in params:
        x.mul_(torch.from_numpy(params["scale"]).view(-1, 1, 1, 1))
    if "noise" in params:
        x.add_(torch.from_numpy(params["noise"]).view(len(idx), -1, 1, 1))
    return x


@pytest.fixture
def scene():
    rng = np.random.default_rng(11)
    cube = rng.random((14, 17, 5), dtype=np.float32)
    coords = np.array([[y, x] for y in range(14) for x in range(17)])[::2]
    labels = rng.integers(0, 3, len(coords))
    return cube, coords, labels


@pytest.mark.parametrize("aug", [PatchAugment(), PatchAugment(scale=0.2, noise=0.05), PatchAugment(rotate=False, scale=0.1)])
def test_host_and_device_batches_equal_the_old_two_step_result(scene, aug):
    cube, coords, labels = scene
    p, seed = 5, 3
    padded = pad_cube(cube, p)
    nppc = _plain_windows(padded, coords[:, 0], coords[:, 1], p)  # what cache="patches" stores
    sources = {
        "cube": HSIPatchDataset(coords, labels, p, cube=padded, augment=aug, seed=seed),
        "nppc": HSIPatchDataset(coords, labels, p, patches=nppc, patches_layout="NPPC", augment=aug, seed=seed),
        "ncpp": HSIPatchDataset(coords, labels, p, patches=nppc.transpose(0, 3, 1, 2), augment=aug, seed=seed),
        "contiguous": HSIPatchDataset(coords, labels, p, cube=padded, augment=aug, seed=seed, channels_last=False),
    }
    index_ds = HSIIndexDataset(coords, labels, p, cube=padded, augment=aug, seed=seed)
    order = np.random.default_rng(0).permutation(len(coords))[:40]
    for epoch in (0, 5):
        want = _old_two_step(padded, coords, order, p, aug, seed, epoch)
        for name, ds in sources.items():
            ds.set_epoch(epoch)
            got = ds.__getitems__(order).patches
            assert got.is_contiguous() == (name == "contiguous")
            torch.testing.assert_close(got, want, rtol=0, atol=0, msg=name)
        index_ds.set_epoch(epoch)
        for device in DEVICES:
            for channels_last in (True, False):
                x, y = gather_index_batch(index_ds.__getitems__(order), torch.from_numpy(padded).to(device), p, channels_last)
                assert x.is_contiguous() != channels_last
                torch.testing.assert_close(x.cpu(), want, rtol=0, atol=0)
                assert y.cpu().tolist() == labels[order].tolist()


def _epochs(loader, n, cube=None, p=None):
    """Every batch of ``n`` epochs as a list of tensors (index batches cut on ``cube``)."""
    batches = []
    for epoch in range(n):
        loader.set_epoch(epoch)
        for batch in loader:
            if isinstance(batch, dict):
                batch = gather_index_batch(batch, cube, p)
            batches.append([t.clone() for t in batch])
    return batches


@pytest.mark.parametrize("gather_on_device", [False, True], ids=["host", "device"])
def test_batches_identical_for_0_and_2_workers(scene, gather_on_device):
    cube, coords, labels = scene
    p, aug = 5, PatchAugment(scale=0.1, noise=0.02)
    padded = pad_cube(cube, p)
    cls = HSIIndexDataset if gather_on_device else HSIPatchDataset
    runs = []
    for workers in (0, 2):
        ds = cls(coords, labels, p, cube=padded, augment=aug, seed=1)
        loader = HSIDataLoader(ds, batch_size=16, sampler=EpochShuffleSampler(ds, seed=2), num_workers=workers,
                               collate_fn=collate_patches)
        runs.append(_epochs(loader, 2, torch.from_numpy(padded), p))
    assert len(runs[0]) == len(runs[1]) == 2 * -(-len(coords) // 16)
    for a, b in zip(*runs):  # epoch 1 too: the epoch reaches the workers
        assert len(a) == len(b) == 2
        for ta, tb in zip(a, b):
            assert torch.equal(ta, tb)


def test_host_loader_equals_device_loader(scene):
    cube, coords, labels = scene
    p, aug = 5, PatchAugment(scale=0.1, noise=0.02)
    padded = pad_cube(cube, p)
    host = HSIPatchDataset(coords, labels, p, cube=padded, augment=aug, seed=4)
    dev = HSIIndexDataset(coords, labels, p, cube=padded, augment=aug, seed=4)
    kwargs = dict(batch_size=16, collate_fn=collate_patches)
    hl = HSIDataLoader(host, sampler=EpochShuffleSampler(host, seed=0), **kwargs)
    dl = HSIDataLoader(dev, sampler=EpochShuffleSampler(dev, seed=0), **kwargs)
    cube_t = torch.from_numpy(padded)
    for epoch in (0, 1):
        hl.set_epoch(epoch)
        dl.set_epoch(epoch)
        for (xh, yh), b in zip(hl, dl):
            xd, yd = gather_index_batch(b, cube_t, p)
            assert torch.equal(xh, xd) and torch.equal(yh, yd)


def test_plain_loader_has_no_symmetry(scene):
    """Without augmentation (val/test), windows are exactly the plain windows."""
    cube, coords, labels = scene
    padded = pad_cube(cube, 5)
    ds = HSIPatchDataset(coords, labels, 5, cube=padded)
    x = torch.cat([b[0] for b in DataLoader(ds, batch_size=32, collate_fn=collate_patches)])
    want = _plain_windows(padded, coords[:, 0], coords[:, 1], 5).transpose(0, 3, 1, 2)
    torch.testing.assert_close(x, torch.from_numpy(np.ascontiguousarray(want)), rtol=0, atol=0)
