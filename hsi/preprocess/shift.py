"""Scene-shift check: does another scene's data lie far from the training scenes'?

A model trained on some scenes and tested on (or applied to) another is only meaningful
when the other scene's spectra, after resampling and the fitted preprocessing, fall in
the range the model was trained on. A scene in raw integers (-17..1402) next to one in
reflectance (0..0.54) trains and tests without an error and scores 0 %; this module
measures that gap and warns (:class:`hsi.errors.SceneShiftWarning`).

The statistic
-------------
:func:`band_stats` summarises each band by its median and 5th / 95th percentiles over
the finite pixels (a seeded subsample above ``max_pixels``). :func:`shift_factor`
compares a scene ``s`` with the training scenes ``t`` band by band, with
``spread_t = max(p95_t - p5_t, eps)`` (``eps`` = 1e-6 of the largest training spread;
the scene's spread is floored the same way):

- ``location`` = median over bands of ``|median_s - median_t| / spread_t``: how many
  training spreads the scene's typical value lies away;
- ``scale`` = ``exp(median over bands of |log(spread_s / spread_t)|)``: a factor >= 1,
  10 for a copy scaled by 10 or by 0.1;
- ``factor`` = ``max(scale, 1 + 2 * location)``, the one number messages name (a typical
  value one training spread away weighs like a threefold scale).

Medians over bands keep a few odd bands (water absorption, a dead detector) from
deciding. Both parts are unchanged by any per-band affine map applied to both scenes,
so a per-band min-max or standardization fitted on the training pixels gives the same
factor as the raw values of two scenes in the same units.

The threshold
-------------
``SHIFT_THRESHOLD = 5.0`` (shifted when ``factor > 5``: a 5x scale, or a typical value
2 training spreads away), measured with :func:`band_stats` defaults and a min-max fitted
on the training part. Honest pairs: the synthetic scene (``make_synthetic_scene``,
145 x 145 x 200, seeds 0-4) test blocks against train blocks of its ``block_split`` 1.04-1.25;
against other seeds or settings (other class proportions, background share, class count,
size, illumination) 1.08-1.39; real scenes in 1/3 against 2/3 of 16-px blocks 1.06-1.07,
halves 1.08-2.57 (Samson, Jasper Ridge: materials unevenly shared between halves); the AVIRIS chip
against Jasper Ridge 1.44; three MUUFL Gulfport crops of one flight 1.41-3.74 (a 36 x 36
crop of few materials has a narrower spread). Flagged: copies of a half scaled by 10
(10.2-28.3) or 0.1 (7.9-11.4) or offset by 3 training spreads (6.8-7.1); raw integers
against reflectance in the thousands. Limit: a small crop of one material (water) is
narrower than a varied training scene and can pass 5 (16-32 px crops did; 48 px did not).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsi.errors import (
    BandMismatchError,
    NoDataError,
    OptionError,
    SceneShiftWarning,
    ShapeMismatchError,
    StateFormatError,
)

__all__ = ["LEVEL_PIXELS", "SHIFT_THRESHOLD", "BandStats", "band_stats", "check_shift", "shift_factor", "shift_message",
           "value_level"]

#: ``factor`` above which a scene counts as shifted (see the module docstring for the measurements).
SHIFT_THRESHOLD = 5.0

_LOCATION_WEIGHT = 2.0  # one training spread away weighs like a threefold scale
_EPS_RELATIVE = 1e-6  # spread floor, relative to the largest training band spread
_CHUNK = 1 << 16  # pixels per pass when finding the finite ones
_STATE_VERSION = 1


@dataclass(frozen=True, eq=False)
class BandStats:
    """Per-band location and spread of a scene's (preprocessed) spectra.

    Attributes
    ----------
    median, p5, p95 : ndarray (C,) float64
        Per-band median and 5th / 95th percentiles of the finite pixels.
    pixels : int
        Finite pixels the statistics describe (before subsampling).
    """

    median: np.ndarray
    p5: np.ndarray
    p95: np.ndarray
    pixels: int

    def __post_init__(self) -> None:
        arrays = {}
        for name in ("median", "p5", "p95"):
            arr = np.array(getattr(self, name), dtype=np.float64).reshape(-1)
            arr.flags.writeable = False
            arrays[name] = arr
        if len({a.size for a in arrays.values()}) != 1:
            raise ShapeMismatchError(
                "BandStats: median, p5 and p95 must have one value per band each; found lengths "
                f"{[a.size for a in arrays.values()]}")
        for name, arr in arrays.items():
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "pixels", int(self.pixels))

    @property
    def n_bands(self) -> int:
        """Number of bands ``C``."""
        return int(self.median.size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BandStats):
            return NotImplemented
        return self.pixels == other.pixels and all(
            np.array_equal(getattr(self, n), getattr(other, n)) for n in ("median", "p5", "p95"))

    __hash__ = None  # type: ignore[assignment]  # arrays: equal objects could not hash alike

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (float64 survives exactly: Python writes the shortest round-trip repr)."""
        return {"version": _STATE_VERSION, "median": self.median.tolist(), "p5": self.p5.tolist(),
                "p95": self.p95.tolist(), "pixels": self.pixels}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> BandStats:
        """Inverse of :meth:`to_dict`; :class:`StateFormatError` on a malformed or foreign state."""
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            found = state.get("version") if isinstance(state, dict) else type(state).__name__
            raise StateFormatError(f"band statistics: expected a dict with version {_STATE_VERSION}, found {found!r}")
        try:
            return cls(median=state["median"], p5=state["p5"], p95=state["p95"], pixels=state["pixels"])
        except (KeyError, TypeError, ValueError) as err:
            raise StateFormatError(f"band statistics: malformed state ({err!r}); expected keys "
                                   "'median', 'p5', 'p95' (lists of floats) and 'pixels'") from err


