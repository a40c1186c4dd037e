"""Plots of scenes and splits, drawn on bare ``matplotlib.figure.Figure`` objects.

No pyplot: figures carry no global state, work without a display, and are saved with
the Agg renderer (``Figure.savefig``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hsi.preprocess.split import Split

__all__ = ["SPLIT_COLORS", "plot_split", "split_rgb"]

#: RGB (0-255) of each category in :func:`plot_split`.
SPLIT_COLORS: dict[str, tuple[int, int, int]] = {
    "unlabeled": (255, 255, 255),
    "train": (31, 119, 180),
    "val": (255, 160, 0),
    "test": (214, 39, 40),
    "buffer": (150, 150, 150),
}


def split_rgb(split: Split) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 image of a split in :data:`SPLIT_COLORS`."""
    rgb = np.empty((*split.shape, 3), dtype=np.uint8)
    rgb[:] = SPLIT_COLORS["unlabeled"]
    for name in ("buffer", "val", "test", "train"):
        rgb[getattr(split, name)] = SPLIT_COLORS[name]
    return rgb


def _label_rgb(labels: np.ndarray) -> np.ndarray:
    from matplotlib import colormaps

    k = max(int(labels.max()), 1)
    cmap = colormaps["tab20"]
    table = np.zeros((k + 1, 3), dtype=np.uint8)
    for i in range(1, k + 1):
        table[i] = np.round(np.asarray(cmap((i - 1) % 20)[:3]) * 255)
    return table[np.clip(labels, 0, k)]


def plot_split(split: Split, labels: Any | None = None, path: str | Path | None = None,
               title: str | None = None) -> Figure:
    """Draw a split over the scene: train / val / test / buffer / unlabeled, with a legend.

    Parameters
    ----------
    split : Split
    labels : (H, W) int, optional
        When given, the class map is drawn in a second panel beside the split.
    path : str or Path, optional
        Save the figure there as PNG.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    h, w = split.shape
    panels = 1 if labels is None else 2
    aspect = w / max(h, 1)
    height = 6.0
    fig = Figure(figsize=(min(18.0, panels * height * aspect + 2.5), height), dpi=100)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if labels is not None:
        lab = np.asarray(labels)
        if lab.shape != split.shape:
            from hsi.errors import ShapeMismatchError

            raise ShapeMismatchError(f"plot_split: labels has shape {lab.shape}, the split "
                                     f"{split.shape}")
        axes[0].imshow(_label_rgb(lab.astype(np.int64)), interpolation="nearest")
        axes[0].set_title("labels")
    ax = axes[-1]
    ax.imshow(split_rgb(split), interpolation="nearest")
    totals = split.counts.totals() if split.counts is not None else {}
    handles = [Patch(facecolor=np.asarray(SPLIT_COLORS[n]) / 255, edgecolor="black",
                     label=f"{n} ({totals[n]})" if n in totals else n)
               for n in ("train", "val", "test", "buffer", "unlabeled")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    method = split.params.get("method", "")
    ax.set_title(title or f"{method} split".strip())
    for a in axes:
        a.set_xticks([])
        a.set_yticks([])
    fig.tight_layout()
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    return fig
