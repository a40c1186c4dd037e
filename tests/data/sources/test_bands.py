"""Bands across sensors: the common grid, and linear resampling of reflectance onto it."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.data.sources.bands import common_grid, resample
from hsi.errors import CollectionError, WavelengthError


def test_equal_grids_are_the_identity():
    wl = np.linspace(400, 1000, 9)
    cube = np.random.default_rng(0).random((4, 5, 9), dtype=np.float32)
    out = resample(cube, wl, wl.copy())
    assert out is cube  # the very same array: no value touched


def test_different_grid_matches_interpolation_of_a_known_spectrum():
    wl_from = np.linspace(400, 1000, 13)
    wl_to = np.array([400.0, 437.5, 512.0, 700.0, 999.0, 1000.0])
    spectrum = lambda w: 0.2 + 0.5 * np.sin(w / 150.0)  # noqa: E731
    cube = np.stack([spectrum(wl_from) * k for k in (1.0, 2.0)]).reshape(1, 2, 13).astype(np.float32)
    out = resample(cube, wl_from, wl_to)
    assert out.shape == (1, 2, 6) and out.dtype == np.float32
    expected = np.stack([np.interp(wl_to, wl_from, cube[0, j]) for j in range(2)])
    np.testing.assert_allclose(out[0], expected, atol=1e-6)
    # linear reflectance is reproduced exactly between band centres; band centres themselves are kept
    line = (wl_from / 1000.0).astype(np.float32)[None, None]
    np.testing.assert_allclose(resample(line, wl_from, wl_to)[0, 0], wl_to / 1000.0, rtol=1e-6)
    assert resample(cube, wl_from, wl_from[[2, 5]])[0, 1].tolist() == cube[0, 1, [2, 5]].tolist()


def test_cube_not_covering_the_grid_is_refused_naming_the_ranges():
    with pytest.raises(WavelengthError, match=r"450\.00-900\.00 nm.*400\.00-950\.00 nm"):
        resample(np.zeros((2, 2, 3), np.float32), [450, 600, 900], [400, 700, 950], name="cube x")


def test_common_grid_is_the_reference_scenes_bands_inside_the_shared_range():
    a, b = np.linspace(400, 2500, 16), np.linspace(420, 2400, 20)
    grid = common_grid([a, b], [16, 20], ["a", "b"], reference=0)
    assert grid.tolist() == a[(a >= 420) & (a <= 2400)].tolist()
    assert common_grid([a, b], [16, 20], ["a", "b"], reference=1).tolist() == b.tolist()


def test_the_reference_is_the_scene_of_the_broadest_bands():
    from hsi.data.sources.bands import coarsest_scene

    fine, coarse = np.arange(400.0, 1001.0, 10.0), np.arange(405.0, 996.0, 30.0)
    assert coarsest_scene([fine, coarse], [None, None], first_train=0) == 1  # wider spacing
    assert coarsest_scene([fine, coarse], [np.full(61, 40.0), None], first_train=1) == 0  # wider known FWHM
    assert coarsest_scene([fine, fine + 1], [None, None], first_train=1) == 1  # a tie: the first training scene
    assert coarsest_scene([fine, None], [None, None], first_train=1) == 1  # no wavelengths: no choice


def test_a_grid_of_some_of_the_cubes_own_bands_takes_them_as_they_are():
    from hsi.data.sources.bands import grid_fwhm

    wl = np.arange(400.0, 1001.0, 10.0)
    cube = np.random.default_rng(1).random((3, 4, wl.size), dtype=np.float32)
    grid = wl[5:40]
    widths, origin = grid_fwhm(wl, None, grid)  # unknown widths: estimated from the spacing
    assert origin == "spacing" and np.allclose(widths, 10.0)
    out = resample(cube, wl, grid, fwhm_to=widths)
    assert np.array_equal(out, cube[..., 5:40])  # the same sensor: never smoothed by its own estimated width


def test_scenes_without_wavelengths_combine_only_with_equal_band_counts():
    assert common_grid([None, None], [8, 8], ["a", "b"], 0) is None
    with pytest.raises(CollectionError, match="band counts are equal"):
        common_grid([None, None], [8, 9], ["a", "b"], 0)


def test_scenes_with_and_without_wavelengths_need_a_declaration():
    for counts in ([9, 9], [8, 9]):  # equal band counts are no evidence of one grid
        with pytest.raises(CollectionError, match=r"scenes a \(\d bands\): no wavelengths, beside scenes with them "
                                                  r"\(b\).*wavelengths: \[nm"):
            common_grid([None, np.linspace(400, 900, 9)], counts, ["a", "b"], 0)
    with pytest.raises(CollectionError, match="share"):
        common_grid([np.linspace(400, 500, 5), np.linspace(600, 700, 5)], [5, 5], ["a", "b"], 0)
