"""Map coordinates on the PNG maps: easting/northing ticks and the CRS name (hsi.viz, issue 20)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hsi.io.georef import GeoRef
from hsi.viz import MAX_DRAWN_COLS, plot_class_map, plot_confidence, plot_false_color

CRS = pytest.importorskip("rasterio.crs").CRS
PALETTE = np.array([[0, 0, 0], [200, 0, 0], [0, 200, 0]], dtype=np.uint8)
A, C, E, F = 1.0, 612730.91, -1.0, 4074488.708


def _utm() -> GeoRef:
    return GeoRef(CRS.from_epsg(32610).to_wkt(), (A, 0, C, 0, E, F))


def _ticks(axis) -> tuple[np.ndarray, list[str]]:
    """Tick locations and label texts of a matplotlib axis."""
    return np.asarray(axis.get_ticklocs()), [t.get_text() for t in axis.get_ticklabels()]


def _parse(label: str) -> float:
    return float(label.replace(",", "").rstrip("\N{DEGREE SIGN}"))


def _texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text)]


def _assert_readable(fig) -> None:
    """Rendered tick labels overlap neither each other, nor the other axis' labels (at the shared corner),
    nor the title, and stay inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    boxes = {axis: [(t.get_text(), t.get_window_extent(renderer)) for t in labels if t.get_text()]
             for axis, labels in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels()))}
    for labels in boxes.values():
        for (one, a), (other, b) in itertools.combinations(labels, 2):
            assert not a.overlaps(b), (one, other)
    for (x_text, x_box), (y_text, y_box) in itertools.product(boxes["x"], boxes["y"]):
        assert not x_box.overlaps(y_box), (x_text, y_text)
    title = ax.title.get_window_extent(renderer)
    for text, box in boxes["x"] + boxes["y"]:
        assert not box.overlaps(title), text
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height, text


def test_samson_sized_map_has_easting_northing_ticks_at_map_coordinates():
    h = w = 95
    fig = plot_class_map(np.ones((h, w), int), ["a", "b"], PALETTE, georef=_utm())
    ax = fig.axes[0]
    assert ax.images[0].get_extent() == pytest.approx([C, C + A * w, F + E * h, F])  # pixel corners
    assert ax.get_xlim() == pytest.approx((C, C + A * w)) and ax.get_ylim() == pytest.approx((F + E * h, F))
    for axis, lo, hi in ((ax.xaxis, C, C + A * w), (ax.yaxis, F + E * h, F)):
        locs, labels = _ticks(axis)
        assert 2 <= len(locs) <= 7
        assert np.all((locs >= lo) & (locs <= hi))
        assert np.all(locs == np.round(locs))  # round numbers
        assert [_parse(t) for t in labels] == pytest.approx(locs, abs=1e-6)
        assert all("e" not in t.lower() for t in labels) and all("," in t for t in labels)
    assert "612,740" in _ticks(ax.xaxis)[1]
    assert ax.get_xlabel() == "Easting (m)" and ax.get_ylabel() == "Northing (m)"
    assert any("WGS 84 / UTM zone 10N" in t for t in _texts(fig))
    _assert_readable(fig)


