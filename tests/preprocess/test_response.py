"""Band resampling by spectral response: the matrix against direct integration, and its application."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from hsi.errors import BandMismatchError, OptionError, WavelengthError
from hsi.preprocess.response import (
    apply_response,
    dropped_bands,
    grid_summary,
    resample_method,
    response_matrix,
)

SRC = np.arange(400.0, 1000.0 + 1e-9, 2.0)  # 2 nm source bands
#: sigma per unit of FWHM, written out here so that the module's own constant is checked too
FWHM_TO_SIGMA = 1.0 / (2.0 * math.sqrt(2.0 * math.log(2.0)))
TARGETS = np.array([401.0, 405.0, 550.0, 633.3, 700.0, 800.0, 995.0, 999.5, 1000.0])


def smooth(lam: np.ndarray | float) -> np.ndarray | float:
    """Two Gaussian bumps on a slope: the 'true' spectrum."""
    return (np.exp(-(((lam - 550.0) / 40.0) ** 2)) + 0.5 * np.exp(-(((lam - 800.0) / 60.0) ** 2))
            + 1e-3 * (lam - 400.0) + 0.1)


def direct(truth, mu: float, fwhm: float) -> float:
    """Truncated (+-3 sigma, source range) Gaussian-weighted mean of ``truth``, by adaptive quadrature."""
    sigma = fwhm * FWHM_TO_SIGMA
    a, b = max(mu - 3 * sigma, SRC[0]), min(mu + 3 * sigma, SRC[-1])
    def r(lam):
        return math.exp(-((lam - mu) ** 2) / (2 * sigma * sigma))
    kinks = SRC[(SRC > a) & (SRC < b)]
    num = quad(lambda lam: r(lam) * truth(lam), a, b, points=kinks, limit=500, epsabs=0, epsrel=1e-12)[0]
    den = quad(r, a, b, epsabs=0, epsrel=1e-12)[0]
    return num / den


def test_gaussian_equals_direct_integration_of_the_interpolant_and_of_the_smooth_spectrum():
    x = smooth(SRC)
    fwhm = np.full(TARGETS.size, 10.0)
    got = response_matrix(SRC, TARGETS, fwhm) @ x
    interpolant = [direct(lambda lam: float(np.interp(lam, SRC, x)), m, 10.0) for m in TARGETS]
    np.testing.assert_allclose(got, interpolant, rtol=1e-6)
    np.testing.assert_allclose(got, [direct(smooth, m, 10.0) for m in TARGETS], rtol=1e-3)
    # and not what picking the centre gives: the 10 nm band averages the 40 nm-wide peak
    assert abs(got[2] - smooth(550.0)) > 1e-3


def test_per_band_fwhm_and_unsorted_source():
    fwhm = np.linspace(5.0, 25.0, TARGETS.size)
    perm = np.random.default_rng(0).permutation(SRC.size)
    w = response_matrix(SRC[perm], TARGETS, fwhm)
    np.testing.assert_allclose(w[:, np.argsort(perm)], response_matrix(SRC, TARGETS, fwhm), rtol=0, atol=0)
    x = smooth(SRC)
    np.testing.assert_allclose(w @ x[perm], [direct(lambda lam: float(np.interp(lam, SRC, x)), m, f)
                                             for m, f in zip(TARGETS, fwhm)], rtol=1e-6)


def test_narrow_to_broad_averages_while_linear_picks_two():
    dst = np.array([553.0, 700.0, 851.0])
    gauss, lin = response_matrix(SRC, dst, np.full(3, 10.0)), response_matrix(SRC, dst)
    assert np.all((gauss > 0).sum(axis=1) > 4)
    assert np.all((lin != 0).sum(axis=1) <= 2)
    # the Gaussian weights fall off symmetrically around a centred target
    row = gauss[1]
    k = int(np.flatnonzero(SRC == 700.0)[0])
    assert row.argmax() == k
    np.testing.assert_allclose(row[k - 3:k], row[k + 3:k:-1], rtol=1e-12)


def test_rows_sum_to_one_and_are_nonnegative():
    dst = np.linspace(400.0, 1000.0, 37)
    for w in (response_matrix(SRC, dst, np.full(dst.size, 7.5)), response_matrix(SRC, dst),
              response_matrix(SRC, dst, 0.3)):
        assert w.shape == (37, SRC.size) and w.dtype == np.float64
        np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert w.min() >= 0.0


def test_truncation_at_the_source_edges_renormalises():
    w = response_matrix(SRC, [400.0, 401.0, 1000.0], [20.0, 20.0, 20.0])
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    # only source bands from 400 nm up to 3 sigma above the centre carry weight
    sigma = 20.0 * FWHM_TO_SIGMA
    used = SRC[w[0] > 0]
    assert used.min() == 400.0 and used.max() <= 400.0 + 3 * sigma + 2.0
    # a constant spectrum stays constant; a linear one gives the mean of the half-Gaussian on [0, 3 sigma]
    np.testing.assert_allclose(w @ np.full(SRC.size, 3.0), 3.0, rtol=1e-12)
    half_mean = sigma * math.sqrt(2 / math.pi) * (1 - math.exp(-4.5)) / math.erf(3 / math.sqrt(2))
    np.testing.assert_allclose((w @ SRC)[[0, 2]], [400.0 + half_mean, 1000.0 - half_mean], rtol=1e-12)


def test_identity_on_equal_grids_exactly_whatever_the_fwhm():
    wl = SRC + np.random.default_rng(1).uniform(-5e-7, 5e-7, SRC.size)
    for fwhm in (None, np.full(SRC.size, 10.0), 50.0):
        w = response_matrix(SRC, wl, fwhm, fwhm_from=fwhm)
        assert np.array_equal(w, np.eye(SRC.size))
        assert resample_method(SRC, wl, fwhm) == "identity"
    assert resample_method(SRC, TARGETS, None) == "linear"
    assert resample_method(SRC, TARGETS, np.full(TARGETS.size, 10.0)) == "gaussian"
    assert dropped_bands(SRC, wl, 10.0).size == 0


def test_linear_equals_np_interp_per_pixel():
    rng = np.random.default_rng(2)
    src = np.sort(rng.uniform(400.0, 1000.0, 50))
    dst = np.concatenate([np.sort(rng.uniform(src[0], src[-1], 30)), src[[0, 7, -1]]])
    w = response_matrix(src, dst)
    cube = rng.random((4, 5, src.size))
    expect = np.apply_along_axis(lambda spec: np.interp(dst, src, spec), -1, cube)
    np.testing.assert_allclose(cube @ w.T, expect, rtol=1e-12, atol=1e-12)
    # a target on a source centre takes that band exactly
    for row, i in zip(w[-3:], (0, 7, src.size - 1)):
        assert row[i] == 1.0 and np.count_nonzero(row) == 1


def test_broad_to_narrow_is_near_interpolation_not_deconvolution():
    src = np.arange(400.0, 1001.0, 10.0)
    dst = np.arange(402.5, 1000.0, 5.0)
    w = response_matrix(src, dst, np.full(dst.size, 0.5), fwhm_from=np.full(src.size, 10.0))
    np.testing.assert_allclose(w, response_matrix(src, dst), atol=1e-6)
    # a target as broad as its source bands: interpolation too (nothing is smoothed twice)
    w = response_matrix(src, dst, np.full(dst.size, 10.0), fwhm_from=np.full(src.size, 10.0))
    np.testing.assert_allclose(w, response_matrix(src, dst), atol=1e-6)


def test_source_widths_narrow_the_target_response_as_gaussians_compose():
    src = np.arange(400.0, 1001.0, 2.0)
    dst = np.array([600.0, 701.0, 850.5])
    w = response_matrix(src, dst, np.full(dst.size, 20.0), fwhm_from=np.full(src.size, 12.0))
    np.testing.assert_allclose(w, response_matrix(src, dst, np.full(dst.size, 16.0)), rtol=1e-12, atol=1e-15)


def test_dropped_bands_and_summary():
    dst = np.array([500.0, 600.0])
    dropped = dropped_bands(SRC, dst)  # linear on centres: only bands 500 and 600 nm are used
    np.testing.assert_array_equal(np.setdiff1d(np.arange(SRC.size), dropped), np.searchsorted(SRC, dst))
    kept = np.setdiff1d(np.arange(SRC.size), dropped_bands(SRC, dst, [10.0, 10.0]))
    sigma = 10.0 * FWHM_TO_SIGMA
    assert kept.size > 4 and np.all(np.abs(SRC[kept][:, None] - dst).min(axis=1) < 3 * sigma + 2.0)
    assert grid_summary(SRC) == {"range_nm": [400.0, 1000.0], "count": SRC.size, "fwhm_nm": None}
    assert grid_summary([700.0, 400.0], [12.0, 3.0]) == {"range_nm": [400.0, 700.0], "count": 2,
                                                         "fwhm_nm": [3.0, 12.0]}


@pytest.mark.parametrize(("args", "match"), [
    ((SRC, TARGETS, np.full(3, 10.0)), "3 FWHM values for 9 band centres"),
    ((SRC, TARGETS, None, np.full(5, 10.0)), "5 FWHM values for 301"),
    ((SRC, TARGETS, np.r_[10.0, 0.0, np.full(7, 10.0)]), r"band 1 \(405.000 nm\) has FWHM 0.0"),
    ((SRC, TARGETS, np.r_[np.full(8, 10.0), np.nan]), r"band 8 \(1000.000 nm\) has FWHM nan"),
    ((SRC, [500.0, 1000.1]), r"target band 1 \(1000.100 nm\) is outside .* 400.000-1000.000 nm"),
    ((SRC, [399.99]), r"target band 0 \(399.990 nm\)"),
    ((SRC, [np.inf]), "band 0 has centre inf"),
    (([500.0, 500.0, 600.0], [550.0]), "same centre"),
    (([500.0], [501.0]), "at least 2 source bands"),
])
def test_errors_name_the_band_and_value(args, match):
    with pytest.raises(WavelengthError, match=match):
        response_matrix(*args)


def test_a_target_within_1e6_nm_outside_is_clipped_onto_the_edge():
    w = response_matrix(SRC, [SRC[-1] + 5e-7, SRC[0] - 5e-7])
    assert w[0, -1] == 1.0 and w[1, 0] == 1.0


def test_apply_response_matches_einsum_and_stays_float32():
    rng = np.random.default_rng(3)
    w = response_matrix(SRC, TARGETS, np.full(TARGETS.size, 10.0))
    cube = rng.random((7, 9, SRC.size)).astype(np.float32)
    expect = np.einsum("hwc,jc->hwj", cube.astype(np.float64), w)
    for pixels in (1, 5, 9, 10, 1 << 16):  # blocks of part of a row, rows, several rows
        got = apply_response(cube, w, pixels=pixels)
        assert got.dtype == np.float32 and got.shape == (7, 9, TARGETS.size)
        np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-6)
    # a non-contiguous float64 view, a single spectrum, and out=
    view = cube.astype(np.float64)[::2, 1::3]
    np.testing.assert_allclose(apply_response(view, w, pixels=2), expect[::2, 1::3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(apply_response(cube[3, 4], w), expect[3, 4], rtol=1e-5, atol=1e-6)
    out = np.full((7, 9, TARGETS.size), -1.0, dtype=np.float32)
    assert apply_response(cube, w, pixels=4, out=out) is out
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-6)


def test_apply_response_keeps_nans_local():
    dst = np.array([450.0, 800.0])
    w = response_matrix(SRC, dst, [10.0, 10.0])
    cube = np.ones((2, SRC.size), dtype=np.float32)
    cube[0, np.searchsorted(SRC, 452.0)] = np.nan  # used by the 450 nm band only
    got = apply_response(cube, w)
    assert np.isnan(got[0, 0]) and got[0, 1] == pytest.approx(1.0) and np.allclose(got[1], 1.0)


def test_apply_response_errors():
    w = response_matrix(SRC, TARGETS)
    with pytest.raises(BandMismatchError, match="3 bands, but the response matrix takes 301"):
        apply_response(np.zeros((2, 3), dtype=np.float32), w)
    with pytest.raises(OptionError, match="out"):
        apply_response(np.zeros((2, SRC.size)), w, out=np.zeros((2, TARGETS.size)))
    with pytest.raises(OptionError, match="pixels"):
        apply_response(np.zeros((2, SRC.size)), w, pixels=0)
    with pytest.raises(OptionError, match="W"):
        apply_response(np.zeros((2, SRC.size)), w[0])
