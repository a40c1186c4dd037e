"""hsi.viz.plot_split draws and saves the split map."""

from __future__ import annotations

import numpy as np

from hsi.preprocess import block_split
from hsi.viz import SPLIT_COLORS, plot_split, split_rgb


def _has_colour(img: np.ndarray, rgb: tuple[int, int, int]) -> bool:
    px = np.round(img[..., :3] * 255).astype(int).reshape(-1, 3)
    return bool((np.abs(px - np.asarray(rgb)).max(1) <= 1).sum() > 1000)  # map, not legend


def test_plot_split_writes_png_with_split_colours(parcels, tmp_path):
    import matplotlib.image as mpimg
    from matplotlib.figure import Figure

    sp = block_split(parcels, 16, buffer=3, seed=0)
    path = tmp_path / "figs" / "split.png"
    fig = plot_split(sp, labels=parcels, path=path, title="parcels")
    assert isinstance(fig, Figure)
    assert path.is_file() and path.stat().st_size > 1000
    img = mpimg.imread(path)
    for name in ("train", "val", "test", "buffer"):
        assert _has_colour(img, SPLIT_COLORS[name]), name
    legend = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert legend[0] == f"train ({int(sp.train.sum())})"


def test_split_rgb_colours_each_mask(parcels):
    sp = block_split(parcels, 16, buffer=3, seed=0)
    rgb = split_rgb(sp)
    for name in ("train", "val", "test", "buffer"):
        assert (rgb[getattr(sp, name)] == SPLIT_COLORS[name]).all()
    assert (rgb[parcels == 0] == SPLIT_COLORS["unlabeled"]).all()