def _as_pixels(x: np.ndarray, where: str) -> np.ndarray:
    """``x`` as ``(N, C)`` (a view where possible)."""
    arr = np.asarray(x)
    if arr.ndim == 3:
        return arr.reshape(-1, arr.shape[-1])
    if arr.ndim == 2:
        return arr
    raise ShapeMismatchError(f"band_stats: {where} must be (N, C) spectra or an (H, W, C) cube; "
                             f"found shape {arr.shape}")


def _finite_rows(flat: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``flat`` with every band finite (in chunks: no full-size mask)."""
    if not np.issubdtype(flat.dtype, np.floating):
        return np.arange(flat.shape[0])
    keep = [start + np.flatnonzero(np.isfinite(flat[start:start + _CHUNK]).all(axis=1))
            for start in range(0, flat.shape[0], _CHUNK)]
    return np.concatenate(keep) if keep else np.zeros(0, dtype=np.intp)


def band_stats(x: np.ndarray | Sequence[np.ndarray], max_pixels: int = 65536, seed: int = 0) -> BandStats:
    """Per-band median and 5th / 95th percentiles of preprocessed spectra.

    Parameters
    ----------
    x : (N, C) or (H, W, C) array, or a sequence of them
        Spectra after resampling and the fitted preprocessing. A sequence (several
        training scenes) is pooled: the statistics of the concatenation of its pixels.
    max_pixels : int
        Above this many finite pixels, a subsample of this size is used, drawn without
        replacement by ``np.random.default_rng(seed)`` (the same input gives the same
        statistics); pooled scenes are sampled in proportion to their pixel counts.
    seed : int
        Seed of the subsample.

    Returns
    -------
    BandStats
        ``pixels`` counts every finite pixel (a pixel with any NaN or infinite band is left out).
    """
    if max_pixels < 1:
        raise OptionError("max_pixels", max_pixels, "an integer >= 1 (the most pixels band_stats summarises)")
    parts = [x] if isinstance(x, np.ndarray) else list(x)
    if not parts:
        raise ShapeMismatchError("band_stats: no arrays given; pass an (N, C) or (H, W, C) array or a list of them")
    flats = [_as_pixels(p, f"array {i}") for i, p in enumerate(parts)]
    if len({f.shape[1] for f in flats}) != 1:
        raise BandMismatchError(f"band_stats: pooled arrays have different band counts {[f.shape[1] for f in flats]}")
    rows = [_finite_rows(f) for f in flats]
    offsets = np.cumsum([0] + [r.size for r in rows])
    total = int(offsets[-1])
    if total == 0:
        raise NoDataError("band_stats: no pixel has all its bands finite; there is nothing to summarise")
    chosen = np.arange(total)
    if total > max_pixels:
        chosen = np.sort(np.random.default_rng(seed).choice(total, size=max_pixels, replace=False))
    sample = []
    for flat, r, lo, hi in zip(flats, rows, offsets[:-1], offsets[1:]):
        mine = chosen[(chosen >= lo) & (chosen < hi)] - lo
        sample.append(np.asarray(flat[r[mine]], dtype=np.float64))
    p5, median, p95 = np.percentile(np.concatenate(sample), [5.0, 50.0, 95.0], axis=0)
    return BandStats(median=median, p5=p5, p95=p95, pixels=total)


def shift_factor(train: BandStats, scene: BandStats) -> dict[str, Any]:
    """How far ``scene`` lies from ``train`` (the statistic of the module docstring).

    Returns
    -------
    dict
        ``location`` (training spreads between the typical values), ``scale`` (>= 1,
        the typical factor between the spreads), ``factor`` (``max(scale, 1 + 2 *
        location)``) and ``shifted`` (``factor > SHIFT_THRESHOLD``).
    """
    if train.n_bands != scene.n_bands:
        raise BandMismatchError(f"scene shift: the training statistics have {train.n_bands} bands, "
                                f"the scene's {scene.n_bands}; compare after resampling to the same bands")
    spread_t = train.p95 - train.p5
    largest = float(spread_t.max()) if spread_t.size else 0.0
    eps = _EPS_RELATIVE * largest if largest > 0 else np.finfo(np.float64).tiny
    spread_t = np.maximum(spread_t, eps)
    spread_s = np.maximum(scene.p95 - scene.p5, eps)
    location = float(np.median(np.abs(scene.median - train.median) / spread_t))
    scale = float(np.exp(np.median(np.abs(np.log(spread_s / spread_t)))))
    factor = max(scale, 1.0 + _LOCATION_WEIGHT * location)
    return {"location": location, "scale": scale, "factor": factor, "shifted": bool(factor > SHIFT_THRESHOLD)}


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(repr(str(n)) for n in names)


def shift_message(scene: str, train_scenes: Sequence[str], result: dict[str, Any]) -> str:
    """One warning line naming the scene, the training scenes, the factor and the fix."""
    return (f"scene {str(scene)!r} lies far from the training scenes {_quoted(train_scenes)} after preprocessing: "
            f"shift factor {result['factor']:.3g} (its typical band value is {result['location']:.3g} training "
            f"spreads away, its spread differs {result['scale']:.3g}x; threshold {SHIFT_THRESHOLD:g}), so "
            "its units or value range likely differ (raw integers against reflectance?): declare the scenes' "
            "units, or scale each scene on its own (per-scene or brightness normalization)")


def check_shift(train: BandStats, scene: BandStats, scene_name: str, train_names: Sequence[str]) -> dict[str, Any]:
    """Compare ``scene`` with the training statistics; warn when it is shifted.

    Returns
    -------
    dict
        The JSON record ``metrics.json`` / ``inference.json`` keep: ``factor``,
        ``location``, ``scale``, ``shifted``, ``threshold``, ``scene`` and ``against``
        (the training scene names). A :class:`SceneShiftWarning` is emitted when
        ``shifted`` is true.
    """
    result = shift_factor(train, scene)
    if result["shifted"]:
        warnings.warn(shift_message(scene_name, train_names, result), SceneShiftWarning, stacklevel=2)
    return {"factor": result["factor"], "location": result["location"], "scale": result["scale"],
            "shifted": result["shifted"], "threshold": SHIFT_THRESHOLD, "scene": str(scene_name),
            "against": [str(n) for n in train_names]}


#: pixels :func:`value_level` looks at, at most (a seeded sample of a larger scene)
LEVEL_PIXELS = 16384


def value_level(cube: np.ndarray, seed: int = 0) -> float | None:
    """The typical size of a cube's values, as stored: the median over pixels of the mean absolute band value
    (finite pixels; a seeded sample of :data:`LEVEL_PIXELS` above that). None when no pixel is finite."""
    flat = np.asarray(cube).reshape(-1, cube.shape[-1])
    if flat.shape[0] > LEVEL_PIXELS:
        rows = np.sort(np.random.default_rng(seed).choice(flat.shape[0], LEVEL_PIXELS, replace=False))
        flat = flat[rows]
    means = np.mean(np.abs(flat.astype(np.float64)), axis=1)
    means = means[np.isfinite(means)]
    return None if means.size == 0 else float(np.median(means))
