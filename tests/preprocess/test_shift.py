"""The scene-shift check: honest pairs pass quietly, rescaled or offset copies warn with a record."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from hsi.errors import BandMismatchError, NoDataError, SceneShiftWarning, StateFormatError
from hsi.preprocess import block_split
from hsi.preprocess.scaling import PerBandMinMax
from hsi.preprocess.shift import (
    SHIFT_THRESHOLD,
    BandStats,
    band_stats,
    check_shift,
    shift_factor,
    shift_message,
)
from hsi.scenes import make_synthetic_scene


def _scene(seed: int = 0, **kwargs):
    return make_synthetic_scene(height=96, width=96, bands=40, seed=seed, **kwargs)


@pytest.fixture(scope="module")
def halves() -> tuple[np.ndarray, np.ndarray]:
    """Train and test pixels of one synthetic scene's block split, min-max fitted on the train pixels."""
    scene = _scene()
    split = block_split(scene.labels, block_size=16, fractions=(0.6, 0.2, 0.2), buffer=3, seed=0)
    scaled = PerBandMinMax().fit(scene.cube.data, sample_mask=split.train).transform(scene.cube.data)
    return scaled[split.train], scaled[split.test]


def _quiet_check(train: BandStats, scene: BandStats) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("error", SceneShiftWarning)
        return check_shift(train, scene, "B", ["A"])


def test_scene_against_itself_is_not_flagged(halves):
    train, test = halves
    record = _quiet_check(band_stats(train), band_stats(test))
    assert record["shifted"] is False
    assert record["factor"] < 1.5  # measured 1.04-1.25 on 145 x 145 x 200 scenes


@pytest.mark.parametrize("other", [{"seed": 1}, {"seed": 2, "background_fraction": 0.5}, {"seed": 3, "n_classes": 6}])
def test_same_sensor_scenes_with_other_class_proportions_are_not_flagged(other):
    a, b = _scene(), _scene(**other)
    a_pixels = a.cube.data[a.labels > 0]
    assert not np.allclose(np.bincount(a.labels.ravel())[1:6] / (a.labels > 0).sum(),
                           np.bincount(b.labels.ravel())[1:6] / (b.labels > 0).sum(), atol=0.01)
    scaler = PerBandMinMax().fit(a_pixels)
    record = _quiet_check(band_stats(scaler.transform(a_pixels)), band_stats(scaler.transform(b.cube.data)))
    assert record["factor"] < 2.0


@pytest.mark.parametrize("multiplier", [10.0, 0.1])
def test_a_rescaled_copy_warns_and_is_recorded(halves, multiplier):
    train, _ = halves
    stats = band_stats(train)
    with pytest.warns(SceneShiftWarning) as caught:
        record = check_shift(stats, band_stats(train * multiplier), "scaled copy", ["train half"])
    assert record["scale"] == pytest.approx(10.0, rel=1e-6)
    assert record["factor"] >= 10.0 - 1e-6
    assert record == {**record, "shifted": True, "threshold": SHIFT_THRESHOLD, "scene": "scaled copy",
                      "against": ["train half"]}
    assert set(record) == {"factor", "location", "scale", "shifted", "threshold", "scene", "against"}
    json.dumps(record)  # what metrics.json / inference.json hold
    assert len(caught) == 1 and "'scaled copy'" in str(caught[0].message)


def test_a_copy_offset_by_three_training_spreads_warns(halves):
    train, test = halves
    stats = band_stats(train)
    shifted = test + 3.0 * (stats.p95 - stats.p5)
    with pytest.warns(SceneShiftWarning):
        record = check_shift(stats, band_stats(shifted), "offset", ["A"])
    assert record["location"] == pytest.approx(3.0, abs=0.1)
    assert record["scale"] < 1.5  # only the location moved
    assert record["shifted"]


def test_two_spreads_is_the_location_limit(halves):
    train, _ = halves
    stats = band_stats(train)
    spread = stats.p95 - stats.p5
    near = shift_factor(stats, band_stats(train + 1.9 * spread))
    far = shift_factor(stats, band_stats(train + 2.1 * spread))
    assert (near["shifted"], far["shifted"]) == (False, True)
    assert far["factor"] == pytest.approx(1 + 2 * 2.1)


def test_factor_is_unchanged_by_a_per_band_affine_preprocessing(halves):
    train, test = halves
    a, b = np.linspace(0.5, 40.0, train.shape[1]), np.linspace(-3.0, 7.0, train.shape[1])
    raw = shift_factor(band_stats(train), band_stats(test))
    mapped = shift_factor(band_stats(train * a + b), band_stats(test * a + b))
    assert mapped["factor"] == pytest.approx(raw["factor"], rel=1e-9)
    assert mapped["location"] == pytest.approx(raw["location"], rel=1e-9, abs=1e-12)


