"""Band removal by index, wavelength window and bad-band list."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import BandMismatchError, WavelengthError
from hsi.preprocess import WATER_ABSORPTION_NM, RemoveBands


def test_indices_ranges_and_bbl_combine():
    wl = np.linspace(400, 2500, 22)  # 100 nm steps
    bbl = np.ones(22, dtype=int)
    bbl[21] = 0
    rb = RemoveBands(indices=[0, -2], wavelength_ranges=[(1290, 1510)], bbl=bbl)
    rb.fit(np.zeros((2, 2, 22)), wavelengths=wl)
    # 1300, 1400, 1500 nm are bands 9, 10, 11
    np.testing.assert_array_equal(rb.removed_, [0, 9, 10, 11, 20, 21])
    assert rb.n_bands_out_ == 16
    np.testing.assert_array_equal(rb.wavelengths_out_, wl[rb.keep_])
    x = np.arange(44.0).reshape(2, 22)
    out = rb.transform(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x[:, rb.keep_])


def test_water_windows_reproduce_the_200_band_indian_pines(shared_data):
    spc = np.loadtxt(shared_data / "indian_pines" / "92AV3C.spc", skiprows=2)[:, 0]
    rb = RemoveBands(wavelength_ranges=WATER_ABSORPTION_NM).fit(220, wavelengths=spc)
    expected = list(range(103, 108)) + list(range(149, 163)) + [219]
    np.testing.assert_array_equal(rb.removed_, expected)
    assert rb.n_bands_out_ == 200


def test_errors():
    with pytest.raises(WavelengthError, match="wavelength_ranges needs"):
        RemoveBands(wavelength_ranges=WATER_ABSORPTION_NM).fit(np.zeros((3, 5)))
    with pytest.raises(WavelengthError, match="3 entries, expected one per band \\(5\\)"):
        RemoveBands(wavelength_ranges=[(1, 2)]).fit(np.zeros((3, 5)), wavelengths=[1, 2, 3])
    with pytest.raises(BandMismatchError, match=r"indices \[7\] are out of range.*5 bands"):
        RemoveBands(indices=[1, 7]).fit(np.zeros((3, 5)))
    with pytest.raises(BandMismatchError, match="bbl has 4 entries"):
        RemoveBands(bbl=[1, 1, 0, 1]).fit(np.zeros((3, 5)))
    with pytest.raises(BandMismatchError, match="removes all 2 bands"):
        RemoveBands(indices=[0, 1]).fit(np.zeros((3, 2)))
    rb = RemoveBands(indices=[0]).fit(np.zeros((3, 5)))
    with pytest.raises(BandMismatchError, match="expected 5 bands"):
        rb.transform(np.zeros((3, 4)))
