"""A wavelength-aware network (``anyband``) reads a cube on its own bands: no resampling onto the checkpoint's.

:func:`reads_own_bands` says when that applies (the network reads wavelengths and the cube's
band centres differ from the training ones); :func:`onto_own_bands` then refits the
checkpoint's preprocessing steps on the cube's own pixels (per-band statistics of other bands
cannot be carried over) and puts a copy of the network on the cube's band centres. The cube's
bands must lie inside the trained range (the network refuses others, naming both ranges).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np

from hsi.errors import WavelengthError

__all__ = ["onto_own_bands", "reads_own_bands"]


def reads_own_bands(model: Any, source: Any) -> bool:
    """True when ``model``'s network reads band wavelengths (it was built with them) and ``source`` has band centres
    other than the training ones; a network built without them is one of fixed bands, and the cube is resampled."""
    built_with_them = getattr(model.net, "takes_wavelengths", False) and model.net.wavelengths is not None
    if not built_with_them or source.wavelengths is None or model.wavelengths is None:
        return False  # a fixed-band network, or wavelengths missing on either side
    from hsi.data.sources.bands import same_grid

    return not same_grid(source.wavelengths, model.wavelengths)


def onto_own_bands(model: Any, source: Any, spectra: np.ndarray) -> tuple[Any, dict[str, Any]]:
    """``model`` set for ``source``'s own bands: its preprocessing refitted on ``spectra`` (the cube's sampled pixels,
    no label read), its network a copy set to the bands' centres after that preprocessing; and the record.

    Raises
    ------
    WavelengthError
        The checkpoint removed bands by index (indices of one sensor name other bands of another), or a band lies
        outside the network's trained range.
    """
    from hsi.infer.shift import refit_pipeline

    _check_no_index_removal(model, source.name)
    pipeline, pixels = refit_pipeline(model.pipeline, spectra, source.wavelengths)
    centres = pipeline.wavelengths_out(source.wavelengths)
    net = copy.deepcopy(model.net)
    net.set_bands(centres)
    matched = model.scene_band_stats is not None and net.wavelengths is not None
    if matched:
        pipeline = match_training_scene(pipeline, spectra, centres, model.scene_band_stats, net.wavelengths)
    first, last = float(np.min(centres)), float(np.max(centres))
    record = {"method": "own bands", "bands": int(len(centres)), "range_nm": [round(first, 3), round(last, 3)],
              "trained_range_nm": [round(v, 3) for v in net.trained_range], "preprocessing_fitted_on_pixels": pixels,
              "matched_to_training_scene": matched,
              "note": f"{type(net).__name__} reads the cube's own {len(centres)} bands ({first:.0f}-{last:.0f} nm) "
                      "without resampling; its scaling was refitted on the cube's own pixels"
                      + (" and matched to the training scene's, wavelength by wavelength" if matched else "")}
    fitted = dataclasses.replace(model, net=net, pipeline=pipeline, wavelengths=np.asarray(source.wavelengths),
                                 num_bands_in=int(source.shape[2]), grid_fwhm=None, fit_per_scene=False)
    return fitted, record


def match_training_scene(pipeline: Any, spectra: np.ndarray, centres: np.ndarray, trained: dict[str, Any],
                         trained_centres: Any) -> Any:
    """``pipeline`` followed by a per-band affine step that gives the cube's pixels the training scene's median and
    5-95 % spread at each band's wavelength (interpolated between the training bands).

    The refitted scaling describes the cube's own pixels; training scaled its scene by the training pixels, whose
    statistics differ from the whole scene's (the classes in between). Matching the whole cube to the whole
    training scene, band by band, puts the cube's values where training's were.
    """
    from hsi.preprocess import Pipeline
    from hsi.preprocess.shift import BandStats, band_stats

    finite = np.all(np.isfinite(spectra), axis=1)
    own = band_stats(pipeline.transform(spectra[finite][:, None, :])[:, 0, :])
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


def _check_no_index_removal(model: Any, name: str) -> None:
    """Refuse a checkpoint whose preprocessing removes bands by index: on another sensor they are other bands."""
    for step in model.pipeline.steps:
        if step.get_params().get("indices") is not None:
            raise WavelengthError(
                f"cube {name}: checkpoint {model.source} removes bands by index ({list(step.get_params()['indices'])}), "
                "which name other bands on this cube's sensor; train without --remove-bands, or give the cube on the "
                "checkpoint's own bands")
