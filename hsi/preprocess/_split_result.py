"""Assembling a :class:`Split` from masks: per-class counts, representation warnings, params."""

from __future__ import annotations

import warnings

import numpy as np

from hsi.preprocess.split_types import (
    COLUMNS,
    Split,
    SplitCounts,
    StratificationWarning,
    labels_digest,
)

__all__ = ["make_split"]


def _count_table(labels: np.ndarray, masks: dict[str, np.ndarray]) -> SplitCounts:
    k = int(labels.max()) if labels.size else 0
    values = np.zeros((k, len(COLUMNS)), dtype=np.int64)
    for j, name in enumerate(COLUMNS):
        values[:, j] = np.bincount(labels[masks[name]], minlength=k + 1)[1:k + 1]
    return SplitCounts(np.arange(1, k + 1, dtype=np.int64), values)


def _representation(labels: np.ndarray, counts: SplitCounts, what: str,
                    hints: dict[int, str] | None = None) -> tuple[list[int], list[str]]:
    """Classes present in ``labels`` without train or test pixels, with messages; warns."""
    present = np.bincount(labels.ravel(), minlength=len(counts.classes) + 1)[1:]
    unrep, notes = [], []
    for i, k in enumerate(counts.classes):
        if present[i] == 0:
            continue
        missing = [s for s in ("train", "test") if counts[s][i] == 0]
        if missing:
            unrep.append(int(k))
            hint = (hints or {}).get(int(k), "")
            notes.append(f"class {int(k)} ({int(present[i])} labeled pixels) has no "
                         f"{' and no '.join(missing)} pixels{hint}")
    if notes:
        warnings.warn(f"{what}: {len(unrep)} class(es) not in both train and test: "
                      + "; ".join(notes), StratificationWarning, stacklevel=3)
    return unrep, notes


def make_split(labels: np.ndarray, masks: dict[str, np.ndarray], params: dict, what: str,
               hints: dict[int, str] | None = None) -> Split:
    """The :class:`Split` of ``masks`` over ``labels``, with counts, notes and full params.

    Must be called directly by the public split function: the
    :class:`StratificationWarning` is raised with ``stacklevel=3`` so that it points at
    that function's ``make_split`` call.
    """
    counts = _count_table(labels, masks)
    unrep, notes = _representation(labels, counts, what, hints)
    params = dict(params, shape=list(labels.shape), n_classes=int(len(counts.classes)),
                  labels_sha256=labels_digest(labels))
    return Split(counts=counts, params=params, warnings=notes, unrepresented=unrep, **masks)
