"""The fully-convolutional model: dense output, centre-pixel forward, locality."""

from __future__ import annotations

import pytest
import torch

from hsi.models import FCN, build_model

C, K = 12, 4


@pytest.fixture
def fcn() -> FCN:
    torch.manual_seed(0)
    model = build_model("fcn", C, K, 11, width=16, num_blocks=3)
    # Non-trivial batch-norm statistics, so eval mode is not an identity normalisation.
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model.forward_dense(torch.randn(4, C, 15, 15) * 2 + 1)
    return model.eval()


def test_forward_dense_keeps_any_tile_size(fcn):
    with torch.no_grad():
        assert fcn.forward_dense(torch.randn(1, C, 17, 23)).shape == (1, K, 17, 23)
        assert fcn.forward_dense(torch.randn(2, C, 1, 5)).shape == (2, K, 1, 5)


@pytest.mark.parametrize("patch_size", [1, 5, 7, 11, 21])
def test_forward_is_the_centre_pixel_of_forward_dense(fcn, patch_size):
    x = torch.randn(3, C, patch_size, patch_size)
    with torch.no_grad():
        dense = fcn.forward_dense(x)
        centre = fcn(x)
    assert centre.shape == (3, K)
    c = patch_size // 2
    torch.testing.assert_close(centre, dense[:, :, c, c], rtol=1e-4, atol=1e-5)


def test_dense_output_is_translation_equivariant_on_interior_pixels(fcn):
    r = fcn.receptive_radius
    x = torch.randn(1, C, 17, 23)
    dy, dx = 2, 5
    with torch.no_grad():
        full = fcn.forward_dense(x)
        shifted = fcn.forward_dense(x[:, :, dy:, dx:])  # the same scene, moved up-left
    # Pixels at least r from every edge of both tiles see no padding in either.
    a = full[:, :, dy + r : 17 - r, dx + r : 23 - r]
    b = shifted[:, :, r : 17 - dy - r, r : 23 - dx - r]
    assert a.numel() > 0
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # ...while edge pixels do see the zero padding (the check above is not vacuous).
    assert not torch.allclose(full[:, :, dy, dx], shifted[:, :, 0, 0], atol=1e-4)


def test_a_pixel_influences_only_its_receptive_field(fcn):
    r = fcn.receptive_radius
    x = torch.randn(1, C, 17, 23)
    i, j = 8, 11
    y = x.clone()
    y[:, :, i, j] += 5.0
    with torch.no_grad():
        changed = (fcn.forward_dense(x) - fcn.forward_dense(y)).abs().amax(dim=(0, 1)) > 1e-6
    rows, cols = torch.meshgrid(torch.arange(17), torch.arange(23), indexing="ij")
    inside = ((rows - i).abs() <= r) & ((cols - j).abs() <= r)
    assert not changed[~inside].any()
    assert changed[i, j]
    assert changed[inside].float().mean() > 0.5


def test_receptive_radius_follows_num_blocks():
    assert build_model("fcn", C, K, 5, num_blocks=0).receptive_radius == 0
    assert build_model("fcn", C, K, 5, num_blocks=5).receptive_radius == 5


def test_only_fcn_is_dense():
    assert FCN.dense is True
    for name in ["spectral1d", "cnn3d", "hybridsn", "cnn2d"]:
        model = build_model(name, 30, K, 11)
        assert model.dense is False
        assert not hasattr(model, "forward_dense")
