"""The 1-D spectral CNN reads only the centre pixel, with the paper's size rules."""

from __future__ import annotations

import math

import pytest
import torch

from hsi.models import ModelSizeError, build_model


@pytest.mark.parametrize("patch_size", [1, 5, 9])
def test_output_depends_only_on_the_centre_pixel(patch_size):
    torch.manual_seed(0)
    model = build_model("spectral1d", 50, 6, patch_size).eval()
    x = torch.randn(4, 50, patch_size, patch_size)
    c = patch_size // 2
    other = torch.randn_like(x)
    other[:, :, c, c] = x[:, :, c, c]
    with torch.no_grad():
        torch.testing.assert_close(model(x), model(other), rtol=0, atol=0)
        changed = x.clone()
        changed[:, :, c, c] += 1.0
        assert not torch.allclose(model(x), model(changed))


@pytest.mark.parametrize("num_bands", [1, 9, 10, 103, 200])
def test_default_kernel_and_pool_sizes_follow_the_paper(num_bands):
    model = build_model("spectral1d", num_bands, 3, 1)
    kernel = math.ceil(num_bands / 9)
    assert model.kernel_size == kernel
    assert model.pool_size == math.ceil(kernel / 5)
    assert model.features[0].kernel_size == (kernel,)
    assert model.features[0].out_channels == 20
    assert model.classifier[1].out_features == 100


def test_explicit_sizes_too_large_for_the_spectrum_are_rejected():
    expected = r"num_bands must be >= kernel_size=12.*got num_bands=10"
    with pytest.raises(ModelSizeError, match=expected):
        build_model("spectral1d", 10, 3, 1, kernel_size=12)
    with pytest.raises(ModelSizeError, match=r"pool_size must be <= 3"):
        build_model("spectral1d", 10, 3, 1, kernel_size=8, pool_size=4)


def test_even_patch_size_is_rejected():
    with pytest.raises(ValueError, match=r"patch_size must be odd"):
        build_model("spectral1d", 10, 3, 8)


@pytest.mark.parametrize("num_bands", [50, 200])
def test_pooling_before_the_tanh_gives_the_papers_tanh_then_pool(num_bands):
    """The features are max-pooled, then tanh'd: the paper's order's values exactly, saturated ones included."""
    torch.manual_seed(1)
    model = build_model("spectral1d", num_bands, 6, 1).eval()
    conv = model.features[0]
    assert [type(m).__name__ for m in model.features] == ["Conv1d", "MaxPool1d", "Tanh"]
    spectra = torch.cat([torch.randn(64, 1, num_bands), 40 * torch.randn(64, 1, num_bands)])  # tanh saturates at 1
    with torch.no_grad():
        papers = torch.nn.functional.max_pool1d(torch.tanh(conv(spectra)), model.pool_size)
        torch.testing.assert_close(model.features(spectra), papers, rtol=0, atol=0)
    # checkpoints written before the reordering load as they are: the parameters keep their names
    assert list(model.state_dict()) == ["features.0.weight", "features.0.bias", "classifier.1.weight",
                                        "classifier.1.bias", "classifier.3.weight", "classifier.3.bias"]
