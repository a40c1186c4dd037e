"""Ground truth for a map: a label map's classes matched to the checkpoint's by name.

A label map (a registry scene's, or a file given with ``--labels``) numbers its classes its
own way; the checkpoint numbers its classes ``1..K`` in training order. Scoring one against
the other by position counts another scene's "Rock" as the checkpoint's "Tree", so
:func:`match_classes` matches them by name:

- the label map's names are its own (a registry scene's, a GeoTIFF's categories, an HDF5
  file's ``class_names``), else ``class_<id>`` (what training calls the classes of a file
  without names, so a checkpoint's own label file always matches itself);
- a mapping (``--classes theirs=ours``, the syntax and rules of a collection entry's
  ``classes:``) renames them first; two names mapped to one merge;
- classes whose names the checkpoint has are scored as those classes; the others are
  classes the checkpoint never saw, reported apart (not scored);
- a label map without names whose classes share no name with the checkpoint's is matched
  by id only when its class count is the checkpoint's (the record says so); otherwise, and
  when names on both sides share nothing, one error line says how to map them.

The matched map (:class:`MatchedTruth`) numbers the checkpoint's classes ``1..K`` and the
label map's unknown classes ``K + 1..K + U``, so the scores of :func:`hsi.infer.metrics.map_metrics`
cover the shared classes and its unseen report names the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsi._checks import did_you_mean, parse_class_mapping
from hsi.errors import ClassMatchError, OptionError

__all__ = ["LabelMap", "MatchedTruth", "match_classes", "parse_class_mapping", "stored_names"]


@dataclass
class MatchedTruth:
    """A label map renumbered onto the checkpoint's classes.

    Attributes
    ----------
    labels : (H, W) int64 array
        0 unlabelled, ``1..K`` the checkpoint's classes, ``K + 1..K + U`` the label map's classes
        the checkpoint does not have.
    class_names : list[str]
        ``K + U`` names: the checkpoint's, then the unknown ones.
    record : dict
        How the classes were matched (``method``: "name" or "id"; ``matched``: {label map's
        name: checkpoint's name}; ``unknown``: the label map's classes the checkpoint does
        not have; ``absent``: the checkpoint's classes without a pixel in the label map;
        ``note``: one sentence), for ``inference.json`` and ``metrics.json``.
    """

    labels: np.ndarray
    class_names: list[str]
    record: dict[str, Any]


def _names_by_id(ids: list[int], names: Mapping[int, str] | None) -> dict[int, str]:
    """Each id's name: the label map's own, else ``class_<id>``."""
    names = names or {}
    return {i: str(names[i]) if names.get(i) else f"class_{i}" for i in ids}


def _apply_mapping(own: dict[int, str], mapping: Mapping[str, str], checkpoint: Sequence[str], labels_name: str,
                   flag: str) -> dict[int, str]:
    """The names after ``mapping``; its keys must be the label map's names, its values the checkpoint's."""
    known = list(dict.fromkeys(own.values()))
    for theirs, ours in mapping.items():
        if theirs not in known:
            raise OptionError(flag, f"{theirs}={ours}", f"a class of {labels_name} on the left"
                              f"{did_you_mean(theirs, known)} (its classes: {', '.join(known)})")
        if ours not in checkpoint:
            raise OptionError(flag, f"{theirs}={ours}", f"one of the checkpoint's classes on the right"
                              f"{did_you_mean(ours, list(checkpoint))} (its classes: {', '.join(checkpoint)})")
    return {i: mapping.get(n, n) for i, n in own.items()}


def _example_mapping(own: dict[int, str], checkpoint: Sequence[str]) -> str:
    """``--classes`` text pairing the first few classes in order, as an example in an error line."""
    pairs = [f"{theirs}={ours}" for theirs, ours in zip(dict.fromkeys(own.values()), checkpoint)][:3]
    return " ".join(pairs)


def _by_id(ids: list[int], label_values: Sequence[int], k: int) -> dict[int, int] | None:
    """``{id: checkpoint class}`` when the label map's unnamed classes can be taken by id: as many classes as the
    checkpoint's, all among its training ids (or all in ``1..K``); else None."""
    if len(ids) != k:
        return None
    values = [int(v) for v in label_values]
    if set(ids) <= set(values):
        return {i: values.index(i) + 1 for i in ids}
    if set(ids) <= set(range(1, k + 1)):
        return {i: i for i in ids}
    return None


def match_classes(raw: np.ndarray, names: Mapping[int, str] | None, checkpoint_names: Sequence[str],
                  label_values: Sequence[int], labels_name: str, mapping: Mapping[str, str] | None = None,
                  flag: str = "classes") -> MatchedTruth:
    """Renumber the label map ``raw`` onto the checkpoint's classes, by name (see the module docstring).

    Parameters
    ----------
    raw : (H, W) int array
        The label map's own ids (0 unlabelled).
    names : mapping of int to str, optional
        The label map's class names by id (None or missing ids: ``class_<id>``).
    checkpoint_names : sequence of str
        The checkpoint's classes ``1..K``.
    label_values : sequence of int
        The checkpoint's classes' ids in its training label file (for a match by id).
    labels_name : str
        The label map, as messages name it.
    mapping : mapping of str to str, optional
        ``{label map's name: checkpoint's name}``, applied first.
    flag : str
        The option that gives ``mapping``, as messages name it.

    Raises
    ------
    OptionError
        The mapping names a class that the label map or the checkpoint does not have.
    ClassMatchError
        Nothing can be matched: the error says which classes each side has and how to map them.
    """
    raw = np.asarray(raw, dtype=np.int64)
    checkpoint = [str(n) for n in checkpoint_names]
    ids = sorted(int(v) for v in np.unique(raw[raw > 0]))
    own = _names_by_id(ids, names)
    named = _apply_mapping(own, dict(mapping or {}), checkpoint, labels_name, flag)
    shared = [n for n in dict.fromkeys(named.values()) if n in checkpoint]
    if ids and not shared:
        by_id = _by_id(ids, label_values, len(checkpoint)) if not names and not mapping else None
        if by_id is None:
            raise ClassMatchError(_no_match_text(own, checkpoint, labels_name, bool(names)))
        return _renumber(raw, {i: checkpoint[c - 1] for i, c in by_id.items()}, checkpoint, own, "id")
    return _renumber(raw, named, checkpoint, own, "name")


def _no_match_text(own: dict[int, str], checkpoint: list[str], labels_name: str, named: bool) -> str:
    """What an unmatchable label map needs, for the error line."""
    theirs = ", ".join(dict.fromkeys(own.values()))
    if named:
        why = f"none of the classes of {labels_name} ({theirs}) is one of the checkpoint's ({', '.join(checkpoint)})"
    else:
        why = (f"{labels_name} names none of its {len(own)} classes ({theirs}) and the checkpoint has "
               f"{len(checkpoint)} ({', '.join(checkpoint)}), so they cannot be taken by id")
    return (f"{why}: say which is which, e.g. --classes {_example_mapping(own, checkpoint)} (classes= in Python), "
            "or leave the labels out to map without scores")


def _renumber(raw: np.ndarray, named: dict[int, str], checkpoint: list[str], own: dict[int, str],
              method: str) -> MatchedTruth:
    """The label map in checkpoint ids (``1..K``), its other classes after them, and the record of the match."""
    unknown = [n for n in dict.fromkeys(named.values()) if n not in checkpoint]
    names = checkpoint + unknown
    lut = np.zeros(int(raw.max(initial=0)) + 1, dtype=np.int64)
    for i, name in named.items():
        lut[i] = names.index(name) + 1
    labels = lut[np.clip(raw, 0, None)]
    present = {named[i] for i in named}
    matched = {own[i]: named[i] for i in named if named[i] in checkpoint}
    record = {"method": method, "matched": matched, "unknown": unknown,
              "absent": [n for n in checkpoint if n not in present], "note": _note(method, matched, unknown)}
    return MatchedTruth(labels, names, record)


def _note(method: str, matched: dict[str, str], unknown: list[str]) -> str:
    """One sentence on how the classes were matched."""
    how = ("by name" if method == "name" else
           "by id (the label map names no classes and has as many as the checkpoint; --classes names them)")
    text = f"classes matched {how}: {len(set(matched.values()))} shared"
    if unknown:
        text += f"; {len(unknown)} the checkpoint never saw, not scored ({', '.join(unknown)})"
    return text


@dataclass
class LabelMap:
    """A label map as read, before matching: its own ids, its class names by id (None: it names none), its name."""

    raw: np.ndarray
    names: dict[int, str] | None
    name: str

    def match(self, checkpoint_names: Sequence[str], label_values: Sequence[int],
              mapping: Mapping[str, str] | None = None, flag: str = "classes") -> MatchedTruth:
        """:func:`match_classes` of this map."""
        return match_classes(self.raw, self.names, checkpoint_names, label_values, self.name, mapping, flag)


def stored_names(path: Any, key: str | None) -> dict[int, str] | None:
    """The class names a label file stores, by id (an HDF5 dataset's ``class_names``, a GeoTIFF's categories), or
    None."""
    from hsi.io.readers import class_names_of

    names = class_names_of(path, key)
    return None if not names else {i: str(n) for i, n in enumerate(names, start=1)}
