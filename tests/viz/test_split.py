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


def _drawn(fig, panel: int = 0) -> np.ndarray:
    """The RGB image a figure panel draws (what Agg renders from)."""
    return np.asarray(fig.axes[panel].images[0].get_array())[..., :3]


def _legend_colours(fig, panel: int = 0) -> dict[str, tuple[int, ...]]:
    legend = fig.axes[panel].get_legend()
    return {t.get_text().rsplit(" (", 1)[0]: tuple(np.round(np.asarray(h.get_facecolor()[:3]) * 255).astype(int))
            for t, h in zip(legend.get_texts(), legend.legend_handles)}


def test_split_labels_panel_and_class_map_share_the_scene_palette():
    from hsi.scenes import load_scene
    from hsi.viz import plot_class_map

    scene = load_scene("synthetic", height=48, width=48, bands=4, n_classes=5, seed=0, parcel_size=8.0)
    sp = block_split(scene.labels, 12, buffer=1, seed=0)
    split_fig = plot_split(sp, labels=scene.labels, class_names=scene.class_names, palette=scene.palette)
    map_fig = plot_class_map(scene.labels, scene.class_names, scene.palette)
    np.testing.assert_array_equal(_drawn(split_fig), _drawn(map_fig))
    np.testing.assert_array_equal(_drawn(split_fig), scene.palette[scene.labels])
    split_legend, map_legend = _legend_colours(split_fig), _legend_colours(map_fig)
    for k, name in enumerate(scene.class_names, start=1):
        assert split_legend[name] == map_legend[name] == tuple(int(v) for v in scene.palette[k]), name
    # without palette=, the same rule (scene_palette of the class names) gives the same colours
    np.testing.assert_array_equal(_drawn(plot_split(sp, labels=scene.labels, class_names=scene.class_names)),
                                  _drawn(split_fig))


def test_split_rendered_with_agg_shows_the_palette_colours(tmp_path):
    import matplotlib.image as mpimg

    from hsi.scenes import scene_palette

    labels = np.zeros((40, 40), dtype=np.int64)
    labels[:20, :20], labels[20:, 20:], labels[:20, 20:] = 1, 2, 3
    names = ["Water", "Tree", "Bare Soil"]
    sp = block_split(labels, 10, buffer=0, seed=0)
    plot_split(sp, labels=labels, class_names=names, palette=scene_palette(names), path=tmp_path / "split.png")
    img = mpimg.imread(tmp_path / "split.png")
    for k in (1, 2, 3):
        assert _has_colour(img, tuple(int(v) for v in scene_palette(names)[k])), names[k - 1]


def test_split_refuses_a_palette_too_short_for_the_labels(parcels):
    import pytest

    from hsi.errors import ShapeMismatchError

    sp = block_split(parcels, 16, buffer=3, seed=0)
    with pytest.raises(ShapeMismatchError, match="palette"):
        plot_split(sp, labels=parcels, palette=np.zeros((2, 3), np.uint8))
