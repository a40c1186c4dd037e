"""The scene-shift check before inference: does a new cube look like the checkpoint's training data?

:func:`check_new_scene` samples windows spread over the cube (on the checkpoint's bands,
resampled when need be), compares their typical raw value and units with the training
scenes' (:func:`hsi.data.sources.shift.raw_check`), and their band statistics after the
checkpoint's fitted preprocessing with the training pixels'
(:func:`hsi.preprocess.shift.check_shift`); each finding is one warning line
(:class:`~hsi.errors.SceneShiftWarning`), and the record goes into the maps' manifest.
A checkpoint written before these statistics existed is not checked (said in the record).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_new_scene", "fit_on_scene", "refit_pipeline", "sample_spectra"]

#: windows sampled per side (a grid of at most SIDE x SIDE windows) and their size in pixels
SIDE = 6
WINDOW = 48


def _starts(length: int) -> list[int]:
    """Window origins spread evenly along an axis of ``length`` pixels."""
    if length <= WINDOW * SIDE:
        return list(range(0, length, WINDOW))
    return [int(v) for v in np.linspace(0, length - WINDOW, SIDE).round()]


def sample_spectra(source: Any) -> np.ndarray:
    """``(N, C)`` float32 spectra of windows spread over ``source`` (the whole cube when it is small)."""
    height, width = source.shape[:2]
    parts = []
    for r in _starts(height):
        for c in _starts(width):
            window = source.read_window(slice(r, min(r + WINDOW, height)), slice(c, min(c + WINDOW, width)))
            parts.append(np.asarray(window, dtype=np.float32).reshape(-1, window.shape[-1]))
    return np.concatenate(parts)


def fit_on_scene(model: Any, source: Any, spectra: np.ndarray) -> tuple[Any, dict[str, Any] | None]:
    """``model`` with its preprocessing refitted on ``source``'s own pixels when the checkpoint scaled every scene
    on its own (:attr:`~hsi.infer.checkpoint.InferenceModel.fit_per_scene`), and what was done; else as it is.

    The same steps as the checkpoint's pipeline, fitted (unsupervised: no label is read) on the
    finite rows of ``spectra`` (:func:`sample_spectra` of the scene, windows spread over all of it).
    """
    import dataclasses

    if not model.fit_per_scene:
        return model, None
    fresh, pixels = refit_pipeline(model.pipeline, spectra, source.wavelengths)
    note = {"fitted_on": "this scene's own pixels (unsupervised, as the checkpoint scaled every scene)",
            "pixels": pixels}
    return dataclasses.replace(model, pipeline=fresh, fit_per_scene=False), note


def refit_pipeline(pipeline: Any, spectra: np.ndarray, wavelengths: Any) -> tuple[Any, int]:
    """The steps of ``pipeline``, unfitted, fitted on the finite rows of ``spectra`` (no label read); and their count."""
    from sklearn.base import clone

    spectra = spectra[np.all(np.isfinite(spectra), axis=1)]
    fresh = clone(pipeline)  # the same steps, unfitted (scikit-learn clones the steps of the hsi Pipeline)
    fresh.fit(spectra[:, None, :], None, wavelengths=wavelengths)
    return fresh, int(spectra.shape[0])


def check_new_scene(model: Any, source: Any, raw: np.ndarray, per_band: bool = True) -> dict[str, Any]:
    """The raw-value and after-preprocessing checks of ``source`` (its :func:`sample_spectra` ``raw``) against
    ``model``'s training data (warned); ``per_band=False`` (a cube on other bands than training's) skips the
    second, whose statistics are band by band."""
    from hsi.data.sources.shift import raw_check
    from hsi.preprocess.shift import BandStats, band_stats, check_shift, value_level

    if model.band_stats is None or model.training_values is None:
        return {"checked": False, "note": "the checkpoint holds no training statistics (written by an older hsi)"}
    finite = np.all(np.isfinite(raw), axis=1)
    fact = {"name": str(source.name), "units": getattr(source, "units", None), "value_level": value_level(raw)}
    values = model.training_values
    against = [{"name": ", ".join(values["names"]), "units": {"kind": kind}, "value_level": values["value_level"]}
               for kind in (values["units"] or ["unknown"])]
    record = {"checked": True, "raw": raw_check(fact, against)}
    if finite.any() and per_band:
        x = model.pipeline.transform(raw[finite][:, None, :])[:, 0, :]
        record["preprocessed"] = check_shift(BandStats.from_dict(model.band_stats), band_stats(x), str(source.name),
                                             list(values["names"]))
    return record
