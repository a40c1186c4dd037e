"""Minimum sizes: each architecture works at its documented minimum and explains below it."""

from __future__ import annotations

import pytest
import torch

from hsi.models import ModelSizeError, build_model, get_model_class

# name -> (min num_bands, min patch_size, patch must be odd)
MINIMUMS = {
    "spectral1d": (1, 1, True),
    "cnn3d": (3, 3, False),
    "hybridsn": (13, 9, False),
    "cnn2d": (1, 1, False),
    "fcn": (1, 1, True),
    "ssnet": (1, 1, True),
}


@pytest.mark.parametrize("name", sorted(MINIMUMS))
def test_documented_minimums_match_the_class(name):
    cls = get_model_class(name)
    assert (cls.MIN_NUM_BANDS, cls.MIN_PATCH_SIZE, cls.ODD_PATCH_SIZE) == MINIMUMS[name]


@pytest.mark.parametrize("name", sorted(MINIMUMS))
def test_works_at_the_minimum_sizes(name):
    bands, patch, _ = MINIMUMS[name]
    torch.manual_seed(0)
    model = build_model(name, bands, 3, patch).eval()
    with torch.no_grad():
        assert model(torch.randn(1, bands, patch, patch)).shape == (1, 3)


@pytest.mark.parametrize("name", ["cnn3d", "hybridsn"])
def test_below_the_minimum_names_argument_and_minimum(name):
    bands, patch, _ = MINIMUMS[name]
    too_few_bands = rf"num_bands must be >= {bands} \(.*\); got {bands - 1}"
    with pytest.raises(ModelSizeError, match=too_few_bands):
        build_model(name, bands - 1, 3, patch + 2)
    too_small_patch = rf"patch_size must be >= {patch} \(.*\); got {patch - 1}"
    with pytest.raises(ModelSizeError, match=too_small_patch):
        build_model(name, bands + 2, 3, patch - 1)


@pytest.mark.parametrize("name", ["spectral1d", "fcn"])
def test_centre_pixel_models_require_an_odd_patch(name):
    with pytest.raises(ModelSizeError, match=r"patch_size must be odd .*; got 10"):
        build_model(name, 30, 3, 10)


@pytest.mark.parametrize("patch_size", [3, 4, 5, 6, 8])
@pytest.mark.parametrize("num_bands", [3, 4, 5, 8, 17, 103])
def test_cnn3d_adapts_to_any_bands_and_patch(num_bands, patch_size):
    model = build_model("cnn3d", num_bands, 3, patch_size).eval()
    with torch.no_grad():
        assert model(torch.randn(2, num_bands, patch_size, patch_size)).shape == (2, 3)


@pytest.mark.parametrize(("num_bands", "patch_size"), [(13, 10), (20, 9), (30, 25)])
def test_hybridsn_layer_sizes_follow_the_paper(num_bands, patch_size):
    model = build_model("hybridsn", num_bands, 3, patch_size)
    assert [c.out_channels for c in model.conv3d if isinstance(c, torch.nn.Conv3d)] == [8, 16, 32]
    assert [c.kernel_size for c in model.conv3d if isinstance(c, torch.nn.Conv3d)] == [
        (7, 3, 3),
        (5, 3, 3),
        (3, 3, 3),
    ]
    assert model.conv2d[0].in_channels == 32 * (num_bands - 12)
    assert model.conv2d[0].out_channels == 64
    linears = [m for m in model.classifier if isinstance(m, torch.nn.Linear)]
    assert linears[0].in_features == 64 * (patch_size - 8) ** 2
    assert [lin.out_features for lin in linears] == [256, 128, 3]


def test_fixed_size_models_reject_other_patch_sizes():
    model = build_model("hybridsn", 15, 3, 11)
    with pytest.raises(ValueError, match=r"built for patch_size=11"):
        model(torch.randn(2, 15, 9, 9))
