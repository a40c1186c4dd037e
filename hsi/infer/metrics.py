"""Accuracy of a whole-scene map against ground truth: on the checkpoint's test pixels and on every labeled pixel.

Counts are accumulated over bands of rows, so a memory-mapped map is never loaded whole;
the scores are :func:`hsi.training.metrics.scores_from_confusion` (OA, AA, kappa, per class).
:func:`score_map` scores a map against ground truth matched to the checkpoint's classes
(:mod:`hsi.infer.truth`), and :func:`check_not_degenerate` refuses a map of another scene that
is one class where its labels hold several.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from hsi._atomic import null_nonfinite
from hsi.errors import ClassMatchWarning, DegenerateMapError

__all__ = ["check_not_degenerate", "confusion_matrix", "map_metrics", "score_map"]


def confusion_matrix(truth: Any, predicted: Any, num_classes: int, mask: Any | None = None,
                     rows_per_chunk: int = 256) -> np.ndarray:
    """``(K, K)`` int64 counts (rows = true class) over pixels labeled in ``truth`` (and in ``mask``).

    Parameters
    ----------
    truth, predicted : (H, W) int
        Ids ``0..K``; truth 0 (unlabeled) is not counted.
    num_classes : int
    mask : (H, W) bool, optional
        Count only these pixels.
    rows_per_chunk : int
        Rows read at a time.
    """
    k = int(num_classes)
    cm = np.zeros((k, k), dtype=np.int64)
    for start in range(0, np.shape(truth)[0], rows_per_chunk):
        t = np.asarray(truth[start : start + rows_per_chunk], dtype=np.int64)
        p = np.asarray(predicted[start : start + rows_per_chunk], dtype=np.int64)
        keep = t > 0
        if mask is not None:
            keep &= np.asarray(mask[start : start + rows_per_chunk], dtype=bool)
        if not keep.any():
            continue
        t, p = t[keep] - 1, p[keep] - 1
        valid = (p >= 0) & (p < k) & (t < k)  # ids past K (a label map not renumbered) are not counted
        cm += np.bincount(t[valid] * k + p[valid], minlength=k * k).reshape(k, k)
    return cm


def map_metrics(truth: Any, predicted: Any, class_names: list[str], test_mask: Any | None,
                trained: list[str] | None = None) -> dict[str, Any]:
    """Scores of ``predicted`` on the test pixels (when ``test_mask`` is known) and on all labeled pixels.

    ``trained`` (the classes with training pixels; None: all) leaves the pixels of other classes out
    of the scores, as training does (their count is ``unseen_pixels``, and ``unseen_classes`` says
    what each was predicted as). ``class_names`` may go on past the checkpoint's classes with those
    of the label map that the checkpoint does not have (:class:`hsi.infer.truth.MatchedTruth`):
    they are never predicted, and are reported with the unseen ones.

    Returns
    -------
    dict
        ``{"class_names", "test": scores or None, "labeled": scores}``; each scores dict has
        ``oa``, ``aa``, ``kappa``, ``per_class`` and ``support`` (mappings of class name to
        accuracy and to reference pixels, as in training's ``metrics.json``; the accuracy is None
        for a class without reference pixels or, with ``trained``, without training pixels),
        ``confusion`` (K x K, rows in ``class_names`` order), ``pixels`` and ``excluded_nodata``
        (labelled pixels that are no-data, hence unclassified and not scored, the rule training
        applies to its split). With no pixel to score, ``oa``, ``aa`` and ``kappa`` are None, each
        with ``<key>_reason`` saying why.
    """
    from hsi.training.metrics import scores_from_confusion
    from hsi.training.unseen import unseen_report

    k = len(class_names)
    unseen = np.array([trained is not None and name not in trained for name in class_names], dtype=bool)

    def scores(mask: Any | None) -> dict[str, Any]:
        cm = confusion_matrix(truth, predicted, k, mask)
        unseen_pixels = int(cm[unseen].sum())
        report = unseen_report(cm, class_names, unseen)
        cm[unseen] = 0
        out = scores_from_confusion(cm)
        # keyed by class name, as training's metrics.json: None where the class has no scored pixel
        out["per_class"] = dict(zip(class_names, (None if u else v for u, v in zip(unseen, out["per_class"]))))
        out["support"] = dict(zip(class_names, out["support"]))
        if unseen.any():
            out["unseen_pixels"] = unseen_pixels
            out["unseen_classes"] = report
        out["confusion"] = cm.tolist()
        out["pixels"] = int(cm.sum())
        # labelled pixels left unclassified (no-data): out of the scores, as training leaves them out of its split
        out["excluded_nodata"] = _count_unclassified(truth, predicted, mask)
        # nothing scored: OA, AA and kappa null, each with "<key>_reason" (metrics.json is strict JSON)
        return null_nonfinite(out, f"no {'test' if mask is not None else 'labelled'} pixel of a class the model "
                                   "was trained on")

    return {
        "class_names": list(class_names),
        "test": None if test_mask is None else scores(test_mask),
        "labeled": scores(None),
    }


def _count_unclassified(truth: Any, predicted: Any, mask: Any | None, rows_per_chunk: int = 256) -> int:
    """Pixels labelled in ``truth`` (and in ``mask``) whose prediction is 0 (no-data)."""
    count = 0
    for start in range(0, np.shape(truth)[0], rows_per_chunk):
        rows = slice(start, start + rows_per_chunk)
        hit = (np.asarray(truth[rows]) > 0) & (np.asarray(predicted[rows]) == 0)
        if mask is not None:
            hit &= np.asarray(mask[rows], dtype=bool)
        count += int(hit.sum())
    return count


def score_map(model: Any, truth: Any, labels: Any, own_split: bool) -> dict[str, Any]:
    """:func:`map_metrics` of the map ``labels`` against the matched ground truth (a
    :class:`hsi.infer.truth.MatchedTruth`) with the checkpoint ``model``'s classes: its test pixels only on its own
    scene (``own_split``), the classes it never saw reported apart (and warned about in one line)."""
    trained = (model.training_values or {}).get("classes") or model.class_names
    test_mask = model.test_mask(truth.labels.shape) if own_split else None
    metrics = map_metrics(truth.labels, labels, truth.class_names, test_mask, trained)
    metrics["classes"] = truth.record
    metrics["own_scene"] = own_split
    if metrics["test"] is None:
        metrics["test_note"] = ("another scene than the checkpoint's: every labelled pixel is scored" if not own_split
                                else "the checkpoint's split does not match this scene's size: no test-pixel metrics")
    unseen = metrics["labeled"].get("unseen_classes") or {}
    if unseen:
        parts = ", ".join(f"{name!r} ({entry['pixels']} pixels)" for name, entry in unseen.items())
        warnings.warn(f"{len(unseen)} class(es) of the labels have no training pixels in checkpoint {model.source} "
                      f"and are left out of OA, AA and kappa: {parts} (metrics.json says what they were mapped as)",
                      ClassMatchWarning, stacklevel=3)
    return metrics


def check_not_degenerate(labels: Any, truth: Any, num_classes: int, name: str) -> None:
    """Refuse a map of another scene that is one class everywhere while its labels hold several of the checkpoint's
    classes (warn when there are no labels to tell): values the network was not trained on, not a map. ``truth``
    is the :class:`hsi.infer.truth.MatchedTruth` or None.

    Raises
    ------
    DegenerateMapError
        Naming the cube, the one class, the classes its labels hold and the fixes.
    """
    counts = np.zeros(num_classes + 1, dtype=np.int64)
    for start in range(0, labels.shape[0], 256):
        counts += np.bincount(np.asarray(labels[start : start + 256]).ravel(), minlength=num_classes + 1)[: num_classes + 1]
    mapped = np.flatnonzero(counts[1:]) + 1
    if mapped.size != 1:
        return
    held = [] if truth is None else [truth.class_names[k - 1] for k in np.unique(truth.labels) if 0 < k <= num_classes]
    only = truth.class_names[mapped[0] - 1] if truth is not None else f"class {int(mapped[0])}"
    fix = ("check the cube's units and scale (--units, --scale), or scale it on its own pixels (--preprocess scene)")
    if len(held) >= 2:
        raise DegenerateMapError(f"cube {name}: every pixel was mapped as {only!r}, though its labels hold "
                                 f"{len(held)} of the checkpoint's classes ({', '.join(held)}): its values are not "
                                 f"what the network was trained on; {fix}")
    if truth is None:
        warnings.warn(f"cube {name}: every pixel was mapped as one class ({only}); if the scene holds more, its values "
                      f"are not what the network was trained on: {fix}", ClassMatchWarning, stacklevel=3)
