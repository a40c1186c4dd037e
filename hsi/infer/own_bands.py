"""A wavelength-aware network (``anyband``) reads a cube on its own bands: no resampling onto the checkpoint's.

:func:`reads_own_bands` says when that applies (the network reads wavelengths and the cube's
band centres differ from the training ones); :func:`onto_own_bands` then refits the
checkpoint's preprocessing steps on the cube's own pixels (per-band statistics of other bands
cannot be carried over) and puts a copy of the network on the cube's band centres. Bands beyond
the network's trained range are dropped (said on the ``bands:`` line); a cube whose remaining
bands span less than :data:`MIN_COVERAGE` of the trained range is refused (measured, the network
does not hold up on part of its range). A checkpoint trained with ``wavelength_range``
reads only the cube's bands within that range: a cube whose bands there are the training ones is
resampled (exactly: they are picked) instead.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np

from hsi.errors import WavelengthError

__all__ = ["MIN_COVERAGE", "onto_own_bands", "reads_own_bands"]


def reads_own_bands(model: Any, source: Any) -> bool:
    """True when ``model``'s network reads band wavelengths (it was built with them) and ``source`` has band centres
    other than the training ones; a network built without them is one of fixed bands, and the cube is resampled."""
    built_with_them = getattr(model.net, "takes_wavelengths", False) and model.net.wavelengths is not None
    if not built_with_them or source.wavelengths is None or model.wavelengths is None:
        return False  # a fixed-band network, or wavelengths missing on either side
    from hsi.data.sources.bands import same_grid

    wl = np.asarray(source.wavelengths, dtype=np.float64)
    return not same_grid(wl[_in_range(model, wl)], model.wavelengths)


def _in_range(model: Any, wavelengths: np.ndarray) -> np.ndarray:
    """(C,) bool: the bands of a cube on ``wavelengths`` within the checkpoint's ``wavelength_range`` (all: none)."""
    from hsi.io.bands import in_wavelength_range

    wavelength_range = (getattr(model, "data_arguments", None) or {}).get("wavelength_range")
    if wavelength_range is None:
        return np.ones(wavelengths.shape, dtype=bool)
    return in_wavelength_range(wavelengths, wavelength_range)


#: the least share of its trained range a cube's bands must span for a wavelength-aware network to read it; below,
#: it is refused. Measured (``benchmarks/bench_anyband_coverage.py``): an anyband checkpoint of 99.7 % OA on its
#: own sensor's parcels gave 84 % OA on the same cube cut to 95 % of its range, 29-70 % at 90 %, 24 % at 80 %,
#: 12-33 % at 40-60 %; across sensors (``bench_cross_sensor.py``, variant ``infer``) cubes spanning 96-97 % of the
#: range lost 6.8-11.8 points against the same parcels seen by the training sensor, full ones 0.6-2.6
MIN_COVERAGE = 0.99


def _trained_window(net: Any) -> tuple[float, float]:
    """The band centres a network reads: its trained range widened by half a trained band spacing each side (the
    slack :meth:`hsi.models.anyband.AnyBandNet.set_bands` allows)."""
    first, last = net.trained_range
    slack = 0.5 * (last - first) / max(len(net.wavelengths) - 1, 1)
    return first - slack, last + slack


