"""Land-cover accuracy figures computed from a confusion matrix.

Everything here is derived from one ``K x K`` confusion matrix (rows = true class,
columns = predicted class), which torchmetrics accumulates and synchronizes across
processes. Deriving OA, AA and kappa from it (rather than from three separate
metric objects) keeps them consistent with each other and with scikit-learn's
``accuracy_score``, ``balanced_accuracy_score`` and ``cohen_kappa_score``.
"""

from __future__ import annotations

import numpy as np

from hsi.errors import ShapeMismatchError

#: why OA, AA and kappa are null in ``metrics.json`` (``"oa_reason"``) when no test pixel could be scored
NOT_SCORED = "no test pixel of a class the model was trained on"


def scores_from_confusion(confusion: np.ndarray) -> dict:
    """Overall accuracy, average accuracy, Cohen's kappa and per-class accuracy.

    Parameters
    ----------
    confusion : (K, K) array of counts, rows are true classes, columns predictions.

    Returns
    -------
    dict with ``oa`` (float), ``aa`` (mean recall over the classes that occur in
    the true labels, as ``balanced_accuracy_score``), ``kappa`` (float),
    ``per_class`` (list of K recalls; ``None`` for classes with no true pixel) and
    ``support`` (list of K true-pixel counts). With no pixel counted, ``oa``, ``aa`` and
    ``kappa`` are NaN (written to JSON as null with a reason: :func:`hsi._atomic.null_nonfinite`).
    """
    cm = np.asarray(confusion, dtype=np.float64)
    if cm.ndim != 2 or cm.shape[0] != cm.shape[1]:
        raise ShapeMismatchError(f"confusion must be a square K x K matrix, got shape {cm.shape}")
    total = cm.sum()
    support = cm.sum(axis=1)
    if total == 0:
        nan = float("nan")
        return {"oa": nan, "aa": nan, "kappa": nan, "per_class": [None] * len(cm), "support": support.astype(int).tolist()}
    diag = np.diag(cm)
    oa = diag.sum() / total
    present = support > 0
    recall = np.divide(diag, support, out=np.zeros_like(diag), where=present)
    aa = recall[present].mean()
    expected = (support * cm.sum(axis=0)).sum() / total**2
    kappa = 1.0 if expected == 1.0 else (oa - expected) / (1.0 - expected)
    per_class = [float(r) if p else None for r, p in zip(recall, present)]
    return {
        "oa": float(oa),
        "aa": float(aa),
        "kappa": float(kappa),
        "per_class": per_class,
        "support": support.astype(int).tolist(),
    }
