"""leakage_report: exact counts, zero for block splits with buffer >= patch_size // 2."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

from hsi.errors import LeakageWarning, ShapeMismatchError
from hsi.preprocess import StratificationWarning, block_split, leakage_report, random_split


def _brute_force(train, test, patch_size):
    r = patch_size // 2
    t_in, p_touch = 0, 0
    tr = np.argwhere(train)
    te = np.argwhere(test)
    for y, x in te:
        t_in += bool((np.abs(tr - (y, x)).max(1) <= r).any()) if len(tr) else 0
    for y, x in tr:
        p_touch += bool((np.abs(te - (y, x)).max(1) <= r).any()) if len(te) else 0
    return t_in, p_touch


def test_matches_brute_force():
    rng = np.random.default_rng(0)
    train = rng.random((30, 27)) < 0.05
    test = (rng.random((30, 27)) < 0.05) & ~train
    for p in (1, 3, 5, 6, 9):
        rep = leakage_report(train, test, p)
        assert (rep["test_pixels_in_train_patches"], rep["train_patches_touching_test"]) == \
            _brute_force(train, test, p)
    assert leakage_report(train, test, 1)["test_pixels_in_train_patches"] == 0


def test_exact_geometry():
    train = np.zeros((20, 20), bool)
    test = np.zeros((20, 20), bool)
    train[10, 10] = True
    test[10, 15] = True  # Chebyshev distance 5
    assert leakage_report(train, test, 9)["test_pixels_in_train_patches"] == 0   # radius 4
    rep = leakage_report(train, test, 11)  # radius 5
    assert rep["test_pixels_in_train_patches"] == 1 and rep["train_patches_touching_test"] == 1
    assert rep["min_chebyshev_distance"] == 5


def test_bad_input():
    m = np.zeros((5, 5), bool)
    with pytest.raises(ShapeMismatchError, match=r"train_mask has shape \(5, 5\).*test_mask has shape \(5, 4\)"):
        leakage_report(m, m[:, :4], 3)
    with pytest.raises(ShapeMismatchError, match="test_mask must be a 2-D"):
        leakage_report(m, m[0], 3)
    with pytest.raises(ValueError, match="patch_size must be a positive int"):
        leakage_report(m, m, 0)


@pytest.mark.parametrize("patch_size", [5, 11])
def test_zero_for_block_split_on_parcels(parcels, patch_size):
    sp = block_split(parcels, block_size=16, buffer=patch_size // 2, seed=0)
    rep = leakage_report(sp.train, sp.val | sp.test, patch_size)
    assert rep["test_pixels_in_train_patches"] == 0 and rep["train_patches_touching_test"] == 0
    assert rep["n_train"] > 0 and rep["min_chebyshev_distance"] > patch_size // 2
    # the buffer is what makes it zero
    leaky = leakage_report(sp.train | sp.buffer, sp.val | sp.test, patch_size)
    assert leaky["test_pixels_in_train_patches"] > 0
    with pytest.warns(LeakageWarning):
        rs = random_split(parcels, seed=0)
    assert leakage_report(rs.train, rs.test, patch_size)["test_pixels_in_train_patches"] > 0


def test_zero_for_block_split_on_synthetic_scene():
    scenes = pytest.importorskip("hsi.scenes")
    make = getattr(scenes, "make_synthetic_scene", None)
    if make is None:  # written concurrently: fall back to the module, else skip
        make = getattr(pytest.importorskip("hsi.scenes.synthetic"), "make_synthetic_scene", None)
    if make is None:
        pytest.skip("hsi.scenes.make_synthetic_scene not available")
    labels = np.asarray(make(seed=0).labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StratificationWarning)
        sp = block_split(labels, block_size=16, buffer=5, seed=0)
    rep = leakage_report(sp.train, sp.val | sp.test, 11)
    assert rep["test_pixels_in_train_patches"] == 0 and rep["train_patches_touching_test"] == 0
    with pytest.warns(LeakageWarning):
        rs = random_split(labels, seed=0)
    assert leakage_report(rs.train, rs.test, 11)["train_patches_touching_test"] > 0


@pytest.mark.shared
@pytest.mark.parametrize("scene", ["indian_pines", "pavia_university", "salinas", "salinas_a"])
@pytest.mark.parametrize("patch_size", [7, 11])
def test_zero_on_real_scenes_positive_for_random(real_labels, scene, patch_size):
    lab = real_labels[scene]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StratificationWarning)
        sp = block_split(lab, block_size=16, buffer=patch_size // 2, seed=0)
    t0 = time.perf_counter()
    rep = leakage_report(sp.train, sp.val | sp.test, patch_size)
    assert time.perf_counter() - t0 < 1.0  # vectorized: milliseconds on 610 x 340
    assert rep["test_pixels_in_train_patches"] == 0, rep
    assert rep["train_patches_touching_test"] == 0, rep
    with pytest.warns(LeakageWarning):
        rs = random_split(lab, seed=0)
    rrep = leakage_report(rs.train, rs.test, patch_size)
    assert rrep["test_pixels_in_train_patches"] > 0.5 * rrep["n_test"]
