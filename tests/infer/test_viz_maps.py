"""Classification map, false colour and confidence images (hsi.viz)."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.viz import class_map_rgb, pick_rgb_bands, plot_class_map, plot_confidence, plot_false_color, stretch_rgb


def test_class_map_colours_and_dimmed_background():
    palette = np.array([[0, 0, 0], [255, 0, 0], [0, 0, 255]], dtype=np.uint8)
    labels = np.array([[1, 2], [0, 1]])
    bg = np.array([[False, False], [False, True]])
    rgb = class_map_rgb(labels, palette, bg)
    assert rgb[0, 0].tolist() == [255, 0, 0] and rgb[0, 1].tolist() == [0, 0, 255] and rgb[1, 0].tolist() == [0, 0, 0]
    assert rgb[1, 1].tolist() == [191, 64, 64]  # half way to grey: distinct from the same class elsewhere
    with pytest.raises(ValueError, match="0..2"):
        class_map_rgb(np.array([[3]]), palette)


def test_rgb_bands_from_wavelengths_or_indices():
    wl = np.linspace(400, 2500, 200)
    r, g, b = pick_rgb_bands(wl, 200)
    assert abs(wl[r] - 640) < 6 and abs(wl[g] - 550) < 6 and abs(wl[b] - 460) < 6
    assert pick_rgb_bands(None, 101) == [75, 50, 25]
    assert pick_rgb_bands(np.linspace(900, 1700, 11), 11) == [8, 5, 2]  # no visible bands: by index


def test_stretch_ignores_non_finite_values():
    x = np.stack([np.arange(100, dtype=np.float32).reshape(10, 10)] * 3, axis=-1)
    x[0, 0, 0] = np.nan
    out = stretch_rgb(x)
    assert out.dtype == np.uint8 and out[0, 0, 0] == 0 and out[-1, -1, 1] == 255 and out[5, 0, 1] < 150


def test_plots_save_png_images(tmp_path):
    import matplotlib.image as mpimg

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (20, 30))
    plot_class_map(labels, ["a", "b"], [[0, 0, 0], [200, 0, 0], [0, 200, 0]], tmp_path / "m.png",
                   background=labels == 0)
    plot_false_color(rng.random((20, 30, 3)), tmp_path / "f.png")
    plot_confidence(rng.random((20, 30)), tmp_path / "c.png")
    for name in ("m.png", "f.png", "c.png"):
        assert mpimg.imread(tmp_path / name).ndim == 3
    assert not list(tmp_path.glob(".*tmp"))
