"""PCA fitted on training pixels only; plain-array transform."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import BandMismatchError, NotFittedError, OptionError
from hsi.preprocess import PCA


@pytest.fixture
def correlated():
    rng = np.random.default_rng(3)
    latent = rng.normal(size=(40, 30, 3)) * np.array([10.0, 3.0, 1.0])
    mixing = rng.normal(size=(3, 16))
    cube = latent @ mixing + rng.normal(size=(40, 30, 16)) * 0.05 + 100.0
    mask = rng.random((40, 30)) < 0.3
    return cube, mask


def test_pca_ignores_non_training_pixels(correlated):
    cube, mask = correlated
    a = PCA(4).fit(cube, sample_mask=mask).fitted_state()
    other = cube.copy()
    other[~mask] = np.random.default_rng(5).normal(size=other[~mask].shape) * 1e3
    b = PCA(4).fit(other, sample_mask=mask).fitted_state()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_pca_matches_numpy_eig_of_training_covariance(correlated):
    cube, mask = correlated
    p = PCA(3).fit(cube, sample_mask=mask)
    px = cube[mask]
    np.testing.assert_allclose(p.mean_, px.mean(0), rtol=1e-12)
    evals, evecs = np.linalg.eigh(np.cov(px, rowvar=False))
    np.testing.assert_allclose(p.explained_variance_, evals[::-1][:3], rtol=1e-8)
    # same axes up to sign
    np.testing.assert_allclose(np.abs(p.components_ @ evecs[:, ::-1][:, :3]), np.eye(3),
                               atol=1e-6)
    out = p.transform(cube)
    assert out.shape == (40, 30, 3) and out.dtype == np.float32
    ref = (cube - p.mean_) @ p.components_.T
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)
    assert p.n_bands_in_ == 16 and p.n_bands_out_ == p.n_components_ == 3


def test_variance_fraction_picks_the_fewest_components(correlated):
    cube, mask = correlated
    p = PCA(0.99).fit(cube, sample_mask=mask)
    cum = np.cumsum(p.explained_variance_ratio_)
    assert cum[-1] >= 0.99 and (p.n_components_ == 1 or cum[-2] < 0.99)
    assert p.n_components_ <= 3  # three latent factors


def test_whiten_gives_unit_variance(correlated):
    cube, mask = correlated
    out = PCA(3, whiten=True).fit(cube, sample_mask=mask).transform(cube)
    np.testing.assert_allclose(out[mask].std(0, ddof=1), 1.0, rtol=1e-4)


def test_subsample_is_deterministic_and_capped(correlated):
    cube, mask = correlated
    a = PCA(2, max_fit_pixels=100, random_state=7).fit(cube, sample_mask=mask)
    b = PCA(2, max_fit_pixels=100, random_state=7).fit(cube, sample_mask=mask)
    c = PCA(2, max_fit_pixels=100, random_state=8).fit(cube, sample_mask=mask)
    assert a.n_samples_seen_ == 100
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.array_equal(a.mean_, c.mean_)


def test_errors(correlated):
    cube, mask = correlated
    with pytest.raises(NotFittedError, match="PCA"):
        PCA(2).transform(cube)
    with pytest.raises(OptionError, match=r"n_components: 17: at most min\(bands, training pixels\)"):
        PCA(17).fit(cube, sample_mask=mask)
    with pytest.raises(OptionError, match=r"n_components: 0: a number of components >= 1"):
        PCA(0).fit(cube, sample_mask=mask)
    with pytest.raises(ValueError, match=r"variance fraction.*\(0, 1\)"):
        PCA(1.5).fit(cube, sample_mask=mask)
    with pytest.raises(BandMismatchError, match="expected 16 bands"):
        PCA(2).fit(cube, sample_mask=mask).transform(cube[..., :8])
