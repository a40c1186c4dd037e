from __future__ import annotations

import pytest
import torch

from hsi.data import collate_patches
from hsi.errors import ShapeMismatchError


def _patch(c, h, w, start=0.0):
    return torch.arange(c * h * w, dtype=torch.float32).reshape(c, h, w) + start


def test_items_are_stacked_with_labels_and_coords():
    a, b = _patch(3, 5, 5), _patch(3, 5, 5, 1000)
    x, y, coords = collate_patches([(a, 0, (1, 2)), (b, 1, (3, 4))], with_coords=True)
    assert x.shape == (2, 3, 5, 5) and x.dtype == torch.float32
    assert torch.equal(x[0], a) and torch.equal(x[1], b)
    assert y.tolist() == [0, 1] and y.dtype == torch.int64 and coords.tolist() == [[1, 2], [3, 4]]
    x, y = collate_patches([(a.numpy(), 2)])
    assert torch.equal(x[0], a) and y.tolist() == [2]


def test_bad_batches_are_refused():
    with pytest.raises(ShapeMismatchError, match="coords"):
        collate_patches([(_patch(1, 3, 3), 0)], with_coords=True)
    with pytest.raises(ShapeMismatchError, match="different shapes"):
        collate_patches([(_patch(1, 3, 3), 0), (_patch(1, 5, 5), 1)])
    with pytest.raises(ShapeMismatchError, match="empty"):
        collate_patches([])
