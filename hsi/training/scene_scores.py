"""Per-scene scores of a collection, for ``metrics.json``'s ``"scenes"``.

Each scene is scored on its own test pixels over the collection's classes (a prediction
of a class the scene lacks is still an error); ``per_class`` lists only the classes the
scene has, so a class absent from a scene is never reported as 0 % there. Test pixels of a
class no training scene had are left out of the scores and counted apart
(:mod:`hsi.training.unseen` reports what they were predicted as).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hsi._atomic import null_nonfinite
from hsi.training.metrics import NOT_SCORED, scores_from_confusion

__all__ = ["scene_scores"]


def scene_scores(y_true: np.ndarray, y_pred: np.ndarray, scene_index: np.ndarray, names: Sequence[str],
                 class_names: Sequence[str], scene_classes: dict[str, list[str]],
                 trained: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """``{scene: {oa, aa, kappa, per_class, pixels, unseen_pixels}}`` of 0-based test predictions.

    A scene without a scored test pixel has ``oa``, ``aa`` and ``kappa`` None, each with a
    ``<key>_reason`` saying why.

    Parameters
    ----------
    y_true, y_pred : (N,) int arrays
        0-based classes of the collection.
    scene_index : (N,) int array
        Index into ``names`` of each pixel's scene.
    names : sequence of str
        Scene names.
    class_names : sequence of str
        The collection's classes.
    scene_classes : dict
        ``{scene: [classes it has]}``; ``per_class`` keeps these only.
    trained : sequence of str, optional
        The classes that had training pixels: test pixels of other classes are left out of
        the scores (counted in ``unseen_pixels``). None: every class.
    """
    k = len(class_names)
    seen = np.ones(k, dtype=bool) if trained is None else np.isin(np.asarray(class_names), list(trained))
    true = np.asarray(y_true)
    out: dict[str, dict[str, Any]] = {}
    for s, name in enumerate(names):
        in_scene = np.asarray(scene_index) == s
        sel = in_scene & seen[true]
        confusion = np.zeros((k, k), dtype=np.int64)
        np.add.at(confusion, (np.asarray(y_true)[sel], np.asarray(y_pred)[sel]), 1)
        scores = scores_from_confusion(confusion)
        has = set(scene_classes.get(name, class_names)) & {c for c, ok in zip(class_names, seen) if ok}
        # no scored test pixel in the scene: null, with "oa_reason" etc. saying why
        out[name] = null_nonfinite({"oa": scores["oa"], "aa": scores["aa"], "kappa": scores["kappa"]},
                                   f"{NOT_SCORED} in scene {name}")
        out[name] |= {"per_class": {c: v for c, v in zip(class_names, scores["per_class"]) if c in has},
                      "pixels": int(sel.sum()), "unseen_pixels": int((in_scene & ~seen[true]).sum())}
    return out
