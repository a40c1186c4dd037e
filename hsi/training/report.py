"""Artefacts of a training run: metrics.json, predictions, figures, the summary table; ``hsi evaluate``'s per_class.png.

Figures are drawn on ``matplotlib.figure.Figure`` objects directly (no pyplot state),
so they work headless and in worker processes.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from hsi._atomic import write_bytes_atomic
from hsi.training.progress import epoch_number


def save_figure_atomic(fig: Figure, path: str | Path, dpi: int = 120) -> None:
    """Render ``fig`` as PNG and put it at ``path`` atomically."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    write_bytes_atomic(path, buffer.getvalue())


def write_npz_atomic(path: str | Path, **arrays: np.ndarray) -> None:
    """``numpy.savez_compressed`` into ``path`` atomically."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    write_bytes_atomic(path, buffer.getvalue())


#: how ``predictions.npz`` numbers classes, stored in it as ``label_convention``: as the class maps do
LABEL_CONVENTION = "class ids 1..K as in the class maps (labels.tif), 0 = unlabelled; probs[:, k - 1] is class k"


def prediction_arrays(class_names: list[str] | None = None, **zero_based: np.ndarray) -> dict[str, np.ndarray]:
    """The class-id arrays of a ``predictions.npz``, numbered as the maps number them, with the convention.

    Parameters
    ----------
    class_names : list of str, optional
        Stored as ``class_names`` (``class_names[k - 1]`` is class ``k``).
    **zero_based : ndarray (N,)
        Classes ``0..K-1`` as the network counts them (``-1`` unlabelled), by key
        (``y_true``, ``y_pred``, ``labels``).

    Returns
    -------
    dict
        Each array as ``int64`` ids ``1..K`` (0 unlabelled), ``label_convention``
        (:data:`LABEL_CONVENTION`) and, when given, ``class_names``.
    """
    arrays: dict[str, np.ndarray] = {key: np.asarray(ids, dtype=np.int64) + 1 for key, ids in zero_based.items()}
    arrays["label_convention"] = np.array(LABEL_CONVENTION)
    if class_names is not None:
        arrays["class_names"] = np.array([str(n) for n in class_names])
    return arrays


def plot_confusion(confusion: np.ndarray, class_names: list[str], path: str | Path, title: str = "") -> Figure:
    """Row-normalized confusion matrix (recall per true class) with raw counts annotated."""
    cm = np.asarray(confusion, dtype=np.float64)
    rows = cm.sum(axis=1, keepdims=True)
    norm = np.divide(cm, rows, out=np.zeros_like(cm), where=rows > 0)
    k = len(class_names)
    size = max(5.0, 0.45 * k + 2.5)
    fig = Figure(figsize=(size + 1.0, size))
    ax = fig.add_subplot()
    im = ax.imshow(norm, cmap="Blues", vmin=0.0, vmax=1.0)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="fraction of true class")
    ax.set_xticks(range(k), class_names, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(k), class_names, fontsize=8)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    for i in np.flatnonzero(rows[:, 0] == 0):  # no test pixel: not 0 %, just unknown
        ax.add_patch(Rectangle((-0.5, i - 0.5), k, 1, facecolor="0.85", edgecolor="none", hatch="//"))
        ax.text((k - 1) / 2, i, "no test pixels", ha="center", va="center", fontsize=7, color="0.2")
    if k <= 20:
        for i in range(k):
            for j in range(k):
                if cm[i, j]:
                    colour = "white" if norm[i, j] > 0.5 else "black"
                    ax.text(j, i, f"{int(cm[i, j])}", ha="center", va="center", fontsize=6, color=colour)
    ax.set_title(title or "Test confusion matrix")
    fig.tight_layout()
    save_figure_atomic(fig, path)
    return fig


def plot_per_class(board: dict[str, Any], path: str | Path) -> Figure:
    """``per_class.png`` of ``hsi evaluate``: grouped bars of each class's mean accuracy per model, std as error bars.

    Parameters
    ----------
    board : dict
        The leaderboard (:func:`hsi.evaluate.leaderboard.leaderboard`): ``class_names``, ``scene``,
        ``n_folds`` and ``rows``, each with ``model``, ``per_class`` and ``per_class_std``
        (class name -> value or None).
    path : str or Path
        Where the PNG goes (atomically).

    Returns
    -------
    matplotlib.figure.Figure
        The legend lies to the right of the axes, so it never covers a bar.
    """
    names, rows = board["class_names"], board["rows"]
    x = np.arange(len(names))
    width = 0.8 / len(rows)
    fig = Figure(figsize=(max(6.0, 0.6 * len(names) * len(rows) ** 0.5 + 2) + 2.0, 4), layout="constrained")
    ax = fig.add_subplot()
    for i, row in enumerate(rows):
        means = [100 * (row["per_class"][n] or 0.0) for n in names]
        stds = [100 * (row["per_class_std"][n] or 0.0) for n in names]
        ax.bar(x + (i - (len(rows) - 1) / 2) * width, means, width, yerr=stds, capsize=2, label=row["model"])
    ax.set_xticks(x, names, rotation=45 if len(names) > 6 else 0, ha="right" if len(names) > 6 else "center")
    ax.set_ylabel("accuracy % (mean ± std over fold runs)")
    ax.set_ylim(0, 105)
    ax.set_title(f"{board['scene']}: {board['n_folds']}-fold spatial cross-validation")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, title="model")
    save_figure_atomic(fig, path)
    return fig


def read_epoch_history(log_dir: str | Path) -> dict[int, dict[str, float]]:
    """Per-epoch metrics from Lightning ``CSVLogger`` files under ``log_dir`` (all versions, in order).

    The keys are epoch numbers from 1 (the logs' 0-based ``epoch`` through
    :func:`~hsi.training.progress.epoch_number`), as the console and ``metrics.json`` number them.
    """
    history: dict[int, dict[str, float]] = {}
    files = sorted(Path(log_dir).glob("**/metrics.csv"), key=lambda p: p.stat().st_mtime)
    for file in files:
        with open(file, newline="") as fh:
            for row in csv.DictReader(fh):
                if not row.get("epoch"):
                    continue
                epoch = epoch_number(int(float(row["epoch"])))
                entry = history.setdefault(epoch, {})
                for key, value in row.items():
                    if key not in ("epoch", "step") and value not in ("", None):
                        entry[key] = float(value)
    return dict(sorted(history.items()))


def plot_curves(history: dict[int, dict[str, float]], path: str | Path, best_epoch: int | None = None) -> Figure:
    """Loss (train and val) and validation OA / AA / kappa against the epoch; the chosen epoch marked.

    ``history`` is keyed by epoch number from 1 (:func:`read_epoch_history`), and
    ``best_epoch`` is numbered alike (``metrics.json``'s ``best_epoch``).
    """
    fig = Figure(figsize=(10, 4))
    ax_loss, ax_acc = fig.subplots(1, 2)
    epochs = sorted(history)
    for key, style in (("train_loss", "-o"), ("val_loss", "-s")):
        xs = [e for e in epochs if key in history[e]]
        ax_loss.plot(xs, [history[e][key] for e in xs], style, label=key, markersize=3)
    for key in ("train_acc", "val_oa", "val_aa", "val_kappa"):
        xs = [e for e in epochs if key in history[e]]
        ax_acc.plot(xs, [history[e][key] for e in xs], "-o", label=key, markersize=3)
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy / kappa")
    ax_acc.set_ylim(0.0, 1.0)
    if best_epoch is not None:
        for ax in (ax_loss, ax_acc):
            ax.axvline(best_epoch, color="0.4", linestyle="--", linewidth=1, label=f"best epoch ({best_epoch})")
    for ax in (ax_loss, ax_acc):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure_atomic(fig, path)
    return fig


def format_summary(metrics: dict[str, Any]) -> str:
    """The end-of-run table: per-class accuracy with support, then OA / AA / kappa (n/a, and why, when no test
    pixel could be scored)."""
    names = metrics["class_names"]
    per_class = metrics["per_class"]
    support = metrics["support"]
    width = max([len("class")] + [len(n) for n in names])
    lines = [f"{'class':<{width}}  {'test px':>8}  {'accuracy':>8}", "-" * (width + 20)]
    for name in names:
        acc = per_class.get(name)
        acc_txt = "   n/a" if acc is None else f"{100 * acc:7.2f}%"
        lines.append(f"{name:<{width}}  {support[name]:>8d}  {acc_txt:>8}")
    lines.append("-" * (width + 20))
    for key, label in (("oa", "OA"), ("aa", "AA")):
        value = metrics[key]
        lines.append(f"{label:<{width}}  {'':>8}  " + ("     n/a" if value is None else f"{100 * value:7.2f}%"))
    kappa = metrics["kappa"]
    lines.append(f"{'kappa':<{width}}  {'':>8}  " + ("     n/a" if kappa is None else f"{kappa:8.4f}"))
    if metrics.get("oa_reason"):
        lines.append(f"OA, AA and kappa: n/a, {metrics['oa_reason']}")
    return "\n".join(lines)
