"""The scene-shift check before inference: does a new cube look like the checkpoint's training data?

:func:`check_new_scene` samples windows spread over the cube (on the checkpoint's bands,
resampled when need be), compares their typical raw value and units with the training
scenes' (:func:`hsi.data.sources.shift.raw_check`), and their band statistics after the
checkpoint's fitted preprocessing with the training pixels'
(:func:`hsi.preprocess.shift.check_shift`); each finding is one warning line
(:class:`~hsi.errors.SceneShiftWarning`), and the record goes into the maps' manifest.
A checkpoint written before these statistics existed is not checked (said in the record).

What the checks cost stays small next to the tile pass. The windows are read once, when a check
or the per-scene fit first asks for them (:class:`SceneSample`: a checkpoint that holds no
training statistics and scales no scene on its own reads no pixel), straight into one array of
the sample's size (:func:`sample_spectra`). The after-preprocessing statistics are computed on a
seeded subsample of :data:`CHECK_PIXELS` of the sampled pixels, and only those are passed
through the checkpoint's preprocessing (:func:`preprocessed_stats`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CHECK_PIXELS", "MATCH_PIXELS", "SceneSample", "affine_step", "check_new_scene", "finite_rows",
           "fit_on_scene", "match_scene_stats", "match_training_scene", "preprocessed_stats", "raw_differs",
           "refit_pipeline", "sample_spectra", "scene_label"]

#: pixels of the cube's sample its matched statistics describe, at most (band_stats' own default: the affine
#: step is the one computed from every sampled pixel's transform before)
MATCH_PIXELS = 65536

#: windows sampled per side (a grid of at most SIDE x SIDE windows) and their size in pixels
SIDE = 6
WINDOW = 48
#: sampled pixels the after-preprocessing statistics of :func:`check_new_scene` describe, at most (a seeded subsample;
#: as many as :func:`hsi.preprocess.shift.value_level` looks at; why it is enough: :func:`preprocessed_stats`)
CHECK_PIXELS = 16384
#: rows per pass when finding the finite ones (no mask of the whole sample's size)
_CHUNK = 1 << 14


def _starts(length: int) -> list[int]:
    """Window origins spread evenly along an axis of ``length`` pixels."""
    if length <= WINDOW * SIDE:
        return list(range(0, length, WINDOW))
    return [int(v) for v in np.linspace(0, length - WINDOW, SIDE).round()]


def sample_spectra(source: Any) -> np.ndarray:
    """``(N, C)`` float32 spectra of windows spread over ``source`` (the whole cube when it is small).

    The windows' pixels follow one another, each window's in row-major order. Each window is read
    straight into its rows of the one array returned (``read_into`` where the source has it: a
    ``.npy`` file by ``preadv``, an HDF5 file by ``read_direct``; else its ``read_window`` copied
    in), so the sample's peak memory is its own size: gathering the windows in a list and
    concatenating them held it twice (2 x 66 MB for the 36 windows of 48 x 48 x 200 of a large cube).
    """
    from hsi.infer.sources import can_read_into

    height, width, bands = source.shape[:3]
    boxes = [(slice(r, min(r + WINDOW, height)), slice(c, min(c + WINDOW, width)))
             for r in _starts(height) for c in _starts(width)]
    sizes = [(rows.stop - rows.start, cols.stop - cols.start) for rows, cols in boxes]
    out = np.empty((sum(h * w for h, w in sizes), bands), dtype=np.float32)
    start = 0
    for (rows, cols), (h, w) in zip(boxes, sizes):
        window = out[start:start + h * w].reshape(h, w, bands)  # a view: this window's rows of the sample
        if can_read_into(source, window):
            source.read_into(rows, cols, window, (slice(0, h), slice(0, w)))
        else:
            window[...] = source.read_window(rows, cols)
        start += h * w
    return out


class SceneSample:
    """The :func:`sample_spectra` of ``source``, read the first time :attr:`spectra` is asked for, then kept.

    The per-scene fit and the checks share one read, and a checkpoint that needs neither (no
    training statistics, no per-scene scaling: each of :func:`fit_on_scene`, :func:`raw_differs`
    and :func:`check_new_scene` returns before asking) has no pixel read before the tile pass.

    Parameters
    ----------
    source : SceneSource
        The cube as the checks and the fit see it (on the checkpoint's bands).
    """

    def __init__(self, source: Any) -> None:
        self.source = source
        self._spectra: np.ndarray | None = None
        self._value_level: tuple[float | None] | None = None  # (level,) once computed: the level itself may be None

    @property
    def spectra(self) -> np.ndarray:
        """``(N, C)`` float32: the sampled spectra (read now if they were not yet)."""
        if self._spectra is None:
            self._spectra = sample_spectra(self.source)
        return self._spectra

    @property
    def value_level(self) -> float | None:
        """:func:`hsi.preprocess.shift.value_level` of the spectra, computed once (the refit decision and the raw
        check both ask for it)."""
        if self._value_level is None:
            from hsi.preprocess.shift import value_level

            self._value_level = (value_level(self.spectra),)
        return self._value_level[0]


def _as_spectra(sample: np.ndarray | SceneSample) -> np.ndarray:
    """The ``(N, C)`` spectra of ``sample`` (read now if it is a :class:`SceneSample` not yet read)."""
    return sample.spectra if isinstance(sample, SceneSample) else np.asarray(sample)


def finite_rows(spectra: np.ndarray) -> np.ndarray:
    """Ascending indices of the rows of ``(N, C)`` ``spectra`` with every band finite (found in chunks of rows)."""
    keep = [start + np.flatnonzero(np.isfinite(spectra[start:start + _CHUNK]).all(axis=1))
            for start in range(0, spectra.shape[0], _CHUNK)]
    return np.concatenate(keep) if keep else np.zeros(0, dtype=np.intp)


def _finite_only(spectra: np.ndarray) -> np.ndarray:
    """The rows of ``spectra`` with every band finite: ``spectra`` itself when they all are (no copy)."""
    rows = finite_rows(spectra)
    return spectra if rows.size == spectra.shape[0] else spectra[rows]


def preprocessed_stats(pipeline: Any, spectra: np.ndarray, max_pixels: int = CHECK_PIXELS, seed: int = 0) -> Any:
    """:func:`hsi.preprocess.shift.band_stats` of the finite rows of ``spectra`` after ``pipeline``, computed on a
    seeded subsample of at most ``max_pixels`` of them; None when no row is finite.

    The subsample is drawn among the raw finite rows, as ``band_stats`` would draw it among the
    transformed ones, and only it is transformed: the fitted steps work pixel by pixel, so the
    statistics are those of transforming every row and subsampling after (unless a step turns a
    finite pixel into a non-finite one), without transforming the rows left out. ``pixels`` of the
    result counts the subsample.

    Why :data:`CHECK_PIXELS` (16,384) pixels are enough for the check: the 5th percentile of a
    band estimated from ``n`` independent pixels has a standard error of ``sqrt(0.05 * 0.95 / n)``
    in rank, 0.17 percentile points at that ``n`` (the median 0.39), which moves it by a small
    fraction of the 5-95 % spread the shift factor divides by, while the threshold (5) lies far
    above the factors of honest pairs (1.04-3.74, :mod:`hsi.preprocess.shift`); neighbouring
    pixels of a window are alike, so leaving some out loses less than their count says. Measured on
    82,944 pixels of a 512 x 512 synthetic scene against another seed's: factor 1.162 from 65,536
    pixels, 1.152-1.164 from 16,384 (five seeds); scaled by 10, 21.32 and 21.22-21.35. The
    percentiles of the 65,536 pixels ``band_stats`` keeps by default took about 0.25 s on 2 cores
    (a third of a 256 x 256 spectral1d inference), those of 16,384 about 0.06 s.
    """
    from hsi.preprocess.shift import band_stats

    rows = finite_rows(spectra)
    if rows.size == 0:
        return None
    if rows.size > max_pixels:
        rows = rows[np.sort(np.random.default_rng(seed).choice(rows.size, size=max_pixels, replace=False))]
    x = pipeline.transform(spectra[rows][:, None, :])[:, 0, :]
    return band_stats(x, max_pixels=max_pixels, seed=seed)


def fit_on_scene(model: Any, source: Any, spectra: np.ndarray | SceneSample, reason: str | None = None
                 ) -> tuple[Any, dict[str, Any] | None]:
    """``model`` with its preprocessing refitted on ``source``'s own pixels, and what was done; else as it is.

    Refitted when the checkpoint scaled every scene on its own
    (:attr:`~hsi.infer.checkpoint.InferenceModel.fit_per_scene`), or when ``reason`` says why
    this cube needs it (other units or value range than training's, or asked for): the same
    steps as the checkpoint's pipeline, fitted (unsupervised: no label is read) on the finite
    rows of ``spectra`` (:func:`sample_spectra` of the scene, windows spread over all of it; a
    :class:`SceneSample` is read only when the fit is made).
    """
    import dataclasses

    if not model.fit_per_scene and reason is None:
        return model, None
    pixels_read = _as_spectra(spectra)
    fresh, pixels = refit_pipeline(model.pipeline, pixels_read, source.wavelengths)
    why = reason or "as the checkpoint scaled every scene"
    note = {"fitted_on": f"this scene's own pixels (unsupervised, {why})", "pixels": pixels}
    if not model.fit_per_scene and model.scene_band_stats is not None:
        fresh = match_scene_stats(fresh, pixels_read, model.scene_band_stats, source.wavelengths)
        note["matched_to_training_scene"] = True
    return dataclasses.replace(model, pipeline=fresh, fit_per_scene=False), note


def match_scene_stats(pipeline: Any, spectra: np.ndarray, scene_stats: dict[str, Any], wavelengths: Any) -> Any:
    """``pipeline`` (refitted on the cube) followed by a per-band affine step giving the cube's pixels the training
    scene's median and 5-95 % spread at each output band (:func:`match_training_scene`, band by
    band: the cube is on the checkpoint's bands).

    Why: a scaling refitted on a whole new scene describes all its pixels, while the checkpoint's was fitted on
    its training pixels, whose statistics differ (the classes in between); without the match the network meets
    values shifted from anything it saw (``benchmarks/bench_cross_sensor.py``, variants ``infer``).
    """
    n_out = len(scene_stats["median"])
    centres = pipeline.wavelengths_out(wavelengths)
    if centres is None or len(centres) != n_out:
        centres = np.arange(n_out, dtype=np.float64)  # by position (PCA components, or bands without wavelengths)
    return match_training_scene(pipeline, spectra, centres, scene_stats, centres)


def match_training_scene(pipeline: Any, spectra: np.ndarray, centres: np.ndarray, trained: dict[str, Any],
                         trained_centres: Any) -> Any:
    """``pipeline`` followed by a per-band affine step that gives the cube's pixels the training scene's median and
    5-95 % spread at each band's wavelength (interpolated between the training bands).

    The refitted scaling describes the cube's own pixels; training scaled its scene by the training pixels, whose
    statistics differ from the whole scene's (the classes in between). Matching the whole cube to the whole
    training scene, band by band, puts the cube's values where training's were.

    The cube's statistics are those of :func:`hsi.preprocess.shift.band_stats` (a seeded subsample of
    :data:`MATCH_PIXELS` finite pixels), with only the subsample passed through ``pipeline``
    (:func:`preprocessed_stats`). ``spectra`` holds a finite pixel (the refit before it needs one).
    """
    from hsi.preprocess import Pipeline
    from hsi.preprocess.shift import BandStats

    own = preprocessed_stats(pipeline, spectra, max_pixels=MATCH_PIXELS)
    scene = BandStats.from_dict(trained)
    order = np.argsort(np.asarray(trained_centres, dtype=np.float64))
    at = np.asarray(trained_centres, dtype=np.float64)[order]
    median = np.interp(centres, at, scene.median[order])
    spread = np.interp(centres, at, (scene.p95 - scene.p5)[order])
    own_spread = own.p95 - own.p5
    usable = (own_spread > 0) & (spread > 0)  # a constant band keeps its refitted values
    gain = np.where(usable, spread / np.where(usable, own_spread, 1.0), 1.0)
    shift = np.where(usable, median - gain * own.median, 0.0)
    matched = Pipeline([*pipeline.steps, affine_step(gain, shift)])
    matched.n_bands_in_, matched.n_bands_out_ = pipeline.n_bands_in_, pipeline.n_bands_out_
    return matched


def affine_step(gain: np.ndarray, shift: np.ndarray) -> Any:
    """A fitted :class:`~hsi.preprocess.scaling.PerBandStandardize` computing ``gain * x + shift`` per band."""
    from hsi.preprocess.scaling import PerBandStandardize

    step = PerBandStandardize()
    gain = np.asarray(gain, dtype=np.float64)
    step.n_bands_in_ = step.n_bands_out_ = int(gain.size)
    step.n_samples_seen_ = 0
    step.scale_ = 1.0 / gain  # (x - mean_) / scale_ = gain * x + shift
    step.var_ = step.scale_ ** 2
    step.mean_ = -np.asarray(shift, dtype=np.float64) / gain
    return step


def refit_pipeline(pipeline: Any, spectra: np.ndarray, wavelengths: Any) -> tuple[Any, int]:
    """The steps of ``pipeline``, unfitted, fitted on the finite rows of ``spectra`` (no label read); and their count."""
    from sklearn.base import clone

    spectra = _finite_only(spectra)
    fresh = clone(pipeline)  # the same steps, unfitted (scikit-learn clones the steps of the hsi Pipeline)
    fresh.fit(spectra[:, None, :], None, wavelengths=wavelengths)
    return fresh, int(spectra.shape[0])


def scene_label(source: Any) -> str:
    """The scene as the checks name it: a registry scene's name (its source is called "scene 'NAME'"), else the
    source's name (a file path)."""
    name = str(source.name)
    return name[len("scene "):].strip("'") if name.startswith("scene '") else name


def _raw_facts(model: Any, source: Any, raw: np.ndarray | SceneSample) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cube's raw-value facts and the training scenes' (:func:`hsi.data.sources.shift.raw_check`'s arguments)."""
    from hsi.preprocess.shift import value_level

    level = raw.value_level if isinstance(raw, SceneSample) else value_level(raw)
    fact = {"name": scene_label(source), "units": getattr(source, "units", None), "value_level": level}
    values = model.training_values
    against = [{"name": ", ".join(values["names"]), "units": {"kind": kind}, "value_level": values["value_level"]}
               for kind in (values["units"] or ["unknown"])]
    return fact, against


def raw_differs(model: Any, source: Any, raw: np.ndarray | SceneSample) -> bool:
    """Whether the cube's units or typical raw value differ from the training scenes' (the raw check flags it);
    False for a checkpoint without training statistics (a :class:`SceneSample` is then not read)."""
    from hsi.data.sources.shift import raw_check

    if model.training_values is None:
        return False
    return bool(raw_check(*_raw_facts(model, source, raw))["flagged"])


def check_new_scene(model: Any, source: Any, raw: np.ndarray | SceneSample, per_band: bool = True,
                    advice: str | None = None) -> dict[str, Any]:
    """The raw-value and after-preprocessing checks of ``source`` (its :func:`sample_spectra` ``raw``) against
    ``model``'s training data (warned, the raw one ending in ``advice``: what inference did about it);
    ``per_band=False`` (a cube on other bands than training's) skips the second, whose statistics are band by
    band (:func:`preprocessed_stats`: a subsample of the sampled pixels). A :class:`SceneSample` is read only
    when the checkpoint holds the training statistics."""
    from hsi.data.sources.shift import raw_check
    from hsi.preprocess.shift import BandStats, check_shift

    if model.band_stats is None or model.training_values is None:
        return {"checked": False, "note": "the checkpoint holds no training statistics (written by an older hsi)"}
    values = model.training_values
    fact, against = _raw_facts(model, source, raw)
    record = {"checked": True, "raw": raw_check(fact, against, **({"advice": advice} if advice else {}))}
    scene = preprocessed_stats(model.pipeline, _as_spectra(raw)) if per_band else None
    if scene is not None:
        record["preprocessed"] = check_shift(BandStats.from_dict(model.band_stats), scene, str(source.name),
                                             list(values["names"]))
    return record
