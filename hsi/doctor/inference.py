"""Check 5: a tiled, blended whole-scene prediction equals the untiled one on a crop (no seams).

A network (fresh and seeded: agreement does not need training) with the DataModule's
fitted pipeline classifies a crop of the scene twice through :func:`hsi.infer.infer_scene`:
once as a single tile, once in small overlapping tiles blended together. Any difference
(an offset in the stitching, a halo too small, a blending weight that does not sum to
one) fails, and the map of differences shows where the seams are.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hsi.doctor.overfit import ModelFactory, default_model_factory
from hsi.doctor.result import CheckResult, save_figure

__all__ = ["Predictor", "check_inference", "predict_with_hsi_infer"]

#: ``predict(model, cube, tile, overlap) -> (labels (H, W), confidence (H, W))``
Predictor = Callable[[Any, Any, int, int], tuple[np.ndarray, np.ndarray]]

#: largest difference of the confidence maps that is float rounding, not a seam
CONFIDENCE_TOLERANCE = 1e-4


def predict_with_hsi_infer(model: Any, cube: Any, tile: int, overlap: int) -> tuple[np.ndarray, np.ndarray]:
    """Class and confidence maps of ``cube`` from :func:`hsi.infer.infer_scene` with these tiles.

    Parameters
    ----------
    model : hsi.infer.InferenceModel
        The network with its pipeline.
    cube : hsi.io.Cube
        The scene (raw values; the model's pipeline is applied per window).
    tile : int
        Tile side in pixels.
    overlap : int
        Overlap of neighbouring tiles in pixels.

    Returns
    -------
    tuple of ndarray
        ``(labels (H, W), confidence (H, W) float32)``.
    """
    from hsi.infer import infer_scene

    result = infer_scene(model, cube, tile=tile, overlap=overlap, blend="gaussian", accelerator="cpu", progress=False)
    return np.asarray(result.labels), np.asarray(result.confidence, dtype=np.float32)


def _inference_model(datamodule: Any, net: torch.nn.Module, n_bands_in: int, wavelengths: Any) -> Any:
    from hsi.infer import InferenceModel

    return InferenceModel(net=net.eval(), pipeline=datamodule.pipeline, patch_size=int(datamodule.patch_size),
                          padding=str(datamodule.padding), class_names=list(datamodule.class_names),
                          palette=np.asarray(datamodule.palette), label_values=list(datamodule.label_values),
                          wavelengths=wavelengths, num_bands_in=n_bands_in, scene_name=datamodule.scene_name,
                          source="hsi doctor")


def check_inference(datamodule: Any, model_factory: ModelFactory | None = None, out: str | Path | None = None, *,
                    crop: int = 48, tile: int = 20, overlap: int = 6, seed: int = 0,
                    predict: Predictor | None = None) -> CheckResult:
    """Compare tiled and untiled prediction on the top-left ``crop x crop`` pixels of the scene.

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit``.
    model_factory : ModelFactory, optional
        Builds the network; default ``cnn2d`` (use a dense model such as ``fcn`` to test
        its tile path).
    out : str or Path, optional
        Folder of ``inference.png`` (both maps and their difference).
    crop : int
        Side of the crop compared (clipped to the scene).
    tile : int
        Tile side of the tiled run (the untiled run uses one tile for the whole crop).
    overlap : int
        Overlap of the tiled run's tiles.
    seed : int
        Seed of the network's initial weights.
    predict : Predictor, optional
        The whole-scene predictor to test; default :func:`predict_with_hsi_infer`.

    Returns
    -------
    CheckResult
    """
    from hsi.data.scene_source import load_source
    from hsi.io import Cube

    predict = predict or predict_with_hsi_infer
    src = load_source(datamodule.source)
    h, w = min(crop, src.cube.shape[0]), min(crop, src.cube.shape[1])
    cube = Cube(np.ascontiguousarray(src.cube[:h, :w]), src.wavelengths, {"source": "doctor crop"})
    torch.manual_seed(seed)
    net = (model_factory or default_model_factory())(int(datamodule.num_bands), int(datamodule.num_classes),
                                                     int(datamodule.patch_size))
    model = _inference_model(datamodule, net, int(src.cube.shape[2]), src.wavelengths)
    with torch.no_grad():
        whole_labels, whole_conf = predict(model, cube, max(h, w), 0)
        tiled_labels, tiled_conf = predict(model, cube, min(tile, max(h, w)), overlap)
    diff = np.abs(whole_conf.astype(np.float64) - tiled_conf)
    changed = whole_labels != tiled_labels
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    evidence = [f"crop {h} x {w} of {src.name!r}: one tile vs tiles of {tile} px with {overlap} px overlap",
                f"largest confidence difference {float(diff.max()):.3g} at (row, col) {tuple(int(v) for v in worst)}; "
                f"{int(changed.sum())} of {changed.size} pixels change class"]
    problems = []
    if float(diff.max()) > CONFIDENCE_TOLERANCE or changed.any():
        seam = diff > CONFIDENCE_TOLERANCE
        rows, cols = np.flatnonzero(seam.any(axis=1)), np.flatnonzero(seam.any(axis=0))
        problems.append(f"tiled and untiled predictions differ (beyond {CONFIDENCE_TOLERANCE:g}) in {int(seam.sum())} "
                        f"pixels, rows {_ranges(rows)}, cols {_ranges(cols)}: a seam or stitching offset")
    png = save_figure(_figure(whole_labels, tiled_labels, diff, datamodule.palette), out, "inference")
    return CheckResult("inference", not problems, evidence + problems, png,
                       {"max_difference": float(diff.max()), "changed_pixels": int(changed.sum())})


def _ranges(index: np.ndarray, limit: int = 4) -> str:
    """``"0-3, 17, 20-25"`` for sorted integers."""
    if not index.size:
        return "none"
    runs, start = [], index[0]
    for a, b in zip(index[:-1], index[1:]):
        if b != a + 1:
            runs.append((start, a))
            start = b
    runs.append((start, index[-1]))
    text = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:limit]]
    return ", ".join(text) + (", ..." if len(runs) > limit else "")


def _figure(whole: np.ndarray, tiled: np.ndarray, diff: np.ndarray, palette: Any):
    from matplotlib.figure import Figure

    from hsi.viz import class_map_rgb

    fig = Figure(figsize=(10, 3.5), dpi=100)
    axes = fig.subplots(1, 3)
    for ax, image, title in ((axes[0], whole, "one tile"), (axes[1], tiled, "tiled, blended")):
        ax.imshow(class_map_rgb(image, palette), interpolation="nearest")  # the scene's colours, as in map.png
        ax.set_title(title, fontsize=9)
    shown = axes[2].imshow(diff, cmap="magma", interpolation="nearest")
    axes[2].set_title("|confidence difference|", fontsize=9)
    fig.colorbar(shown, ax=axes[2], fraction=0.046)
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return fig
