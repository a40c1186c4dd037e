"""Classes across scenes: matched by name, after each scene's optional mapping.

A scene's classes are its loader's names (a cube file's are ``class_<id>``), renamed by
its entry's ``classes: {Tree: vegetation}``; two names mapped to one merge. The
collection's classes are the union, in order of first appearance (scene by scene, class
by class), and each scene's labels are renumbered into the union's ids ``1..K``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hsi._checks import did_you_mean
from hsi.errors import CollectionError

__all__ = ["mapped_names", "present_classes", "renumber", "union_classes"]


def mapped_names(names: Sequence[str], mapping: Mapping[str, str], scene: str) -> list[str]:
    """The scene's class names after its mapping.

    Raises
    ------
    CollectionError
        A mapped name that is not one of the scene's classes (with the closest one).
    """
    for key in mapping:
        if key not in names:
            raise CollectionError(f"scene {scene!r}: classes: {key!r} is not one of its classes"
                                  f"{did_you_mean(key, names)} (its classes: {', '.join(names)})")
    return [str(mapping.get(n, n)) for n in names]


def union_classes(per_scene: Sequence[Sequence[str]]) -> list[str]:
    """The union of the scenes' (mapped) class names, in order of first appearance."""
    out: list[str] = []
    for names in per_scene:
        out += [n for n in dict.fromkeys(names) if n not in out]
    return out


def renumber(labels: np.ndarray, names: Sequence[str], union: Sequence[str]) -> np.ndarray:
    """``labels`` (0 unlabeled, ``k`` = ``names[k - 1]``) in the union's ids (int64, 0 kept)."""
    lut = np.zeros(len(names) + 1, dtype=np.int64)
    for k, name in enumerate(names, start=1):
        lut[k] = list(union).index(name) + 1
    return lut[np.asarray(labels, dtype=np.int64)]


def present_classes(labels: np.ndarray, union: Sequence[str]) -> list[str]:
    """The union's classes with at least one pixel in ``labels`` (union ids), in union order."""
    ids = np.unique(np.asarray(labels)[np.asarray(labels) > 0])
    return [union[int(k) - 1] for k in ids]
