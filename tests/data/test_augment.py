from __future__ import annotations

import numpy as np
import torch

from hsi.data.augment import PatchAugment, counter_uniform, dihedral


def test_draws_depend_only_on_seed_epoch_index():
    aug = PatchAugment(scale=0.1, noise=0.02)
    a = aug.sample(seed=7, epoch=2, indices=np.array([5, 9, 1]), n_bands=4)
    b = aug.sample(seed=7, epoch=2, indices=np.array([1, 100, 9, 5, 3]), n_bands=4)
    for key in ("code", "scale", "noise"):
        np.testing.assert_array_equal(a[key][[0, 1, 2]], b[key][[3, 2, 0]])  # batch-composition independent
    c = aug.sample(seed=7, epoch=3, indices=np.arange(200), n_bands=4)
    d = aug.sample(seed=7, epoch=2, indices=np.arange(200), n_bands=4)
    assert (c["code"] != d["code"]).mean() > 0.5  # a new epoch redraws
    assert set(np.unique(d["code"])) == set(range(8))
    assert np.all(np.abs(d["scale"] - 1) <= 0.1) and d["noise"].shape == (200, 4)
    assert abs(float(d["noise"].std()) - 0.02) < 0.005


def test_counter_uniform_is_uniform():
    u = counter_uniform(0, 0, np.arange(20000), 0)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01


def test_dihedral_keeps_band_order_and_matches_torch():
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)
    seen = set()
    for code in range(8):
        y = np.ascontiguousarray(dihedral(x, code))
        yt = dihedral(torch.from_numpy(x), code).numpy()
        np.testing.assert_array_equal(y, yt)
        # spatial permutation only: each band keeps its own values, centre pixel fixed
        for band in range(3):
            assert sorted(y[0, band].ravel()) == sorted(x[0, band].ravel())
        np.testing.assert_array_equal(y[:, :, 2, 2], x[:, :, 2, 2])
        seen.add(y.tobytes())
    assert len(seen) == 8  # the 8 symmetries are distinct
    np.testing.assert_array_equal(dihedral(x, 4), x[..., ::-1])
    np.testing.assert_array_equal(dihedral(x, 1), np.rot90(x, 1, axes=(-2, -1)))


def _reference_uniform(*keys):
    """The counter-based generator as first written (one key at a time, all in numpy)."""
    golden, m1, m2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    with np.errstate(over="ignore"):
        h = np.zeros((), dtype=np.uint64)
        for i, key in enumerate(keys):
            z = h ^ (np.asarray(key).astype(np.int64).astype(np.uint64) + golden * np.uint64(i + 1))
            z = (z ^ (z >> np.uint64(30))) * m1
            z = (z ^ (z >> np.uint64(27))) * m2
            h = z ^ (z >> np.uint64(31))
        return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def test_draws_are_unchanged_from_the_reference_generator():
    """The randomness contract: same (seed, epoch, index) -> the same parameters as before."""
    idx = np.array([0, 3, 17, 10**6, 2**40])
    for seed, epoch in ((0, 0), (7, 3), (-5, 2**33)):
        for aug in (PatchAugment(scale=0.3, noise=0.1), PatchAugment(flip=False), PatchAugment(rotate=False, noise=0.2)):
            got = aug.sample(seed, epoch, idx, 6)
            f = (_reference_uniform(seed, epoch, idx, 0) < 0.5).astype(np.int64) if aug.flip else 0
            k = np.floor(_reference_uniform(seed, epoch, idx, 1) * 4).astype(np.int64) if aug.rotate else 0
            np.testing.assert_array_equal(got["code"], k + 4 * f)
            if aug.scale:
                u = _reference_uniform(seed, epoch, idx, 2)
                np.testing.assert_array_equal(got["scale"], (1.0 + aug.scale * (2.0 * u - 1.0)).astype(np.float32))
            assert ("scale" in got) == bool(aug.scale) and ("noise" in got) == bool(aug.noise)
            if aug.noise:
                bands = np.arange(6)[None, :]
                u1 = _reference_uniform(seed, epoch, idx[:, None], 3, bands)
                u2 = _reference_uniform(seed, epoch, idx[:, None], 4, bands)
                normal = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
                np.testing.assert_array_equal(got["noise"], (aug.noise * normal).astype(np.float32))
        np.testing.assert_array_equal(counter_uniform(seed, epoch, idx[:, None], 3, np.arange(4)[None]),
                                      _reference_uniform(seed, epoch, idx[:, None], 3, np.arange(4)[None]))


def test_dataset_window_draws_cached_per_epoch_equal_fresh_draws():
    from hsi.data import HSIPatchDataset, pad_cube

    rng = np.random.default_rng(0)
    cube = pad_cube(rng.random((9, 9, 3), dtype=np.float32), 3)
    coords = np.array([[y, x] for y in range(9) for x in range(9)])
    aug = PatchAugment(scale=0.2, noise=0.05)
    ds = HSIPatchDataset(coords, np.zeros(len(coords), int), 3, cube=cube, augment=aug, seed=5)
    order = rng.permutation(len(coords))[:20]
    for epoch in (0, 1, 0):  # back to an earlier epoch: redrawn, not stale
        ds.set_epoch(epoch)
        got = ds._augment_params(order)
        want = aug.sample(5, epoch, order, 3)
        assert got.keys() == want.keys()
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])
    ds.augment = PatchAugment(flip=False)  # a new augmentation is taken into account
    np.testing.assert_array_equal(ds._augment_params(order)["code"], PatchAugment(flip=False).sample(5, 0, order, 3)["code"])