def test_raw_integers_against_reflectance_of_a_real_scene_is_flagged(shared_data):
    from hsi.io import read_cube

    hdr = shared_data / "envi" / "jasper_ridge" / "jasperRidge2_R198.hdr"
    reflectance, raw = read_cube(hdr).data, read_cube(hdr, scale=False).data
    top, bottom = reflectance[:50], reflectance[50:]
    assert not _quiet_check(band_stats(top), band_stats(bottom))["shifted"]
    with pytest.warns(SceneShiftWarning, match="'jasper raw'"):
        record = check_shift(band_stats(top), band_stats(raw[50:]), "jasper raw", ["jasper"])
    assert record["factor"] > 1000


def test_subsampling_is_seeded_and_counts_every_finite_pixel():
    x = np.random.default_rng(5).lognormal(size=(5000, 3))
    x[::10] = np.nan  # 500 pixels with no finite value
    x[1::10, 1] = np.inf  # and 500 with one bad band
    a, b = band_stats(x, max_pixels=1000, seed=3), band_stats(x, max_pixels=1000, seed=3)
    assert a == b and a.pixels == 4000
    assert band_stats(x, max_pixels=1000, seed=4) != a  # another sample
    full = band_stats(x, max_pixels=10_000)
    finite = x[np.isfinite(x).all(axis=1)]
    np.testing.assert_array_equal(full.median, np.median(finite, axis=0))
    np.testing.assert_array_equal(full.p5, np.percentile(finite, 5, axis=0))
    np.testing.assert_allclose(a.median, full.median, rtol=0.1)  # a sample, close to the whole


def test_cube_and_pooled_scenes():
    rng = np.random.default_rng(0)
    cube = rng.normal(size=(20, 30, 4))
    assert band_stats(cube) == band_stats(cube.reshape(-1, 4))
    zeros, ones = np.zeros((1000, 2)), np.ones((3000, 2))
    assert band_stats([zeros, ones]) == band_stats(np.concatenate([zeros, ones]))
    parts = [rng.normal(size=(700, 3)), rng.normal(5.0, size=(20, 10, 3)), rng.normal(size=(900, 3))]
    parts[1][3, :5] = np.nan
    whole = np.concatenate([p.reshape(-1, 3) for p in parts])
    assert band_stats(parts, max_pixels=500, seed=2) == band_stats(whole, max_pixels=500, seed=2)
    pooled = band_stats([zeros, ones], max_pixels=400, seed=1)  # sampled in proportion: about 1/4 zeros
    assert pooled.pixels == 4000
    np.testing.assert_array_equal(pooled.p5, [0.0, 0.0])
    np.testing.assert_array_equal(pooled.median, [1.0, 1.0])


def test_json_round_trip_and_bad_states():
    stats = band_stats(np.random.default_rng(1).normal(size=(300, 5)))
    back = BandStats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert back == stats and back.median.dtype == np.float64
    with pytest.raises(StateFormatError, match="version"):
        BandStats.from_dict({"median": [1.0]})
    with pytest.raises(StateFormatError, match="p95"):
        BandStats.from_dict({"version": 1, "median": [1.0], "p5": [0.0], "pixels": 3})


def test_mismatched_bands_and_empty_scenes_raise():
    with pytest.raises(BandMismatchError, match="resampling"):
        shift_factor(band_stats(np.ones((10, 3))), band_stats(np.ones((10, 4))))
    with pytest.raises(NoDataError):
        band_stats(np.full((10, 3), np.nan))


def test_message_is_one_line_naming_both_sides_and_the_factor():
    result = {"location": 4.1, "scale": 10.3, "factor": 10.3, "shifted": True}
    message = shift_message("B\nnight", ["A", "C"], result)
    assert "\n" not in message
    assert "'B\\nnight'" in message and "'A', 'C'" in message
    assert "10.3" in message and "4.1" in message and f"threshold {SHIFT_THRESHOLD:g}" in message


def test_crops_of_one_real_flight_are_not_flagged(shared_data):
    from scipy.io import loadmat

    folder = shared_data / "muufl_gulfport"
    crops = [loadmat(folder / "an_hsi_image_sub_for_demo.mat")["hsi_img_sub"],
             loadmat(folder / "an_hsi_img_for_tgt_det_demo.mat")["hsi_sub"]]  # 51 x 88 and 36 x 36, 72 bands
    record = _quiet_check(band_stats(crops[0]), band_stats(crops[1]))
    assert 3.0 < record["factor"] < SHIFT_THRESHOLD  # the narrowest honest pair measured (3.74)