def _band_cut(model: Any, source: Any) -> tuple[Any, dict[str, Any]]:
    """The checkpoint's pipeline, led by the removal of the cube's bands outside its ``wavelength_range`` and beyond
    the network's trained range; and what was cut (``dropped``, ``coverage`` of the trained range).

    Raises
    ------
    WavelengthError
        No band is left, or the kept bands span less than :data:`MIN_COVERAGE` of the trained range.
    """
    from hsi.preprocess import Pipeline, RemoveBands

    wl = np.asarray(source.wavelengths, dtype=np.float64)
    inside = _in_range(model, wl)
    if not inside.any():
        lo, hi = (float(v) for v in model.data_arguments["wavelength_range"])
        raise WavelengthError(f"cube {source.name}: its bands lie at {wl.min():.2f}-{wl.max():.2f} nm, none within "
                              f"{lo:g}-{hi:g} nm, the wavelength range checkpoint {model.source} was trained on")
    low, high = _trained_window(model.net)
    readable = inside & (wl >= low) & (wl <= high)
    first, last = model.net.trained_range
    kept = wl[readable]
    share = 0.0 if kept.size < 2 else (min(kept.max(), last) - max(kept.min(), first)) / max(last - first, 1e-9)
    if share < MIN_COVERAGE:
        span = f"{kept.min():.0f}-{kept.max():.0f} nm" if kept.size else "no band"
        raise WavelengthError(
            f"cube {source.name}: its bands within the {first:.0f}-{last:.0f} nm that checkpoint {model.source} was "
            f"trained on span {span}, {100 * share:.0f} % of that range; {type(model.net).__name__} reads a cube "
            f"spanning at least {100 * MIN_COVERAGE:.0f} %: train it on the range the cube covers (hsi train ... "
            f"--wavelength-range {max(wl.min(), first):.0f} {min(wl.max(), last):.0f})")
    cut = {"dropped": int(inside.sum() - readable.sum()), "coverage": round(float(share), 3)}
    outside = np.flatnonzero(~readable)
    if outside.size == 0:
        return model.pipeline, cut
    return Pipeline([RemoveBands(indices=outside.tolist()), *model.pipeline.steps]), cut


def _cut_note(cut: dict[str, Any], trained: tuple[float, float]) -> str:
    """What the cut left out, for the ``bands:`` line (empty when nothing)."""
    if not cut["dropped"]:
        return ""
    return f"; {cut['dropped']} band(s) beyond the trained {trained[0]:.0f}-{trained[1]:.0f} nm dropped"


def onto_own_bands(model: Any, source: Any, spectra: np.ndarray) -> tuple[Any, dict[str, Any]]:
    """``model`` set for ``source``'s own bands: its preprocessing refitted on ``spectra`` (the cube's sampled pixels,
    no label read), its network a copy set to the bands' centres after that preprocessing; and the record.

    Raises
    ------
    WavelengthError
        The checkpoint removed bands by index (indices of one sensor name other bands of another), or a band lies
        outside the network's trained range.
        Or the checkpoint was trained on a ``wavelength_range`` that holds none of the cube's bands.
    """
    from hsi.infer.shift import match_training_scene, refit_pipeline

    _check_no_index_removal(model, source.name)
    cutting, cut = _band_cut(model, source)
    pipeline, pixels = refit_pipeline(cutting, spectra, source.wavelengths)
    centres = pipeline.wavelengths_out(source.wavelengths)
    net = copy.deepcopy(model.net)
    net.set_bands(centres)
    matched = model.scene_band_stats is not None and net.wavelengths is not None
    if matched:
        pipeline = match_training_scene(pipeline, spectra, centres, model.scene_band_stats, net.wavelengths)
    first, last = float(np.min(centres)), float(np.max(centres))
    record = {"method": "own bands", "bands": int(len(centres)), "range_nm": [round(first, 3), round(last, 3)],
              "trained_range_nm": [round(v, 3) for v in net.trained_range], "preprocessing_fitted_on_pixels": pixels,
              "matched_to_training_scene": matched, "dropped_beyond_trained_range": cut["dropped"],
              "coverage_of_trained_range": cut["coverage"],
              "note": f"{type(net).__name__} reads the cube's own {len(centres)} bands ({first:.0f}-{last:.0f} nm) "
                      "without resampling; its scaling was refitted on the cube's own pixels"
                      + (" and matched to the training scene's, wavelength by wavelength" if matched else "")
                      + _cut_note(cut, net.trained_range)}
    fitted = dataclasses.replace(model, net=net, pipeline=pipeline, wavelengths=np.asarray(source.wavelengths),
                                 num_bands_in=int(source.shape[2]), grid_fwhm=None, fit_per_scene=False)
    return fitted, record


def _check_no_index_removal(model: Any, name: str) -> None:
    """Refuse a checkpoint whose preprocessing removes bands by index: on another sensor they are other bands."""
    for step in model.pipeline.steps:
        if step.get_params().get("indices") is not None:
            raise WavelengthError(
                f"cube {name}: checkpoint {model.source} removes bands by index ({list(step.get_params()['indices'])}), "
                "which name other bands on this cube's sensor; train without --remove-bands, or give the cube on the "
                "checkpoint's own bands")
