"""The layout rule and the wavelength/band-order rules, on shapes and vectors alone."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import LayoutError, WavelengthError
from hsi.io.bands import band_order, to_nanometers
from hsi.io.layout import detect_layout, parse_layout, to_hwc_axes


@pytest.mark.parametrize(
    ("shape", "n_wl", "expected"),
    [
        ((145, 145, 200), None, "HWC"),   # Indian Pines
        ((200, 145, 145), None, "CHW"),
        ((610, 340, 103), None, "HWC"),   # Pavia University
        ((103, 610, 340), None, "CHW"),
        ((1476, 256, 102), None, "HWC"),
        ((51, 88, 72), 72, "HWC"),        # MUUFL, decided by the wavelength count
        ((72, 51, 88), 72, "CHW"),
        ((51, 72, 88), 72, "HCW"),
    ],
)
def test_detected_layouts(shape, n_wl, expected):
    assert detect_layout(shape, n_wl)[0] == expected


@pytest.mark.parametrize(
    ("shape", "n_wl"),
    [
        ((100, 100, 100), None),
        ((512, 217, 204), None),   # Salinas: smallest axis not clearly smallest
        ((86, 83, 204), None),     # Salinas-A: smallest axis in the middle
        ((145, 200, 145), None),
        ((72, 72, 50), 72),        # two axes match the wavelength count
        ((10, 20, 30), 72),        # none does
    ],
)
def test_ambiguous_layouts_raise(shape, n_wl):
    with pytest.raises(LayoutError, match="layout="):
        detect_layout(shape, n_wl, source="f.mat")


def test_parse_layout():
    assert parse_layout("chw") == "CHW"
    assert to_hwc_axes("CHW") == (1, 2, 0)
    assert to_hwc_axes("WHC") == (1, 0, 2)
    for bad in ("HW", "HHC", "XYZ", "HWCC"):
        with pytest.raises(LayoutError, match=repr(bad)):
            parse_layout(bad)


def test_units():
    np.testing.assert_allclose(to_nanometers([0.4, 0.5], "Micrometers", "f")[0], [400, 500])
    np.testing.assert_allclose(to_nanometers([0.4, 0.5], None, "f")[0], [400, 500])
    np.testing.assert_allclose(to_nanometers([400, 500], "Unknown", "f")[0], [400, 500])
    with pytest.warns(UserWarning, match="not a length"):
        assert to_nanometers([1, 2], "Index", "f")[0] is None
    with pytest.raises(WavelengthError, match="not finite"):
        to_nanometers([400, np.nan], "nm", "f")


def test_band_order_rules():
    idx, how = band_order(np.array([400.0, 410, 420]), "f")
    assert how == "ascending" and idx.tolist() == [0, 1, 2]
    idx, how = band_order(np.array([420.0, 410, 400]), "f")
    assert how == "reversed" and idx.tolist() == [2, 1, 0]
    overlap = np.r_[400 + 10 * np.arange(8), 465 + 10 * np.arange(8)]
    idx, how = band_order(overlap, "f")
    assert how == "sorted" and np.all(np.diff(overlap[idx]) > 0)
    with pytest.raises(WavelengthError, match="index 8"):
        band_order(overlap, "f", mode="strict")
    with pytest.raises(WavelengthError, match=r"f: .*index 2 \(410 nm\) after index 1 \(420 nm\)"):
        band_order(np.array([400.0, 420, 410, 430, 440, 450]), "f")
    with pytest.raises(WavelengthError, match="index 1"):
        band_order(np.array([400.0, 400, 410]), "f")
    restart = np.r_[400 + 10 * np.arange(8), 400 + 10 * np.arange(8)]
    with pytest.raises(WavelengthError):
        band_order(restart, "f")
