"""anyband: one network for any band set inside the range it was trained on."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hsi.errors import ModelSizeError, ShapeMismatchError, WavelengthError
from hsi.models import AnyBandNet
from hsi.models.anyband import band_quadrature

TRAINED = np.arange(420.0, 2401.0, 10.0)  # a 10 nm sensor


def smooth_spectra(centres: np.ndarray, n: int = 4, seed: int = 0) -> torch.Tensor:
    """``(n, C, 1, 1)`` spectra that are smooth functions of wavelength, sampled at ``centres``."""
    rng = np.random.default_rng(seed)
    amp, where, width = rng.uniform(0.2, 1, (n, 3)), rng.uniform(500, 2300, (n, 3)), rng.uniform(150, 400, (n, 3))
    values = (amp[:, :, None] * np.exp(-0.5 * ((centres[None, None, :] - where[:, :, None]) / width[:, :, None]) ** 2))
    return torch.tensor(values.sum(1), dtype=torch.float32)[:, :, None, None]


def net() -> AnyBandNet:
    torch.manual_seed(0)
    return AnyBandNet(TRAINED.size, 4, 7, wavelengths=TRAINED.tolist()).eval()


def test_the_same_wavelengths_give_the_same_output_as_before():
    model = net()
    x = torch.randn(3, TRAINED.size, 7, 7)
    with torch.no_grad():
        before = model(x)
        model.set_bands(TRAINED[::3])
        model.set_bands(TRAINED)
        assert torch.equal(model(x), before)


def test_another_band_set_reads_a_smooth_spectrum_as_the_trained_one():
    model = net()
    coarse = np.arange(450.0, 2351.0, 25.0)  # another sensor: other centres, other spacing, narrower range
    with torch.no_grad():
        trained = model.filter_outputs(smooth_spectra(TRAINED))
        model.set_bands(coarse)
        other = model.filter_outputs(smooth_spectra(coarse))
        assert model(torch.randn(2, coarse.size, 7, 7)).shape == (2, 4)  # no error
    spread = trained.std(0, keepdim=True)
    assert float(((other - trained).abs() / spread).mean()) < 0.1


def test_bands_beyond_the_trained_range_are_refused_naming_both_ranges():
    model = net()
    with pytest.raises(WavelengthError, match=r"span 400.0-2400.0 nm but the network was trained on 420.0-2400.0 nm"):
        model.set_bands(np.arange(400.0, 2401.0, 10.0))
    model.set_bands(np.array([416.0, 1000.0, 2404.0]))  # within half a trained band spacing: read


@pytest.mark.parametrize(("centres", "message"), [
    ([700.0] * 8, r"strictly increasing .* band 1 \(700 nm\) repeats band 0 \(700 nm\)"),
    ([500.0, 900.0, 800.0, 1200.0], r"strictly increasing .* band 2 \(800 nm\) is below band 1 \(900 nm\)"),
    ([500.0, float("nan"), 900.0], r"finite wavelengths > 0 \(nm\); band 1 is nan"),
    ([-5.0, 500.0, 900.0], r"finite wavelengths > 0 \(nm\); band 0 is -5"),
    ([], r"no band centre given"),
])
def test_band_centres_that_are_not_distinct_increasing_wavelengths_are_refused(centres, message):
    model = net()
    with pytest.raises(WavelengthError, match=r"AnyBandNet\.set_bands: .*" + message):
        model.set_bands(centres)
    assert model.num_bands == TRAINED.size  # the band set it had is kept


def test_a_cube_of_another_band_count_is_refused_until_its_bands_are_given():
    model = net()
    with pytest.raises(ShapeMismatchError, match="set_bands"):
        model(torch.randn(1, 50, 7, 7))


def test_without_wavelengths_the_bands_are_fixed():
    torch.manual_seed(0)
    model = AnyBandNet(12, 3, 5).eval()
    assert model(torch.randn(2, 12, 5, 5)).shape == (2, 3)
    with pytest.raises(WavelengthError, match="trained without band wavelengths"):
        model.set_bands(np.linspace(400, 900, 12))
    with pytest.raises(ModelSizeError, match="12 finite band centres"):
        AnyBandNet(12, 3, 5, wavelengths=[400.0, 500.0])


def test_dense_and_patch_outputs_agree_at_the_centre():
    model = net()
    x = torch.randn(2, TRAINED.size, 7, 7)
    with torch.no_grad():
        assert torch.allclose(model.forward_dense(x)[:, :, 3, 3], model(x), atol=1e-5)


def test_quadrature_weights_are_each_bands_share_of_the_spectrum():
    share = band_quadrature(np.array([400.0, 410.0, 430.0, 460.0]))
    assert share.tolist() == [10.0, 15.0, 25.0, 30.0]
    assert band_quadrature(np.array([430.0, 400.0, 410.0])).tolist() == [20.0, 10.0, 15.0]  # any order
