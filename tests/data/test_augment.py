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
