from __future__ import annotations

import pytest
import torch

from hsi.data import collate_patches, fit_spatial


def _patch(c, h, w, start=0.0):
    return torch.arange(c * h * w, dtype=torch.float32).reshape(c, h, w) + start


def test_mixed_sizes_are_padded_or_cropped_without_interpolation():
    a, b, c = _patch(3, 5, 5), _patch(3, 7, 7, 1000), _patch(3, 3, 3, 2000)
    batch = [(a, 0, (1, 2)), (b, 1, (3, 4)), (c, 2, (5, 6))]
    x, y, coords = collate_patches(batch, target_size=5, with_coords=True)
    assert x.shape == (3, 3, 5, 5) and y.tolist() == [0, 1, 2] and coords.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert torch.equal(x[0], a)  # already the target size
    assert torch.equal(x[1], b[:, 1:6, 1:6])  # centre crop
    assert torch.equal(x[2, :, 1:4, 1:4], c)  # zero padding around the original
    assert x[2, :, 0].abs().sum() == 0
    for i, p in enumerate((a, b, c)):  # the centre pixel spectrum is preserved exactly
        assert torch.equal(x[i, :, 2, 2], p[:, p.shape[1] // 2, p.shape[2] // 2])


def test_default_target_is_the_largest_and_reflect_padding():
    a, b = _patch(2, 3, 3), _patch(2, 5, 5)
    x, _ = collate_patches([(a, 0), (b, 1)], pad_mode="reflect")
    assert x.shape == (2, 2, 5, 5)
    assert torch.equal(x[0, :, 1:4, 1:4], a)
    assert torch.equal(x[0, :, 0, 1:4], a[:, 1, :])  # reflected row
    values = set(x[0].unique().tolist())
    assert values <= set(a.unique().tolist())  # no new (interpolated) values


def test_non_square_target_and_errors():
    assert fit_spatial(_patch(1, 4, 6), (6, 4)).shape == (1, 6, 4)
    with pytest.raises(ValueError, match="coords"):
        collate_patches([(_patch(1, 3, 3), 0)], with_coords=True)
    with pytest.raises(ValueError, match="pad_mode"):
        fit_spatial(_patch(1, 3, 3), 5, "mirror")
