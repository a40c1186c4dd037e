"""Scores that leave out test classes no training scene had.

A test scene may hold classes the model never saw a training pixel of; counted as usual
they are 0 % and drag AA and kappa down for a reason no model could help.
:func:`score_seen` scores only the test pixels whose true class was trained, and reports
the unseen classes apart: how many test pixels each has and what they were predicted as.
With every class trained it gives exactly what :func:`hsi.training.results.score` gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hsi.errors import OptionError, ShapeMismatchError
from hsi.training.metrics import scores_from_confusion

__all__ = ["score_seen", "unseen_message", "unseen_report"]


def _checked_labels(y_true: np.ndarray, y_pred: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``y_true``, ``y_pred`` as 1-D int64 arrays of one length with values in ``0..k-1``."""
    true = np.asarray(y_true, dtype=np.int64).reshape(-1)
    pred = np.asarray(y_pred, dtype=np.int64).reshape(-1)
    if true.shape != pred.shape:
        raise ShapeMismatchError(f"score_seen: y_true has {true.size} labels, y_pred {pred.size}; they must match")
    for name, arr in (("y_true", true), ("y_pred", pred)):
        if arr.size and (arr.min() < 0 or arr.max() >= k):
            raise OptionError(name, f"values {int(arr.min())}..{int(arr.max())}",
                              f"0-based classes in 0..{k - 1} (one per entry of class_names)")
    return true, pred


def unseen_report(confusion: np.ndarray, names: Sequence[str], unseen: np.ndarray) -> dict[str, dict[str, Any]]:
    """``{class: {"pixels": n, "predicted_as": {class: count}}}`` for unseen classes with test pixels."""
    out: dict[str, dict[str, Any]] = {}
    for k in np.flatnonzero(unseen):
        row = confusion[k]
        if row.sum() == 0:
            continue
        order = np.argsort(-row, kind="stable")  # most frequent prediction first
        out[str(names[k])] = {"pixels": int(row.sum()),
                              "predicted_as": {str(names[j]): int(row[j]) for j in order if row[j] > 0}}
    return out


def score_seen(y_true: np.ndarray, y_pred: np.ndarray, class_names: Sequence[str],
               trained: Sequence[str]) -> dict[str, Any]:
    """OA / AA / kappa over the test pixels of trained classes, and a report of the others.

    Parameters
    ----------
    y_true, y_pred : (N,) int arrays
        0-based classes, indices into ``class_names``.
    class_names : sequence of str
        The ``K`` classes of the model's output.
    trained : sequence of str
        Names of the classes that have training pixels.

    Returns
    -------
    dict
        The keys of :func:`hsi.training.results.score` (``oa``, ``aa``, ``kappa``,
        ``per_class`` and ``support``: lists of ``K``, ``confusion``: ``K x K``), computed
        with the rows of unseen classes left out (zero): their ``per_class`` is ``None``
        and their ``support`` 0, and AA averages the trained classes with test pixels.
        Also ``scored_classes`` (the trained class names the scores cover, in class
        order) and ``unseen_classes`` (``{name: {"pixels": n, "predicted_as": {name:
        count}}}`` for each untrained class with test pixels, predictions most
        frequent first).
    """
    names = [str(n) for n in class_names]
    unknown = sorted(set(map(str, trained)) - set(names))
    if unknown:
        raise OptionError("trained", unknown, f"names among class_names {names}")
    true, pred = _checked_labels(y_true, y_pred, len(names))
    confusion = np.zeros((len(names), len(names)), dtype=np.int64)
    np.add.at(confusion, (true, pred), 1)
    unseen = ~np.isin(names, [str(t) for t in trained])
    report = unseen_report(confusion, names, unseen)
    confusion[unseen] = 0
    scores = scores_from_confusion(confusion)
    scores["confusion"] = confusion.astype(int).tolist()
    scores["scored_classes"] = [n for n, u in zip(names, unseen) if not u]
    scores["unseen_classes"] = report
    return scores


def unseen_message(unseen: dict[str, dict[str, Any]]) -> str | None:
    """One warning line naming the unseen test classes and their pixel counts; ``None`` when there are none."""
    if not unseen:
        return None
    parts = []
    for name, entry in unseen.items():
        top = next(iter(entry.get("predicted_as", {})), None)
        mostly = f", mostly predicted as {top!r}" if top is not None else ""
        parts.append(f"{name!r} ({entry['pixels']} pixels{mostly})")
    total = sum(int(e["pixels"]) for e in unseen.values())
    noun = "class has" if len(unseen) == 1 else "classes have"
    return (f"{len(unseen)} test {noun} no training pixels and {'is' if len(unseen) == 1 else 'are'} left out "
            f"of OA, AA and kappa ({total} test pixels): {', '.join(parts)}; give the training scenes pixels "
            "of these classes to score them")
