"""Palette, label remapping, abundance -> labels (column-major) and the Scene checks."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import CubeFormatError, ShapeMismatchError
from hsi.scenes import Scene, abundance_labels, make_palette, remap_labels
from hsi.scenes.labels import abundance_maps


@pytest.mark.parametrize("k", [1, 6, 16, 20, 45])
def test_palette_shape_black_background_distinct_colours(k):
    pal = make_palette(k)
    assert pal.shape == (k + 1, 3) and pal.dtype == np.uint8
    assert tuple(pal[0]) == (0, 0, 0)
    assert len({tuple(row) for row in pal}) == k + 1
    assert (pal[1:].astype(int).sum(axis=1) > 60).all()  # no class is (near) black


def test_palette_is_fixed():
    expected = [[0, 0, 0], [0x1F, 0x77, 0xB4], [0xFF, 0x7F, 0x0E], [0x2C, 0xA0, 0x2C]]
    np.testing.assert_array_equal(make_palette(3), expected)


def test_remap_salinas_a_ids_to_contiguous():
    lab = np.array([[0, 1, 10], [14, 12, 11], [13, 0, 1]])
    out, values = remap_labels(lab, (1, 10, 11, 12, 13, 14))
    np.testing.assert_array_equal(out, [[0, 1, 2], [6, 4, 3], [5, 0, 1]])
    assert values == [1, 10, 11, 12, 13, 14] and out.dtype == np.int64


def test_remap_infers_ids_and_keeps_contiguous_maps():
    out, values = remap_labels(np.array([[0, 7], [3, 7]]))
    np.testing.assert_array_equal(out, [[0, 2], [1, 2]])
    assert values == [3, 7]
    same = np.array([[0, 1], [2, 2]])
    out, values = remap_labels(same, (1, 2, 3))
    np.testing.assert_array_equal(out, same)
    assert values == [1, 2, 3]


def test_remap_rejects_unexpected_ids():
    with pytest.raises(CubeFormatError, match=r"\[5\]"):
        remap_labels(np.array([[1, 5]]), (1, 2), source="x_gt.mat")


def test_abundance_labels_use_matlab_column_major_order():
    h, w = 2, 3
    a = np.zeros((2, h * w))
    a[0] = 1.0
    a[:, 1] = (0.0, 1.0)  # pixel 1 = row 1, column 0
    a[:, 4] = (0.3, 0.7)  # pixel 4 = row 0, column 2
    a[:, 5] = (0.55, 0.45)  # pixel 5 = row 1, column 2
    lab = abundance_labels(a, (h, w), purity=0.6)
    np.testing.assert_array_equal(lab, [[1, 1, 2], [2, 1, 0]])
    np.testing.assert_array_equal(abundance_labels(a, (h, w), purity=0.0), [[1, 1, 2], [2, 1, 1]])
    maps = abundance_maps(a, (h, w))
    np.testing.assert_array_equal(maps[..., 1], a[1].reshape(h, w, order="F"))


def test_abundance_shape_mismatch_and_bad_purity():
    with pytest.raises(ShapeMismatchError, match="6 columns|H\\*W"):
        abundance_labels(np.ones((2, 6)), (4, 4))
    with pytest.raises(ValueError, match="purity"):
        abundance_labels(np.ones((1, 4)), (2, 2), purity=1.5)


def _cube(h, w, c=3):
    from hsi.io import Cube

    return Cube(data=np.zeros((h, w, c), np.float32), wavelengths=None, meta={})


def test_scene_checks_labels_against_cube_and_palette():
    s = Scene("t", _cube(2, 3), np.ones((2, 3), np.uint8), ["a"], make_palette(1))
    assert s.labels.dtype == np.int64 and s.num_classes == 1 and s.shape == (2, 3, 3)
    with pytest.raises(ShapeMismatchError, match=r"\(3, 2\).*\(2, 3\)"):
        Scene("t", _cube(2, 3), np.ones((3, 2), int), ["a"], make_palette(1))
    with pytest.raises(ValueError, match="0..1"):
        Scene("t", _cube(2, 3), np.full((2, 3), 2), ["a"], make_palette(1))
    with pytest.raises(ShapeMismatchError, match="palette"):
        Scene("t", _cube(2, 3), np.ones((2, 3), int), ["a"], make_palette(2))
