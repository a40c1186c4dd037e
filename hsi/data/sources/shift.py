"""Scenes that do not fit together: other units or value ranges, and data shifted after preprocessing.

Two checks, each warned about in one line (:class:`~hsi.errors.SceneShiftWarning`) and
recorded per scene for ``metrics.json`` (:func:`scene_shift`):

- **raw values** (before any preprocessing): each scene's units (``meta["units"]``) and its
  typical value as stored (:func:`hsi.preprocess.shift.value_level`) against the training
  scenes'. Typical values :data:`RAW_RATIO_THRESHOLD` times apart or more (raw integers
  against reflectance: thousands of times), or two known unit kinds that differ
  (reflectance against radiance), are warned about even when the normalisation in use
  brings the scenes together, so that such a run never ends silently.
- **after preprocessing**: each scene's band statistics against the training pixels',
  both as the model sees them (resampled, normalised, scaled; the cached cubes), by
  :func:`hsi.preprocess.shift.check_shift` (the statistic and its threshold are stated
  there). This is the check that says whether the model meets data it was not trained on.

Each scene is compared with the training pixels of the other training scenes (of every
training scene when it is the only one); a single scene has nothing to be compared with.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from hsi.errors import SceneShiftWarning

__all__ = ["COLLECTION_ADVICE", "RAW_RATIO_THRESHOLD", "centre_pixels", "raw_check", "scene_shift", "value_text"]

#: typical raw values this many times apart (or more) are "other units or value ranges"
RAW_RATIO_THRESHOLD = 10.0
#: pixels of one scene the statistics are computed on, at most (a seeded sample beyond)
STATS_PIXELS = 65536


def centre_pixels(entry: Any, key: str, patch_size: int, max_pixels: int = STATS_PIXELS, seed: int = 0) -> np.ndarray:
    """``(N, C)`` preprocessed spectra of a cache entry's ``key`` pixels ("train", "all", ...), a seeded sample of
    at most ``max_pixels``."""
    coords = np.asarray(entry.load(f"{key}_coords"), dtype=np.int64)
    if coords.shape[0] > max_pixels:
        coords = coords[np.sort(np.random.default_rng(seed).choice(coords.shape[0], max_pixels, replace=False))]
    pad = patch_size // 2
    cube = entry.load("cube")
    return np.asarray(cube[coords[:, 0] + pad, coords[:, 1] + pad, :], dtype=np.float32)


def _kind(fact: dict[str, Any]) -> str:
    return str((fact.get("units") or {}).get("kind") or "unknown")


def value_text(value: float | None) -> str:
    """A typical value as printed (``unknown`` for a scene without a finite pixel)."""
    return "unknown" if value is None else f"{value:.4g}"


def _times(ratio: float | None) -> str:
    """``12.3x``, ``10,000x``: a ratio as people read it."""
    if ratio is None:
        return "ratio unknown"
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"


#: what a flagged scene of a collection can do (the end of :func:`raw_check`'s warning)
COLLECTION_ADVICE = ("the scenes combine only through the normalisation (normalize=, per-scene scaling with "
                     "preprocess: scene): declare units: and scale: in the entries if the files do not")


def raw_check(fact: dict[str, Any], against: Sequence[dict[str, Any]], advice: str = COLLECTION_ADVICE
              ) -> dict[str, Any]:
    """The raw-value record of one scene against the facts of the scenes it is compared with (and a warning ending
    in ``advice``: what the caller does about it, or what the user can)."""
    levels = [f["value_level"] for f in against if f.get("value_level")]
    level, reference = fact.get("value_level"), float(np.median(levels)) if levels else None
    ratio = None if not (level and reference) else max(level / reference, reference / level)
    kinds = {_kind(f) for f in against} - {"unknown"}
    differ = _kind(fact) != "unknown" and bool(kinds) and kinds != {_kind(fact)}
    flagged = bool(differ or (ratio is not None and ratio >= RAW_RATIO_THRESHOLD))
    record = {"units": _kind(fact), "value_level": level, "against_value_level": reference,
              "ratio": ratio, "units_differ": differ, "flagged": flagged}
    if flagged:
        names = ", ".join(repr(f["name"]) for f in against)
        seen = ", ".join(sorted({_kind(f) for f in against}))
        warnings.warn(
            f"scene {fact['name']!r} holds other units or value ranges than {names}: its values are typically "
            f"{value_text(level)} against {value_text(reference)} ({_times(ratio)}; units {_kind(fact)} against {seen}); "
            f"{advice}", SceneShiftWarning, stacklevel=2)
    return record


def scene_shift(facts: Sequence[dict[str, Any]], train_names: Sequence[str], stats: Any) -> dict[str, Any]:
    """Both checks for every scene of a collection.

    Parameters
    ----------
    facts : sequence of dict
        Each scene's facts (``name``, ``units``, ``value_level``).
    train_names : sequence of str
        The scenes that give training pixels.
    stats : callable
        ``stats(names, key)`` -> :class:`~hsi.preprocess.shift.BandStats` of the preprocessed ``key`` pixels
        ("train" or "all") of the scenes ``names`` together.

    Returns
    -------
    dict
        ``{scene: {"raw": ..., "preprocessed": ...}}`` (see the module docstring).
    """
    from hsi.preprocess.shift import check_shift

    out: dict[str, Any] = {}
    by_name = {f["name"]: f for f in facts}
    for fact in facts:
        name = fact["name"]
        against = [n for n in train_names if n != name] or list(train_names)
        raw = raw_check(fact, [by_name[n] for n in against])
        shifted = check_shift(stats(against, "train"), stats([name], "all"), name, against)
        out[name] = {"raw": raw, "preprocessed": shifted}
    return out
