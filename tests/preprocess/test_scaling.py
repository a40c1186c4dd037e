"""Per-band min-max and standardization: train-only statistics, streaming, edge cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hsi.errors import BandMismatchError, NotFittedError, ShapeMismatchError, SplitError
from hsi.preprocess import NonFiniteWarning, PerBandMinMax, PerBandStandardize
from hsi.preprocess.scaling import per_band_affine

SCALERS = [PerBandMinMax, PerBandStandardize]


def _perturb_outside(cube: np.ndarray, mask: np.ndarray) -> np.ndarray:
    other = cube.copy()
    rng = np.random.default_rng(99)
    other[~mask] = rng.normal(size=other[~mask].shape) * 1e4 - 5e3
    return other


@pytest.mark.parametrize("cls", SCALERS)
def test_fitted_state_ignores_non_training_pixels(cls, cube_and_mask):
    cube, mask = cube_and_mask
    a = cls().fit(cube, sample_mask=mask).fitted_state()
    b = cls().fit(_perturb_outside(cube, mask), sample_mask=mask).fitted_state()
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    # ...while a change to a training pixel does change it.
    changed = cube.copy()
    changed[mask.nonzero()[0][0], mask.nonzero()[1][0], 0] += 1e3
    c = cls().fit(changed, sample_mask=mask).fitted_state()
    assert not all(np.array_equal(a[n], c[n]) for n in a)


def test_minmax_matches_numpy_on_training_pixels(cube_and_mask):
    cube, mask = cube_and_mask
    px = cube[mask].astype(np.float64)
    s = PerBandMinMax(feature_range=(-1.0, 2.0)).fit(cube, sample_mask=mask)
    np.testing.assert_array_equal(s.data_min_, px.min(0))
    np.testing.assert_array_equal(s.data_max_, px.max(0))
    assert s.n_samples_seen_ == mask.sum() and s.n_bands_in_ == s.n_bands_out_ == 12
    out = s.transform(cube)
    assert out.dtype == np.float32 and out.shape == cube.shape
    np.testing.assert_allclose(out[mask].min(0), -1.0, atol=1e-6)
    np.testing.assert_allclose(out[mask].max(0), 2.0, atol=1e-6)
    np.testing.assert_allclose(s.inverse_transform(out), cube, rtol=1e-5, atol=1e-3)


def test_minmax_clip(cube_and_mask):
    cube, mask = cube_and_mask
    out = PerBandMinMax(clip=True).fit(cube, sample_mask=mask).transform(cube)
    assert out.min() >= 0.0 and out.max() <= 1.0
    unclipped = PerBandMinMax().fit(cube, sample_mask=mask).transform(cube)
    assert unclipped.min() < 0.0 or unclipped.max() > 1.0  # non-training pixels fall outside


def test_standardize_matches_numpy_on_training_pixels(cube_and_mask):
    cube, mask = cube_and_mask
    px = cube[mask].astype(np.float64)
    s = PerBandStandardize().fit(cube, sample_mask=mask)
    np.testing.assert_allclose(s.mean_, px.mean(0), rtol=1e-12)
    np.testing.assert_allclose(s.var_, px.var(0), rtol=1e-10)
    out = s.transform(cube)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[mask].mean(0), 0.0, atol=1e-5)
    np.testing.assert_allclose(out[mask].std(0), 1.0, rtol=1e-5)


@pytest.mark.parametrize("cls", SCALERS)
def test_partial_fit_over_tiles_equals_fit(cls, cube_and_mask):
    cube, mask = cube_and_mask
    full = cls().fit(cube, sample_mask=mask)
    streamed = cls()
    for rows in (slice(0, 7), slice(7, 19), slice(19, 30)):
        streamed.partial_fit(cube[rows], sample_mask=mask[rows])
    a, b = full.fitted_state(), streamed.fitted_state()
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(streamed.transform(cube), full.transform(cube), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("cls", SCALERS)
def test_flat_pixels_and_mask_none(cls, cube_and_mask):
    cube, mask = cube_and_mask
    a = cls().fit(cube, sample_mask=mask).fitted_state()
    b = cls().fit(cube[mask]).fitted_state()  # (N, C), mask=None -> all pixels
    c = cls().fit(cube.reshape(-1, 12), sample_mask=mask.reshape(-1)).fitted_state()
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-12)
        np.testing.assert_allclose(c[name], a[name], rtol=1e-12)


def test_constant_band_does_not_divide_by_zero():
    rng = np.random.default_rng(0)
    cube = rng.normal(size=(10, 10, 3))
    cube[..., 1] = 7.25
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from a division by zero
        mm = PerBandMinMax(feature_range=(0.0, 1.0)).fit(cube)
        st = PerBandStandardize().fit(cube)
        out_mm, out_st = mm.transform(cube), st.transform(cube)
    assert mm.data_range_[1] == 0 and mm.scale_[1] == 1.0
    assert np.all(out_mm[..., 1] == 0.0)  # constant band -> feature_range[0]
    assert st.scale_[1] == 1.0
    np.testing.assert_allclose(out_st[..., 1], 0.0, atol=1e-12)  # constant band -> 0
    assert np.isfinite(out_mm).all() and np.isfinite(out_st).all()


@pytest.mark.parametrize("cls", SCALERS)
def test_transform_before_fit_names_the_class(cls):
    with pytest.raises(NotFittedError, match=cls.__name__):
        cls().transform(np.zeros((2, 2, 3)))


@pytest.mark.parametrize("cls", SCALERS)
def test_band_mismatch(cls, cube_and_mask):
    cube, mask = cube_and_mask
    s = cls().fit(cube, sample_mask=mask)
    with pytest.raises(BandMismatchError, match=r"expected 12 bands.*found 11"):
        s.transform(cube[..., :11])
    with pytest.raises(BandMismatchError, match="expected 12 bands"):
        s.partial_fit(cube[..., :5], sample_mask=mask)


@pytest.mark.parametrize("cls", SCALERS)
def test_transform_any_leading_shape(cls, cube_and_mask):
    cube, mask = cube_and_mask
    s = cls().fit(cube, sample_mask=mask)
    whole = s.transform(cube)
    np.testing.assert_array_equal(s.transform(cube[3:9, 4:10]), whole[3:9, 4:10])
    np.testing.assert_array_equal(s.transform(cube[5, 6]), whole[5, 6])
    assert s.transform(np.zeros((2, 3, 4, 12))).shape == (2, 3, 4, 12)


@pytest.mark.parametrize("cls", SCALERS)
def test_bad_masks(cls, cube_and_mask):
    cube, mask = cube_and_mask
    with pytest.raises(ShapeMismatchError, match=r"mask must have shape \(30, 25\).*found \(25, 30\)"):
        cls().fit(cube, sample_mask=mask.T)
    with pytest.raises(SplitError, match=r"selects no pixel.*mask.sum\(\) == 0"):
        cls().fit(cube, sample_mask=np.zeros_like(mask))
    with pytest.raises(ShapeMismatchError, match="boolean"):
        cls().fit(cube, sample_mask=mask * 2.5)
    with pytest.raises(ShapeMismatchError, match=r"\(H, W, C\) or \(N, C\)"):
        cls().fit(np.zeros(5))


def test_failed_fit_leaves_no_learned_attributes(cube_and_mask):
    cube, mask = cube_and_mask
    s = PerBandStandardize().fit(cube, sample_mask=mask)
    with pytest.raises(SplitError):
        s.fit(cube, sample_mask=np.zeros_like(mask))
    assert not hasattr(s, "mean_")
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(PerBandMinMax()))


@pytest.mark.parametrize("cls", SCALERS)
def test_nan_training_pixels_are_ignored_with_a_count(cls, cube_and_mask):
    cube, mask = cube_and_mask
    dirty = cube.copy()
    r, c = np.nonzero(mask)
    dirty[r[:3], c[:3], 2] = np.nan
    clean_mask = mask.copy()
    clean_mask[r[:3], c[:3]] = False
    with pytest.warns(NonFiniteWarning, match="ignored 3 of"):
        s = cls().fit(dirty, sample_mask=mask)
    ref = cls().fit(cube, sample_mask=clean_mask)
    for name, value in ref.fitted_state().items():
        np.testing.assert_allclose(getattr(s, name), value, rtol=1e-12)


def test_bad_feature_range():
    with pytest.raises(ValueError, match="feature_range"):
        PerBandMinMax(feature_range=(1.0, 0.0)).fit(np.ones((3, 2)))


@pytest.mark.parametrize("offset, spread", [(0.0, 1.0), (1000.0, 3000.0), (1e4, 0.5), (-5e3, 10.0), (1e6, 1.0)])
def test_float32_scaling_within_few_ulps_of_float64(offset, spread):
    # float32 data far from zero next to its spread: a plain float32 (x - mean) would lose
    # most digits here (e.g. 27,000 ulps at offset 1e4, spread 0.5)
    rng = np.random.default_rng(0)
    x = (offset + spread * rng.random((500, 7))).astype(np.float32)
    for scaler in (PerBandStandardize().fit(x), PerBandMinMax(feature_range=(-1.0, 2.0)).fit(x)):
        got = scaler.transform(x)
        ref = scaler.transform(x.astype(np.float64))  # other dtypes take the float64 formula
        assert got.dtype == ref.dtype == np.float32
        ulp = np.spacing(np.abs(ref).max(axis=0))
        assert (np.abs(got.astype(np.float64) - ref) / ulp).max() <= 4.0, type(scaler).__name__


def test_per_band_affine_leaves_input_alone():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    kept = x.copy()
    out = per_band_affine(x, np.full(4, 2.0), np.full(4, 0.5), 1.0)
    np.testing.assert_array_equal(x, kept)
    np.testing.assert_allclose(out, (kept - 2.0) * 0.5 + 1.0)
