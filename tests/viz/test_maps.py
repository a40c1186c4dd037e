"""Classification map, false colour and confidence images (hsi.viz)."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.io.bands import pick_rgb_bands
from hsi.viz import class_map_rgb, plot_class_map, plot_confidence, plot_false_color, stretch_rgb


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


def _png_pixels(data: bytes) -> np.ndarray:
    import io

    import matplotlib.image as mpimg

    return mpimg.imread(io.BytesIO(data), format="png")


def _tight_savefig(fig) -> np.ndarray:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return _png_pixels(buf.getvalue())


@pytest.mark.parametrize("georef", [False, True])
def test_previews_are_cut_from_one_draw_as_tight_savefig_cuts(tmp_path, georef):
    """The one-draw PNG keeps every drawn pixel, white padding round it, at matplotlib's tight size."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from hsi.io.georef import GeoRef
    from hsi._png import png_of_one_draw

    geo = GeoRef(None, (30.0, 0.0, 500_000.0, 0.0, -30.0, 4_000_000.0)) if georef else None
    rng = np.random.default_rng(0)
    names = [f"class {k}" for k in range(1, 13)]
    palette = rng.integers(0, 200, (13, 3)).astype(np.uint8)
    figures = [plot_class_map(rng.integers(0, 13, (90, 140)), names, palette, georef=geo),
               plot_confidence(rng.random((90, 140)), georef=geo)]
    for fig in figures:
        png = png_of_one_draw(fig)
        assert png is not None
        cut = _png_pixels(png)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        whole = np.asarray(canvas.buffer_rgba())
        ink = lambda image: int(np.count_nonzero((image[..., :3] < (1.0 if image.dtype != np.uint8 else 255)).any(-1)))
        assert ink(cut) == ink(whole) > 0  # nothing drawn was cut away
        border = np.concatenate([cut[:5].reshape(-1, 4), cut[-5:].reshape(-1, 4), cut[:, :5].reshape(-1, 4),
                                 cut[:, -5:].reshape(-1, 4)])
        assert (border[:, :3] == 1.0).all()  # the padding is background
        assert cut.shape[0] < whole.shape[0] or cut.shape[1] < whole.shape[1]  # and it was cut
        reference = _tight_savefig(fig)
        assert abs(cut.shape[0] - reference.shape[0]) <= 2 and abs(cut.shape[1] - reference.shape[1]) <= 2


def test_preview_drawn_outside_its_figure_is_left_to_matplotlib(tmp_path):
    """A legend placed beyond the figure's edge: no cut of the canvas holds it, so savefig grows the canvas."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from hsi._png import png_of_one_draw, save_png

    fig = Figure(figsize=(3, 2), dpi=100)
    ax = fig.subplots()
    ax.imshow(np.zeros((4, 4)))
    ax.legend(handles=[Patch(facecolor="red", label="far away")], loc="upper left", bbox_to_anchor=(2.5, 1.0))
    assert png_of_one_draw(fig) is None
    save_png(fig, tmp_path / "far.png")
    saved = _png_pixels((tmp_path / "far.png").read_bytes())
    assert saved.shape[1] > 300  # wider than the 3-inch figure: the legend is in the PNG
    assert saved.shape == _tight_savefig(fig).shape


def test_legend_counts_and_mean_confidence_are_summed_strip_by_strip(monkeypatch):
    """Over strips of a few rows (a memory-mapped map is never copied whole): the whole map's numbers."""
    from hsi.viz import _class_counts, _nan_mean

    monkeypatch.setattr("hsi.viz._STRIP_PIXELS", 7 * 30)  # 7 rows of 30 a strip: the last strip is short
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, (50, 30)).astype(np.uint8)
    labels[49, 29] = 6  # an id past the table: the counts grow to hold it
    np.testing.assert_array_equal(_class_counts(labels, 4), np.bincount(labels.ravel()))
    np.testing.assert_array_equal(_class_counts(labels[:10], 4), np.bincount(labels[:10].ravel(), minlength=4))
    conf = rng.random((50, 30)).astype(np.float32)
    conf[3, :] = np.nan
    assert _nan_mean(conf) == pytest.approx(float(np.nanmean(conf.astype(np.float64))), rel=1e-12)
    assert np.isnan(_nan_mean(np.full((3, 4), np.nan, np.float32)))


def test_false_colour_preview_of_another_shape_is_refused():
    from hsi.errors import ShapeMismatchError

    with pytest.raises(ShapeMismatchError, match=r"preview of a 1300 x 10 map \(every 3-th pixel\) is \(434, 4, 3\)"):
        plot_false_color(np.zeros((433, 4, 3)), shape=(1300, 10))


