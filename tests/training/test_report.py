"""``per_class.png`` of ``hsi evaluate``: the legend never covers a bar."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from hsi.training.report import plot_per_class


def _board(models: list[str], names: list[str], accuracy: float) -> dict:
    rows = [{"model": m, "per_class": {n: accuracy for n in names}, "per_class_std": {n: 0.02 for n in names}}
            for m in models]
    return {"class_names": names, "rows": rows, "scene": "synthetic", "n_folds": 3}


@pytest.mark.parametrize(("models", "names"), [
    (["cnn2d", "svm"], ["water", "trees", "soil"]),
    (["cnn2d", "hybridsn", "spectral1d", "svm", "rf"], [f"class {k}" for k in range(12)]),
])
def test_the_legend_intersects_no_bar(models, names, tmp_path):
    fig = plot_per_class(_board(models, names, 0.97), tmp_path / "per_class.png")  # full-height bars everywhere
    assert (tmp_path / "per_class.png").stat().st_size > 0
    FigureCanvasAgg(fig).draw()  # laid out and drawn, as when it was saved
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [patch.get_window_extent(renderer) for patch in ax.patches]
    assert len(bars) == len(models) * len(names)
    assert not [bar for bar in bars if bar.overlaps(legend)]
    figure = fig.bbox
    assert figure.x0 <= legend.x0 and legend.x1 <= figure.x1 and legend.y1 <= figure.y1  # not cut off either