def test_decimated_map_keeps_pixels_at_their_map_coordinates():
    h, w = 40, 2 * MAX_DRAWN_COLS + 1  # drawn from every 3rd pixel; W is not a multiple of 3
    step = 3
    labels = np.ones((h, w), int)
    marked = 3 * 700  # a column that decimation keeps
    labels[:, marked] = 2
    fig = plot_class_map(labels, ["a", "b"], PALETTE, georef=_utm())
    ax = fig.axes[0]
    image = ax.images[0]
    drawn = np.asarray(image.get_array())
    assert drawn.shape[1] == -(-w // step)
    left, right, bottom, top = image.get_extent()
    assert (left, right) == pytest.approx((C, C + A * step * drawn.shape[1]))  # not C + A * w: that would shift pixels
    assert ax.get_xlim() == pytest.approx((C, C + A * w))  # the axes still end at the map's edge
    x = C + A * (marked + 0.5)  # the marked pixel's centre easting
    col = int((x - left) / (right - left) * drawn.shape[1])
    assert drawn[0, col].tolist() == PALETTE[2].tolist() and drawn[0, col - 1].tolist() == PALETTE[1].tolist()
    locs, texts = _ticks(ax.xaxis)
    assert np.all((locs >= C) & (locs <= C + A * w)) and [_parse(t) for t in texts] == pytest.approx(locs)
    _assert_readable(fig)


@pytest.mark.parametrize("shape", [(40, 1301), (1301, 40), (12, 12)])
def test_tick_labels_do_not_overlap_on_wide_tall_or_tiny_maps(shape):
    fig = plot_class_map(np.ones(shape, int), ["a", "b"], PALETTE, georef=_utm())
    ax = fig.axes[0]
    assert 1 <= len(ax.get_xticks()) <= 7 and 1 <= len(ax.get_yticks()) <= 7
    _assert_readable(fig)


@pytest.mark.parametrize(("transform", "shape"), [
    ((10.0, 0, 500000.0, 0, -10.0, 4000000.0), (100, 100)),  # round numbers at every corner
    ((1.0, 0, 500000.0, 0, -1.0, 4000000.0), (610, 340)),  # Pavia-sized, a tick at the corner of both axes
])
def test_the_corner_tick_labels_of_the_two_axes_do_not_overlap(transform, shape):
    georef = GeoRef(CRS.from_epsg(32633).to_wkt(), transform)
    fig = plot_class_map(np.ones(shape, int), ["a", "b"], PALETTE, georef=georef)
    ax = fig.axes[0]
    assert len(ax.get_xticks()) >= 1 and len(ax.get_yticks()) >= 2
    _assert_readable(fig)


def test_geographic_map_has_degrees():
    geo = GeoRef(CRS.from_epsg(4326).to_wkt(), (0.0001, 0, -122.4567, 0, -0.0001, 37.8123))
    fig = plot_class_map(np.ones((95, 95), int), ["a", "b"], PALETTE, georef=geo)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "Longitude" and ax.get_ylabel() == "Latitude"
    for axis, lo, hi in ((ax.xaxis, -122.4567, -122.4472), (ax.yaxis, 37.8028, 37.8123)):
        locs, labels = _ticks(axis)
        assert len(locs) >= 2 and np.all((locs >= lo - 1e-9) & (locs <= hi + 1e-9))
        assert all(t.endswith("\N{DEGREE SIGN}") for t in labels)
        assert [_parse(t) for t in labels] == pytest.approx(locs, abs=1e-9)  # enough decimals to tell ticks apart
    assert any("WGS 84" in t for t in _texts(fig))
    _assert_readable(fig)


def test_confidence_and_false_colour_get_map_coordinates_too():
    rng = np.random.default_rng(0)
    for fig in (plot_confidence(rng.random((30, 50)), georef=_utm()),
                plot_false_color(rng.random((30, 50, 3)), georef=_utm())):
        ax = fig.axes[0]
        assert ax.images[0].get_extent() == pytest.approx([C, C + 50 * A, F + 30 * E, F])
        assert len(ax.get_xticks()) >= 2 and ax.get_xlabel() == "Easting (m)"
        assert any("WGS 84 / UTM zone 10N" in t for t in _texts(fig))


def test_without_georef_maps_have_no_ticks():
    rng = np.random.default_rng(0)
    for fig in (plot_class_map(np.ones((95, 95), int), ["a", "b"], PALETTE),
                plot_confidence(rng.random((30, 50))), plot_false_color(rng.random((30, 50, 3)))):
        ax = fig.axes[0]
        assert len(ax.get_xticks()) == 0 and len(ax.get_yticks()) == 0
        assert ax.get_xlabel() == "" and ax.get_ylabel() == "" and "\n" not in ax.get_title()
        assert ax.images[0].get_extent() == pytest.approx([-0.5, ax.images[0].get_array().shape[1] - 0.5,
                                                           ax.images[0].get_array().shape[0] - 0.5, -0.5])
