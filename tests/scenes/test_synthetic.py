"""The procedural scene: deterministic, well-formed, and as hard as designed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from hsi.scenes import load_scene, make_synthetic_scene
from hsi.scenes.synthetic import NEAR_IDENTICAL_PAIRS


def _class_means(scene):
    x, lab = scene.cube.data, scene.labels
    return np.stack([x[lab == k].mean(axis=0) for k in range(1, scene.num_classes + 1)]).astype(np.float64)


def test_same_seed_same_arrays_different_seed_differs(synthetic_default):
    again = make_synthetic_scene(seed=0)
    np.testing.assert_array_equal(again.cube.data, synthetic_default.cube.data)
    np.testing.assert_array_equal(again.labels, synthetic_default.labels)
    other = make_synthetic_scene(seed=1)
    assert not np.array_equal(other.labels, synthetic_default.labels)
    assert np.abs(other.cube.data - synthetic_default.cube.data).mean() > 1e-3


def test_shapes_dtypes_contiguity(synthetic_default):
    s = synthetic_default
    assert s.name == "synthetic"
    assert s.cube.data.shape == (145, 145, 200)
    assert s.cube.data.dtype == np.float32 and s.cube.data.flags.c_contiguous
    assert np.isfinite(s.cube.data).all()
    assert s.labels.shape == (145, 145) and s.labels.dtype == np.int64
    wl = s.cube.wavelengths
    assert wl.shape == (200,) and np.all(np.diff(wl) > 0)
    assert wl[0] == pytest.approx(400.0) and wl[-1] == pytest.approx(2500.0)
    assert s.palette.shape == (17, 3) and s.palette.dtype == np.uint8
    assert tuple(s.palette[0]) == (0, 0, 0)


def test_sixteen_indian_pines_classes_all_present_with_background(synthetic_default):
    s = synthetic_default
    assert s.num_classes == 16
    assert s.class_names[1] == "S-row-A-notill" and s.class_names[10] == "S-row-B-mintill"
    counts = np.bincount(s.labels.ravel(), minlength=17)
    assert counts.size == 17 and (counts[1:] > 0).all()
    assert 0.05 < counts[0] / s.labels.size < 0.6  # unlabeled background and roads
    assert s.meta["roads"].any() and (s.labels[s.meta["roads"]] == 0).all()
    assert s.meta["label_values"] == list(range(1, 17))


def test_values_are_reflectance_like_with_water_absorption_dips(synthetic_default):
    x, wl = synthetic_default.cube.data, synthetic_default.cube.wavelengths
    mean = x.reshape(-1, x.shape[-1]).mean(axis=0)
    assert 0.0 < mean.max() < 1.0
    dip = mean[np.argmin(np.abs(wl - 1395))]
    shoulder = mean[np.argmin(np.abs(wl - 1250))]
    assert dip < 0.3 * shoulder


@pytest.mark.parametrize("seed", [0, 1])
def test_documented_pairs_are_near_identical_others_differ(seed, synthetic_default):
    s = synthetic_default if seed == 0 else make_synthetic_scene(seed=seed)
    means = _class_means(s)
    shapes = means / np.linalg.norm(means, axis=1, keepdims=True)  # brightness-free spectral shape
    assert s.meta["near_identical_pairs"] == [(2, 3), (10, 11)] == list(NEAR_IDENTICAL_PAIRS)
    for a, b in NEAR_IDENTICAL_PAIRS:  # S-row-A-notill/-mintill, S-row-B-notill/-mintill
        assert np.corrcoef(means[a - 1], means[b - 1])[0, 1] > 0.998
        assert np.linalg.norm(shapes[a - 1] - shapes[b - 1]) < 0.02
    near = {frozenset(p) for p in NEAR_IDENTICAL_PAIRS}
    others = np.array([
        np.linalg.norm(shapes[i] - shapes[j])
        for i in range(16)
        for j in range(i + 1, 16)
        if frozenset((i + 1, j + 1)) not in near
    ])
    assert np.median(others) > 0.08
    assert (others > 0.03).mean() > 0.8
    assert np.linalg.norm(shapes[1] - shapes[13]) > 0.1  # S-row-A-notill vs S-woods: clearly different


def _lag_correlation(residual, labels, parcels, lag):
    a, b = residual[:, :-lag], residual[:, lag:]
    same = (labels[:, :-lag] > 0) & (parcels[:, :-lag] == parcels[:, lag:])
    va, vb = a[same], b[same]
    va, vb = va - va.mean(0), vb - vb.mean(0)
    return float((va * vb).sum() / np.sqrt((va**2).sum() * (vb**2).sum()))


def _residual(scene):
    res = scene.cube.data.astype(np.float64).copy()
    means = _class_means(scene)
    for k in range(1, scene.num_classes + 1):
        res[scene.labels == k] -= means[k - 1]
    return res


def test_within_parcel_variability_is_spatially_correlated(synthetic_default):
    s = synthetic_default
    res, lab, par = _residual(s), s.labels, s.meta["parcels"]
    near = _lag_correlation(res, lab, par, 1)
    far = _lag_correlation(res, lab, par, 4)
    rng = np.random.default_rng(0)
    shuffled = res.reshape(-1, res.shape[-1])[rng.permutation(res.shape[0] * res.shape[1])].reshape(res.shape)
    baseline = _lag_correlation(shuffled, lab, par, 4)
    assert near > 0.2  # point-spread function + smooth texture
    assert far > 0.02 and far > baseline + 0.015
    # The smooth part alone (no white jitter, no sensor noise, no PSF) is strongly correlated.
    smooth = make_synthetic_scene(pixel_variability=0.0, noise=0.0, mixing=0.0)
    assert _lag_correlation(_residual(smooth), smooth.labels, smooth.meta["parcels"], 4) > 0.2


def test_size_bands_classes_parameters_are_honoured():
    s = make_synthetic_scene(height=48, width=64, bands=30, n_classes=5, seed=3)
    assert s.cube.data.shape == (48, 64, 30)
    assert s.num_classes == 5 and len(s.class_names) == 5
    assert set(np.unique(s.labels)) == set(range(6))
    big = make_synthetic_scene(n_classes=20, seed=2, bands=20)
    assert big.class_names[16:] == ["S-class-17", "S-class-18", "S-class-19", "S-class-20"]
    assert (np.bincount(big.labels.ravel(), minlength=21)[1:] > 0).all()
    assert big.palette.shape == (21, 3)


def test_too_small_for_the_classes_raises_value_error():
    with pytest.raises(ValueError, match="n_classes=16"):
        make_synthetic_scene(height=8, width=8, n_classes=16)


def test_load_scene_forwards_generator_options():
    s = load_scene("synthetic", height=32, width=40, bands=12, n_classes=4, seed=5)
    direct = make_synthetic_scene(height=32, width=40, bands=12, n_classes=4, seed=5)
    assert s.cube.data.shape == (32, 40, 12)
    np.testing.assert_array_equal(s.cube.data, direct.cube.data)


def test_default_scene_is_fast():
    make_synthetic_scene(height=32, width=32, bands=10, n_classes=4)  # warm imports
    t0 = time.perf_counter()
    make_synthetic_scene()
    assert time.perf_counter() - t0 < 2.0


def test_class_names_are_synthetic_not_indian_pines():
    from hsi.scenes.benchmark import SCENES

    s = make_synthetic_scene(height=48, width=48, bands=8, n_classes=18, seed=0, parcel_size=8.0)
    indian_pines = next(b for b in SCENES if b.name == "indian_pines").class_names
    assert all(name.startswith("S-") and len(name) <= 16 for name in s.class_names)
    assert not {n.lower() for n in s.class_names} & {n.lower() for n in indian_pines}
    assert len(set(s.class_names)) == 18


def test_numbers_are_those_of_the_generator_before_the_renaming():
    # recorded from the generator as it was with Indian Pines' names (and class-17, class-18)
    s = make_synthetic_scene(height=40, width=40, bands=8, n_classes=18, seed=4, parcel_size=6.0)
    assert np.bincount(s.labels.ravel()).tolist() == [412, 45, 115, 49, 105, 70, 71, 30, 50, 7, 9, 75, 78, 22,
                                                      213, 84, 67, 45, 53]
    assert float(s.cube.data.sum(dtype=np.float64)) == pytest.approx(2112.668, rel=1e-5)