# ---------------------------------------------------------------- split.png: unlabeled and class colours
def test_lab_and_delta_e_of_known_colours():
    from hsi.viz import min_delta_e, srgb_to_lab

    np.testing.assert_allclose(srgb_to_lab([255, 255, 255]), [100, 0, 0], atol=0.01)
    np.testing.assert_allclose(srgb_to_lab([0, 0, 0]), [0, 0, 0], atol=1e-9)
    np.testing.assert_allclose(srgb_to_lab([255, 0, 0]), [53.24, 80.09, 67.20], atol=0.05)  # published sRGB red
    assert min_delta_e([[125, 195, 70], [95, 170, 35]]) == pytest.approx(10.1, abs=0.1)  # two scene greens
    assert min_delta_e([[0, 0, 0]]) == float("inf")


def _split_panels(names):
    """The labels and split panels (drawn RGB) of a split of every class of ``names``, and the labels."""
    from hsi.preprocess import block_split
    from hsi.viz import plot_split

    labels = np.repeat(np.arange(len(names) + 1), 4)[None, :].repeat(48, axis=0)  # a stripe per class, 0 first
    labels[::7] = 0
    fig = plot_split(block_split(labels, 8, buffer=0, seed=0), labels=labels, class_names=names)
    return [np.asarray(ax.images[0].get_array())[..., :3].astype(int) for ax in fig.axes[:2]], labels


SCENE_NAMES = {"indian_pines": [
    "Alfalfa", "Corn-notill", "Corn-mintill", "Corn", "Grass-pasture", "Grass-trees", "Grass-pasture-mowed",
    "Hay-windrowed", "Oats", "Soybean-notill", "Soybean-mintill", "Soybean-clean", "Wheat", "Woods",
    "Buildings-Grass-Trees-Drives", "Stone-Steel-Towers"],
    "salinas": ["Brocoli_green_weeds_1", "Brocoli_green_weeds_2", "Fallow", "Fallow_rough_plow", "Fallow_smooth",
                "Stubble", "Celery", "Grapes_untrained", "Soil_vinyard_develop", "Corn_senesced_green_weeds",
                "Lettuce_romaine_4wk", "Lettuce_romaine_5wk", "Lettuce_romaine_6wk", "Lettuce_romaine_7wk",
                "Vinyard_untrained", "Vinyard_vertical_trellis"],
    "materials": ["Water", "Snow", "Shadow", "Trees", "Grass", "Meadow", "Pasture", "Crop", "Shrub"]}


@pytest.mark.parametrize("scene", sorted(SCENE_NAMES))
def test_split_panels_share_the_unlabeled_colour_and_use_distinct_colours(scene):
    from hsi.viz import SPLIT_MIN_DELTA_E, min_delta_e

    (labels_panel, split_panel), labels = _split_panels(SCENE_NAMES[scene])
    unlabeled = labels == 0
    assert len({tuple(c) for c in labels_panel[unlabeled]}) == 1
    assert {tuple(c) for c in labels_panel[unlabeled]} == {tuple(c) for c in split_panel[unlabeled]}
    assert SPLIT_MIN_DELTA_E >= 15
    for panel in (labels_panel, split_panel):
        used = np.unique(panel.reshape(-1, 3), axis=0)
        assert min_delta_e(used) >= SPLIT_MIN_DELTA_E, scene
    assert len(np.unique(labels_panel.reshape(-1, 3), axis=0)) == len(SCENE_NAMES[scene]) + 1  # one per class


def test_distinct_scene_colours_are_kept_and_close_ones_stay_near_their_hue():
    from hsi.scenes import scene_palette
    from hsi.viz import SPLIT_COLORS, distinguishable_palette, srgb_to_lab

    names = SCENE_NAMES["indian_pines"]
    original = scene_palette(names)
    adjusted = distinguishable_palette(original)
    assert tuple(adjusted[0]) == SPLIT_COLORS["unlabeled"]
    changed = [names[k - 1] for k in range(1, len(original)) if tuple(original[k]) != tuple(adjusted[k])]
    assert changed == ["Grass-pasture-mowed"]  # 10 Delta E from Grass-pasture; every other colour as in map.png
    hue = np.degrees(np.arctan2(*srgb_to_lab(adjusted[names.index("Grass-pasture-mowed") + 1])[[2, 1]]))
    assert 90 < hue < 180  # still a green (CIELAB hue angle)
