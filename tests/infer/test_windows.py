"""Tile grids, weight windows and padded reads (no model)."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.infer.sources import ArraySource, read_padded_block
from hsi.infer.windows import TileGrid, padded_index, tile_starts, weight_window


@pytest.mark.parametrize(("n", "tile", "overlap"), [(30, 8, 3), (36, 16, 4), (7, 16, 2), (10, 5, 0), (11, 4, 3)])
def test_tiles_cover_the_axis_and_end_at_its_edge(n, tile, overlap):
    starts = tile_starts(n, tile, overlap)
    t = min(tile, n)
    covered = np.zeros(n, dtype=int)
    for s in starts:
        covered[s : s + t] += 1
    assert covered.min() >= 1 and starts[0] == 0 and starts[-1] == n - t
    assert all(b - a <= t - overlap for a, b in zip(starts, starts[1:]))  # overlap at least as asked


def test_tile_rows_of_shards_own_disjoint_rows_covering_the_scene():
    grid = TileGrid.build(37, 20, 8, 3)
    n = len(grid.row_starts)
    for world in (2, 3):
        cuts = np.array_split(np.arange(n), world)
        spans = [grid.owned_rows(int(c[0]), int(c[-1]) + 1) for c in cuts]
        assert spans[0][0] == 0 and spans[-1][1] == 37
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("blend", ["gaussian", "hann", "mean"])
def test_weight_windows_are_positive_symmetric_and_peak_at_one(blend):
    w = weight_window(9, 12, blend)
    assert w.shape == (9, 12) and w.min() > 0 and np.isclose(w.max(), 1.0)
    assert np.allclose(w, w[::-1, ::-1])
    if blend != "mean":
        assert w[4, 5] > w[0, 0]  # the centre counts more than the corner


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge", "wrap", "zeros"])
def test_padded_block_equals_the_same_window_of_the_padded_cube(mode):
    rng = np.random.default_rng(0)
    cube = rng.random((9, 7, 3), dtype=np.float32)
    halo = 3
    padded = np.pad(cube, ((halo, halo), (halo, halo), (0, 0)), mode="constant" if mode == "zeros" else mode)
    for rows in [(0, 9), (2, 5), (6, 9)]:
        for cols in [(0, 7), (0, 3), (4, 7)]:
            block, outside = read_padded_block(ArraySource(cube), rows, cols, halo, mode)
            if outside is not None:
                block[outside] = 0.0
            np.testing.assert_array_equal(block, padded[rows[0] : rows[1] + 2 * halo, cols[0] : cols[1] + 2 * halo])


def test_padded_index_matches_numpy_pad_for_wide_margins():
    a = np.arange(5)
    for mode in ("symmetric", "edge", "wrap"):
        np.testing.assert_array_equal(a[padded_index(-12, 17, 5, mode)], np.pad(a, 12, mode=mode))


def test_the_gather_and_inference_import_without_lightning():
    # whole-scene inference of patch-centre models needs the gather, not the DataModule:
    # importing Lightning with it cost about 2 s on every hsi infer
    import subprocess
    import sys

    code = "import sys, hsi.infer, hsi.data.patches; print('lightning' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    from hsi.data import HSIDataModule  # still importable from the package, on first use
    from hsi.data.datamodule import HSIDataModule as direct

    assert HSIDataModule is direct
